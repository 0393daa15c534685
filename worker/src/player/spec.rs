//! Player specs: plain values naming a player, parsed from the command line
//! (`cmd=stockfish,option.Hash=16`) and parameter files (`name=value` lines or JSON).

use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::board8::net_file::{self, LoadedNet};
use engine::params::Params;
use engine::params_file::{self, Entry};

use crate::error::WorkerError;

/// Our engine in process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalSpec {
    /// Name in PGN.
    pub name: String,
    /// Evaluation weights.
    pub params: Params,
    /// Transposition table size in MiB.
    pub hash_mib: usize,
    /// The network it evaluates with instead of the game's built-in one (`net=FILE`).
    pub network: Option<LoadedNet>,
}

/// A UCI engine process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciSpec {
    /// Name in PGN.
    pub name: String,
    /// The program.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory (the worker's own when `None`).
    pub dir: Option<PathBuf>,
    /// `setoption` pairs sent after `uci`, in order.
    pub options: Vec<(String, String)>,
    /// How long `uci` → `uciok` and `isready` → `readyok` may take.
    pub startup_timeout: Duration,
    /// How long a move may take under node or depth limits before the engine counts as hung;
    /// under time limits, the grace after the deadline before the process is killed.
    pub move_timeout: Duration,
}

impl UciSpec {
    /// A spec with default timeouts (10 s to start, as fastchess; 60 s per untimed move).
    pub fn new(name: impl Into<String>, command: impl Into<PathBuf>) -> Self {
        UciSpec {
            name: name.into(),
            command: command.into(),
            args: Vec::new(),
            dir: None,
            options: Vec::new(),
            startup_timeout: Duration::from_secs(10),
            move_timeout: Duration::from_secs(60),
        }
    }
}

/// Who plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// Our engine in process (boxed: its parameters are most of its size, hundreds of bytes
    /// that a UCI spec would otherwise carry too).
    Internal(Box<InternalSpec>),
    /// A UCI engine process.
    Uci(UciSpec),
}

/// The default table size of an in-process player, the UCI engine's default.
pub const DEFAULT_HASH_MIB: usize = engine::uci::DEFAULT_HASH_MIB;

impl PlayerSpec {
    /// Our engine with default parameters.
    pub fn internal(name: impl Into<String>) -> Self {
        PlayerSpec::internal_with_network(name, None)
    }

    /// Our engine with default parameters, evaluating with `network` (its game's built-in
    /// network with `None`).
    pub fn internal_with_network(name: impl Into<String>, network: Option<LoadedNet>) -> Self {
        PlayerSpec::Internal(Box::new(InternalSpec {
            name: name.into(),
            params: Params::default(),
            hash_mib: DEFAULT_HASH_MIB,
            network,
        }))
    }

    /// Whether both are our engine in process with the same parameters and network: at a
    /// fixed node count or depth its search is deterministic, so the two play the same move
    /// in the same position (the table's size does not tell them apart in practice: it moves
    /// the odd entry, rarely the move).
    pub fn same_engine(&self, other: &PlayerSpec) -> bool {
        match (self, other) {
            (PlayerSpec::Internal(a), PlayerSpec::Internal(b)) => {
                a.params == b.params && a.network == b.network
            }
            _ => false,
        }
    }

    /// The player's name.
    pub fn name(&self) -> &str {
        match self {
            PlayerSpec::Internal(i) => &i.name,
            PlayerSpec::Uci(u) => &u.name,
        }
    }

    /// Renames the player.
    pub fn set_name(&mut self, name: String) {
        match self {
            PlayerSpec::Internal(i) => i.name = name,
            PlayerSpec::Uci(u) => u.name = name,
        }
    }

    /// Applies `name=value` parameter assignments: checked against our engine's parameters for
    /// an in-process player, sent as `setoption` for a UCI engine.
    pub fn apply_params(&mut self, source: &Path, entries: &[Entry]) -> Result<(), WorkerError> {
        match self {
            PlayerSpec::Internal(i) => {
                for e in entries {
                    i.params.set_text(&e.name, &e.value).map_err(|err| {
                        WorkerError::ParamsFile {
                            path: source.to_path_buf(),
                            line: e.line,
                            detail: err.to_string(),
                        }
                    })?;
                }
            }
            PlayerSpec::Uci(u) => {
                u.options
                    .extend(entries.iter().map(|e| (e.name.clone(), e.value.clone())));
            }
        }
        Ok(())
    }

