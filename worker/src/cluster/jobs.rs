//! From a lease to the pairs a slot plays: players, game settings, openings.
//!
//! Everything a lease says is checked here before a game starts, so a lease this worker cannot
//! play fails at once with one reason (handed back to the coordinator as the lease's failure)
//! instead of pair by pair.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use engine::error::RulesError;
use engine::params_file::Entry;
use engine::Rules;
use proto::v1 as pb;
use thiserror::Error;

use super::engines::{EngineRefused, Engines, BUILTIN};
use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::book::Book;
use crate::limits::TimeControl;
use crate::player::spec::UciSpec;
use crate::player::PlayerSpec;
use crate::runner::GameConfig;
use crate::WorkerError;

/// Why a lease cannot be played on this worker.
#[derive(Debug, Error)]
pub(crate) enum LeaseError {
    /// The lease lacks `first` or `second`.
    #[error("lease without players")]
    NoPlayers,
    /// An engine this worker does not have (or not in the pinned build).
    #[error(transparent)]
    Engine(#[from] EngineRefused),
    /// A `Hash` option for the in-process engine that is not a number of MiB.
    #[error("bad Hash value {0:?}")]
    BadHash(String),
    /// Options the player refuses.
    #[error("player '{player}': {source}")]
    Options {
        /// The player's display name.
        player: String,
        /// What the engine said.
        source: WorkerError,
    },
    /// A variant or rule-set this worker does not know.
    #[error("pair {index}: {source}")]
    Rules {
        /// The pair.
        index: u64,
        /// What is wrong.
        source: RulesError,
    },
    /// A book that is missing or bad.
    #[error("pair {index}: {source}")]
    Book {
        /// The pair.
        index: u64,
        /// What is wrong.
        source: WorkerError,
    },
    /// A game clock no run config allows: over [`proto::limits::CLOCK_BASE_MS`] or
    /// [`proto::limits::CLOCK_INC_MS`], an increment without a base, or a clock beside a
    /// per-move limit. Refused rather than capped: such a lease does not say what to play.
    #[error("clock of {base_ms}+{inc_ms} ms: {problem}")]
    Clock {
        /// `clock_base_ms` as sent.
        base_ms: u64,
        /// `clock_inc_ms` as sent.
        inc_ms: u64,
        /// What is wrong.
        problem: &'static str,
    },
}

/// What one pair needs on a slot thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) task: pb::PairTask,
    pub(crate) rules: Rules,
    pub(crate) fen: String,
    /// The second game's opening (`fen` unless the task names another).
    pub(crate) second_fen: String,
    pub(crate) players: [PlayerSpec; 2],
}

/// A player of the lease with this pair's options. `builtin` (or no engine) is the in-process
/// engine; any other name must be one of `engines`, and the file run is the declared one:
/// nothing the coordinator sends becomes a path or a command line.
pub(crate) fn player(
    p: Option<&pb::Player>,
    extra: &HashMap<String, String>,
    engines: &Engines,
) -> Result<PlayerSpec, LeaseError> {
    let p = p.ok_or(LeaseError::NoPlayers)?;
    // Per-pair options override the lease's; sorted so every run applies them alike.
    let mut merged: BTreeMap<&String, &String> = p.options.iter().collect();
    merged.extend(extra.iter());
    let mut options: Vec<Entry> = merged
        .into_iter()
        .map(|(k, v)| Entry {
            line: None,
            name: k.clone(),
            value: v.clone(),
        })
        .collect();
    let mut spec = if p.engine == BUILTIN || p.engine.is_empty() {
        PlayerSpec::internal(p.name.clone())
    } else {
        let declared = engines.resolve(&p.engine, &p.sha256)?;
        match declared.network() {
            // A declared network file: our engine, playing with it.
            Some(network) => {
                PlayerSpec::internal_with_network(p.name.clone(), Some(network.clone()))
            }
            None => PlayerSpec::Uci(UciSpec::new(p.name.clone(), declared.path())),
        }
    };
    if let PlayerSpec::Internal(i) = &mut spec {
        if let Some(pos) = options
            .iter()
            .position(|e| e.name.eq_ignore_ascii_case("hash"))
        {
            let v = options.remove(pos).value;
            i.hash_mib = v.parse().map_err(|_| LeaseError::BadHash(v))?;
        }
    }
    spec.apply_params(Path::new("lease"), &options)
        .map_err(|source| LeaseError::Options {
            player: p.name.clone(),
            source,
        })?;
    Ok(spec)
}