    /// Parses an engine spec: comma-separated `key=value` items.
    ///
    /// * `cmd=PATH` makes a UCI player (without it the player is our engine in process);
    /// * `arg=X` (repeatable) or `args=X Y Z`, `dir=PATH`, `option.NAME=VALUE`,
    ///   `startup-timeout=SECONDS`, `move-timeout=SECONDS` for a UCI player;
    /// * `hash=MIB` (the `Hash` option of a UCI player), `params=FILE`, `name=NAME` for both;
    /// * `net=FILE`: a network file (`engine export-net`, `engine tune-net --out-net`) our
    ///   engine evaluates with, read and checked here; for a UCI player the `EvalFile` option
    ///   (which our engine and Stockfish read).
    ///
    /// `internal` alone is our engine with default parameters.
    pub fn parse(text: &str, default_name: &str) -> Result<PlayerSpec, WorkerError> {
        let bad = |detail: String| WorkerError::EngineSpec {
            spec: text.to_string(),
            detail,
        };
        let mut name = None;
        let mut cmd = None;
        let mut args = Vec::new();
        let mut dir = None;
        let mut options = Vec::new();
        let mut hash = None;
        let mut params = None;
        let mut net = None;
        let mut startup = None;
        let mut move_timeout = None;
        let secs = |key: &str, v: &str| -> Result<Duration, WorkerError> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e6)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| bad(format!("{key} {v:?} is not a number of seconds")))
        };
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item == "internal" {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(bad(format!("item {item:?} is not key=value")));
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "cmd" | "command" => cmd = Some(PathBuf::from(value)),
                "name" => name = Some(value.to_string()),
                "arg" => args.push(value.to_string()),
                "args" => args.extend(value.split_whitespace().map(str::to_string)),
                "dir" => dir = Some(PathBuf::from(value)),
                "hash" => {
                    let mib = value
                        .parse::<usize>()
                        .ok()
                        .filter(|m| (1..=65536).contains(m))
                        .ok_or_else(|| bad(format!("hash {value:?} is not a size in MiB")))?;
                    hash = Some(mib);
                }
                "params" => params = Some(PathBuf::from(value)),
                "net" => net = Some(PathBuf::from(value)),
                "startup-timeout" => startup = Some(secs(key, value)?),
                "move-timeout" | "timeout" => move_timeout = Some(secs(key, value)?),
                k if k.starts_with("option.") && k.len() > "option.".len() => {
                    options.push((k["option.".len()..].to_string(), value.to_string()));
                }
                other => {
                    return Err(bad(format!(
                        "unknown key {other:?} (expected cmd, name, arg, args, dir, hash, params, \
                         net, option.NAME, startup-timeout, move-timeout)"
                    )))
                }
            }
        }
        let mut spec = match cmd {
            Some(command) => {
                if command.as_os_str().is_empty() {
                    return Err(bad("cmd is empty".into()));
                }
                let default = command
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| default_name.to_string());
                let mut u = UciSpec::new(name.clone().unwrap_or(default), command);
                u.args = args;
                u.dir = dir;
                if let Some(h) = hash {
                    u.options.push(("Hash".into(), h.to_string()));
                }
                if let Some(n) = &net {
                    u.options
                        .push(("EvalFile".into(), n.to_string_lossy().into_owned()));
                }
                u.options.extend(options);
                if let Some(s) = startup {
                    u.startup_timeout = s;
                }
                if let Some(m) = move_timeout {
                    u.move_timeout = m;
                }
                PlayerSpec::Uci(u)
            }
            None => {
                if !args.is_empty() || dir.is_some() || !options.is_empty() {
                    return Err(bad(
                        "arg, args, dir and option.* need cmd= (a UCI engine process)".into(),
                    ));
                }
                let name = name.clone().unwrap_or_else(|| default_name.to_string());
                let network = match &net {
                    Some(path) => {
                        Some(net_file::load(path).map_err(|source| WorkerError::Network {
                            player: name.clone(),
                            source,
                        })?)
                    }
                    None => None,
                };
                PlayerSpec::Internal(Box::new(InternalSpec {
                    name,
                    params: Params::default(),
                    hash_mib: hash.unwrap_or(DEFAULT_HASH_MIB),
                    network,
                }))
            }
        };
        if let Some(path) = params {
            let entries = read_params_file(&path)?;
            spec.apply_params(&path, &entries)?;
        }
        Ok(spec)
    }
}

/// Reads a parameters file (the format of [`engine::params_file`]), naming the file in any
/// error.
pub fn read_params_file(path: &Path) -> Result<Vec<Entry>, WorkerError> {
    let text = std::fs::read_to_string(path).map_err(|source| WorkerError::ParamsUnreadable {
        path: path.to_path_buf(),
        source,
    })?;
    parse_params_text(path, &text)
}