/// The clock of a lease, checked against the limits run configs have, so that neither the
/// runner's clock arithmetic nor an engine's time management meets an absurd number.
fn clock(s: &pb::GameSettings) -> Result<TimeControl, LeaseError> {
    let bad = |problem| LeaseError::Clock {
        base_ms: s.clock_base_ms,
        inc_ms: s.clock_inc_ms,
        problem,
    };
    if s.clock_base_ms == 0 {
        return Err(bad("an increment without a base"));
    }
    if s.clock_base_ms > proto::limits::CLOCK_BASE_MS {
        return Err(bad("the base is over an hour"));
    }
    if s.clock_inc_ms > proto::limits::CLOCK_INC_MS {
        return Err(bad("the increment is over a minute"));
    }
    if s.nodes > 0 || s.depth > 0 || s.movetime_ms > 0 {
        return Err(bad("a clock beside nodes, depth or movetime"));
    }
    Ok(TimeControl::Clock {
        base: Duration::from_millis(s.clock_base_ms),
        inc: Duration::from_millis(s.clock_inc_ms),
    })
}

/// The game settings of a lease as the runner takes them.
pub(crate) fn game_config(s: &pb::GameSettings) -> Result<GameConfig, LeaseError> {
    let tc = if s.clock_base_ms > 0 || s.clock_inc_ms > 0 {
        clock(s)?
    } else if s.nodes > 0 {
        TimeControl::Nodes(s.nodes)
    } else if s.depth > 0 {
        TimeControl::Depth(s.depth)
    } else {
        TimeControl::MoveTime(Duration::from_millis(s.movetime_ms.max(1)))
    };
    let mut g = GameConfig::new(tc);
    let a = s.adjudication.unwrap_or_default();
    g.adjudication = if a.enabled {
        Adjudication {
            resign: Some(ResignRule {
                move_count: a.resign_moves,
                score: a.resign_score_cp,
            }),
            draw: Some(DrawRule {
                move_number: a.draw_after_move,
                move_count: a.draw_moves,
                score: a.draw_score_cp,
            }),
            max_moves: None,
        }
    } else {
        Adjudication {
            resign: None,
            draw: None,
            max_moves: None,
        }
    };
    if s.max_plies > 0 {
        g.adjudication.max_moves = Some(s.max_plies.div_ceil(2));
    }
    Ok(g)
}