/// Parses the text of a parameters file read from `path` (see [`read_params_file`]).
pub fn parse_params_text(path: &Path, text: &str) -> Result<Vec<Entry>, WorkerError> {
    params_file::parse(text).map_err(|e| WorkerError::ParamsFile {
        path: path.to_path_buf(),
        line: e.line,
        detail: e.detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_uci_specs() {
        let s = PlayerSpec::parse(
            "cmd=/usr/games/stockfish,option.Hash=16,option.Use NNUE=false,arg=-x,dir=/tmp,move-timeout=2",
            "engine2",
        )
        .expect("valid");
        let PlayerSpec::Uci(u) = s else {
            panic!("a UCI spec")
        };
        assert_eq!(u.name, "stockfish");
        assert_eq!(u.args, ["-x"]);
        assert_eq!(
            u.options,
            [
                ("Hash".to_string(), "16".to_string()),
                ("Use NNUE".to_string(), "false".to_string())
            ]
        );
        assert_eq!(u.move_timeout, Duration::from_secs(2));
    }

    #[test]
    fn internal_is_the_default() {
        let s = PlayerSpec::parse("name=base,hash=4", "engine1").expect("valid");
        assert!(matches!(s, PlayerSpec::Internal(ref i) if i.name == "base" && i.hash_mib == 4));
        assert!(matches!(
            PlayerSpec::parse("internal", "e").expect("valid"),
            PlayerSpec::Internal(_)
        ));
    }

    /// `net=FILE`: an in-process player reads and checks the network file when the spec is
    /// parsed, and plays with it in its own game only; a UCI player gets it as `EvalFile`.
    #[test]
    fn network_files_in_specs() {
        use engine::board8::net_file::{self, NetFileError};
        use engine::{Rules, Variant};
        let dir = tempfile::tempdir().expect("temp dir");
        let latte = Rules::default_for(Variant::Latte);
        let mut net = engine::board8::builtin_net(latte)
            .expect("a network")
            .clone();
        net.output_bias += 1;
        let path = dir.path().join("cand.net");
        net_file::write(&path, &net_file::to_bytes(&net, Variant::Latte)).expect("written");
        let spec =
            PlayerSpec::parse(&format!("name=cand,net={}", path.display()), "e").expect("valid");
        let PlayerSpec::Internal(i) = &spec else {
            panic!("in process")
        };
        let loaded = i.network.as_ref().expect("a network");
        assert_eq!(loaded.variant, Variant::Latte);
        assert!(crate::player::build::<engine::board8::Board>(&spec, latte).is_ok());
        let Err(e) = crate::player::build::<engine::board8::Board>(
            &spec,
            Rules::default_for(Variant::Chess),
        ) else {
            panic!("a Latte network in a chess game")
        };
        assert!(
            matches!(&e, WorkerError::Network { player, source: NetFileError::OtherVariant { .. } } if player == "cand"),
            "{e}"
        );
        let Err(e) = crate::player::build::<engine::gustavian::Position>(
            &spec,
            Rules::default_for(Variant::Secutor),
        ) else {
            panic!("a network in a Secutor game")
        };
        assert!(e.to_string().contains("no evaluation network"), "{e}");

        let uci = PlayerSpec::parse(&format!("cmd=/bin/engine,net={}", path.display()), "e")
            .expect("valid");
        let PlayerSpec::Uci(u) = uci else {
            panic!("a UCI spec")
        };
        assert_eq!(
            u.options,
            [("EvalFile".to_string(), path.display().to_string())]
        );

        let junk = dir.path().join("junk.net");
        std::fs::write(&junk, b"junk").expect("written");
        for file in [junk, dir.path().join("missing.net")] {
            let err = PlayerSpec::parse(&format!("name=x,net={}", file.display()), "e")
                .expect_err("refused");
            let text = err.to_string();
            assert!(
                text.contains("player \"x\"")
                    && text.contains(&*file.file_name().expect("name").to_string_lossy()),
                "{text}"
            );
        }
    }

    #[test]
    fn bad_specs_are_named() {
        for bad in [
            "cmd",
            "colour=white",
            "hash=0",
            "option.Hash=1",
            "cmd=x,move-timeout=-1",
        ] {
            let err = PlayerSpec::parse(bad, "e").expect_err(bad);
            assert!(err.to_string().contains(bad), "{err}");
        }
    }

    #[test]
    fn params_files_in_both_forms() {
        let p = Path::new("p.txt");
        let lines =
            parse_params_text(p, "# tuned\nPawnValueMg=90\nTempo 14 # more\n\n").expect("valid");
        let named: Vec<(Option<usize>, &str, &str)> = lines
            .iter()
            .map(|e| (e.line, e.name.as_str(), e.value.as_str()))
            .collect();
        assert_eq!(
            named,
            [(Some(2), "PawnValueMg", "90"), (Some(3), "Tempo", "14")]
        );
        let json = parse_params_text(p, r#"{"PawnValueMg": 90}"#).expect("valid");
        assert_eq!((json[0].line, json[0].name.as_str()), (None, "PawnValueMg"));
        let err = parse_params_text(p, "PawnValueMg\n").expect_err("no value");
        assert!(err.to_string().contains("line 1"), "{err}");
        let err = parse_params_text(p, r#"{"Tempo": "x"}"#).expect_err("not integer");
        assert!(err.to_string().contains("Tempo"), "{err}");

        let mut spec = PlayerSpec::internal("e");
        let err = spec
            .apply_params(
                p,
                &[Entry {
                    line: Some(7),
                    name: "NoSuchParam".into(),
                    value: "1".into(),
                }],
            )
            .expect_err("unknown");
        assert!(err.to_string().contains("NoSuchParam") && err.to_string().contains("line 7"));
        let err = spec
            .apply_params(
                p,
                &[Entry {
                    line: Some(2),
                    name: "Tempo".into(),
                    value: "999".into(),
                }],
            )
            .expect_err("out of range");
        assert!(err.to_string().contains("Tempo"), "{err}");
    }
}