/// Every pair of a lease, ready to play; the first problem found is the error.
pub(crate) fn jobs(
    lease: &pb::Lease,
    book_dir: &Path,
    engines: &Engines,
) -> Result<Vec<Job>, LeaseError> {
    let settings = lease.settings.clone().unwrap_or_default();
    let mut books: BTreeMap<(String, String, String), Book> = BTreeMap::new();
    let mut out = Vec::new();
    for task in &lease.pairs {
        let index = task.index;
        let ruleset = (!task.ruleset.is_empty()).then_some(task.ruleset.as_str());
        let rules = Rules::parse(&task.variant, ruleset)
            .map_err(|source| LeaseError::Rules { index, source })?;
        let name = if task.book.is_empty() {
            settings.book.clone()
        } else {
            task.book.clone()
        };
        let key = (task.variant.clone(), task.ruleset.clone(), name.clone());
        if !books.contains_key(&key) {
            let book = if name.is_empty() {
                Book::builtin(rules)
            } else {
                Book::load(&book_dir.join(&name), rules)
            }
            .map_err(|source| LeaseError::Book { index, source })?;
            books.insert(key.clone(), book);
        }
        let book = &books[&key];
        let at = |opening: u64| {
            book.positions[(opening % book.positions.len().max(1) as u64) as usize].clone()
        };
        let fen = at(task.opening);
        let second_fen = task.second_opening.map_or_else(|| fen.clone(), at);
        out.push(Job {
            rules,
            fen,
            second_fen,
            players: [
                player(lease.first.as_ref(), &task.first_options, engines)?,
                player(lease.second.as_ref(), &task.second_options, engines)?,
            ],
            task: task.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cluster::engines::EngineArg;

    /// A worker with one declared engine `fake` (an executable script in `dir`).
    fn declared(dir: &Path) -> (Engines, PathBuf) {
        let path = dir.join("fake-engine");
        std::fs::write(&path, "#!/bin/sh\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        let engines = Engines::declare(&[EngineArg {
            name: "fake".into(),
            path: path.clone(),
        }])
        .expect("declared");
        (engines, std::fs::canonicalize(path).expect("exists"))
    }

    fn sent(engine: &str, sha256: &str) -> pb::Player {
        pb::Player {
            name: "p".into(),
            engine: engine.into(),
            options: HashMap::new(),
            sha256: sha256.into(),
        }
    }

    #[test]
    fn builtin_and_empty_are_the_in_process_engine() {
        let none = Engines::default();
        for name in ["builtin", ""] {
            let spec = player(Some(&sent(name, "")), &HashMap::new(), &none).expect("builtin");
            assert!(matches!(spec, PlayerSpec::Internal(_)), "{name:?}");
        }
    }

    #[test]
    fn refuses_an_undeclared_engine() {
        let dir = tempfile::tempdir().expect("dir");
        let (engines, _) = declared(dir.path());
        // A path or a command line is just an unknown name: never run.
        for name in ["stockfish", "/bin/sh", "fake -c 'rm -rf ~'"] {
            let err =
                player(Some(&sent(name, "")), &HashMap::new(), &engines).expect_err("undeclared");
            assert!(
                matches!(&err, LeaseError::Engine(EngineRefused::Undeclared(n)) if n == name),
                "{err}"
            );
        }
        let err = player(Some(&sent("stockfish", "")), &HashMap::new(), &engines)
            .expect_err("undeclared");
        assert_eq!(
            err.to_string(),
            "engine 'stockfish' is not declared on this worker \
             (start it with --engine stockfish=PATH)"
        );
    }

    /// A declared network file is our engine playing with that network, with the lease's
    /// options as its parameters and the run's pin checked against the file.
    #[test]
    fn a_declared_network_is_our_engine_with_it() {
        use engine::board8::net_file;
        use engine::{Rules, Variant};
        let dir = tempfile::tempdir().expect("dir");
        let chess = Rules::default_for(Variant::Chess);
        let mut net = engine::board8::builtin_net(chess)
            .expect("a network")
            .clone();
        net.output_bias -= 1;
        let path = dir.path().join("cand.net");
        net_file::write(&path, &net_file::to_bytes(&net, Variant::Chess)).expect("written");
        let engines = Engines::declare(&[EngineArg {
            name: "cand".into(),
            path,
        }])
        .expect("a network file declares without an executable bit");
        let sha = engines
            .resolve("cand", "")
            .expect("declared")
            .sha256()
            .to_string();
        let mut p = sent("cand", &sha);
        p.options.insert("Tempo".into(), "17".into());
        p.options.insert("Hash".into(), "3".into());
        let spec = player(Some(&p), &HashMap::new(), &engines).expect("played");
        let PlayerSpec::Internal(i) = &spec else {
            panic!("in process: {spec:?}")
        };
        assert_eq!(i.network.as_ref().map(|n| n.variant), Some(Variant::Chess));
        assert_eq!((i.params.tempo, i.hash_mib), (17, 3));
        assert!(crate::player::build::<engine::board8::Board>(&spec, chess).is_ok());
        let latte = Rules::default_for(Variant::Latte);
        let Err(e) = crate::player::build::<engine::board8::Board>(&spec, latte) else {
            panic!("chess's network in a Latte game")
        };
        assert!(e.to_string().contains("is for chess"), "{e}");
        let err = player(
            Some(&sent("cand", &"0".repeat(64))),
            &HashMap::new(),
            &engines,
        )
        .expect_err("another file pinned");
        assert!(matches!(
            err,
            LeaseError::Engine(EngineRefused::DigestMismatch { .. })
        ));
    }

    #[test]
    fn refuses_a_pinned_digest_that_differs() {
        let dir = tempfile::tempdir().expect("dir");
        let (engines, _) = declared(dir.path());
        let ours = engines
            .resolve("fake", "")
            .expect("declared")
            .sha256()
            .to_string();
        let pinned = "f".repeat(64);
        let err =
            player(Some(&sent("fake", &pinned)), &HashMap::new(), &engines).expect_err("mismatch");
        let text = err.to_string();
        assert!(text.contains(&pinned) && text.contains(&ours), "{text}");
        assert!(player(Some(&sent("fake", &ours)), &HashMap::new(), &engines).is_ok());
    }

    #[test]
    fn runs_the_declared_path_not_the_sent_name() {
        let dir = tempfile::tempdir().expect("dir");
        let (engines, path) = declared(dir.path());
        let spec = player(Some(&sent("fake", "")), &HashMap::new(), &engines).expect("declared");
        let PlayerSpec::Uci(uci) = spec else {
            panic!("expected a UCI player, got {spec:?}");
        };
        assert_eq!(uci.command, path);
        assert!(uci.command.is_absolute());
        assert!(uci.args.is_empty());
        assert_eq!(uci.name, "p");
    }

    #[test]
    fn jobs_fail_on_the_first_bad_player() {
        let lease = pb::Lease {
            first: Some(sent("builtin", "")),
            second: Some(sent("ghost", "")),
            pairs: vec![pb::PairTask {
                index: 3,
                variant: "chess".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let err = jobs(&lease, Path::new("."), &Engines::default()).expect_err("ghost");
        assert!(err.to_string().contains("'ghost'"), "{err}");
    }

    #[test]
    fn a_lease_clock_is_a_clock_per_side() {
        let settings = pb::GameSettings {
            clock_base_ms: 10_000,
            clock_inc_ms: 100,
            max_plies: 200,
            ..Default::default()
        };
        let g = game_config(&settings).expect("a clock");
        assert_eq!(
            g.tc,
            TimeControl::Clock {
                base: Duration::from_secs(10),
                inc: Duration::from_millis(100),
            }
        );
        assert_eq!(g.tc.pgn_tag(), "10+0.1");
        assert_eq!(g.adjudication.max_moves, Some(100));
        // No increment is a clock too; the caps themselves are allowed.
        for (base_ms, inc_ms) in [
            (1, 0),
            (proto::limits::CLOCK_BASE_MS, proto::limits::CLOCK_INC_MS),
        ] {
            let s = pb::GameSettings {
                clock_base_ms: base_ms,
                clock_inc_ms: inc_ms,
                ..Default::default()
            };
            assert!(game_config(&s).is_ok(), "{base_ms}+{inc_ms}");
        }
        // Without clock fields (an older coordinator) the per-move limits hold as before.
        let nodes = pb::GameSettings {
            nodes: 500,
            ..Default::default()
        };
        assert_eq!(
            game_config(&nodes).expect("nodes").tc,
            TimeControl::Nodes(500)
        );
    }

    #[test]
    fn a_hostile_lease_clock_is_refused_by_name() {
        for (settings, problem) in [
            (
                pb::GameSettings {
                    clock_base_ms: u64::MAX,
                    clock_inc_ms: u64::MAX,
                    ..Default::default()
                },
                "base",
            ),
            (
                pb::GameSettings {
                    clock_base_ms: proto::limits::CLOCK_BASE_MS + 1,
                    ..Default::default()
                },
                "base",
            ),
            (
                pb::GameSettings {
                    clock_base_ms: 10_000,
                    clock_inc_ms: proto::limits::CLOCK_INC_MS + 1,
                    ..Default::default()
                },
                "increment",
            ),
            (
                pb::GameSettings {
                    clock_inc_ms: 100,
                    ..Default::default()
                },
                "without a base",
            ),
            (
                pb::GameSettings {
                    clock_base_ms: 10_000,
                    nodes: 500,
                    ..Default::default()
                },
                "beside",
            ),
            (
                pb::GameSettings {
                    clock_base_ms: 10_000,
                    movetime_ms: 100,
                    ..Default::default()
                },
                "beside",
            ),
        ] {
            let err = game_config(&settings).expect_err(problem);
            assert!(matches!(err, LeaseError::Clock { .. }), "{err:?}");
            let text = err.to_string();
            assert!(
                text.starts_with("clock of ") && text.contains(problem),
                "{text}"
            );
        }
    }

    #[test]
    fn a_second_opening_gives_the_second_game_its_own_position() {
        let task = |second_opening| pb::PairTask {
            index: 0,
            opening: 4,
            second_opening,
            variant: "latte".into(),
            ruleset: "normal".into(),
            ..Default::default()
        };
        let lease = |t| pb::Lease {
            first: Some(sent("builtin", "")),
            second: Some(sent("builtin", "")),
            pairs: vec![t],
            ..Default::default()
        };
        let same = jobs(&lease(task(None)), Path::new("."), &Engines::default()).expect("jobs");
        assert_eq!(same[0].fen, same[0].second_fen);
        let two = jobs(&lease(task(Some(5))), Path::new("."), &Engines::default()).expect("jobs");
        assert_eq!(two[0].fen, same[0].fen);
        assert_ne!(two[0].fen, two[0].second_fen);
    }
}
