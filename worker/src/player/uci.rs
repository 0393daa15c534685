//! A UCI engine process as a player.
//!
//! The process runs in its own process group and is killed with its whole group when the
//! player is dropped or the engine misbehaves (kill-on-drop, as fishnet does). Its output is
//! read by a thread into a bounded channel, and every wait for a line is raced against a
//! deadline (`recv_timeout`), so a hung engine costs at most its timeout. A crashed or hung
//! engine loses the game; the next request starts a new process.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use engine::eval::SearchPosition;
use engine::notation::parse_uci;
use engine::search::MATE;
use engine::{Game, Rules, Ruleset, Variant};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::spec::UciSpec;
use super::{GoRequest, Player, PlayerError, Reply};
use crate::error::WorkerError;
use crate::limits::TimeControl;

/// Longest line kept from an engine; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

/// Process groups of the engines running now, for [`kill_all_engines`].
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every engine process group this process started and still runs: for an abort that
/// exits without dropping the players (a second Ctrl-C).
pub fn kill_all_engines() {
    for &pgid in live().iter() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// Why reading from the engine stopped.
#[derive(Debug)]
enum ReadError {
    Eof,
    Timeout,
}

/// A running engine process.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Process {
    fn spawn(spec: &UciSpec) -> std::io::Result<Process> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&spec.command);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        if let Some(dir) = &spec.dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn()?;
        live().insert(child.id() as i32);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the engine"));
        };
        let (tx, rx) = sync_channel(4096);
        std::thread::Builder::new()
            .name("uci-reader".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut buf = Vec::with_capacity(256);
                loop {
                    buf.clear();
                    match read_line_capped(&mut reader, &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf);
                            let line = line.trim_end_matches(['\n', '\r']).to_string();
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            })?;
        Ok(Process {
            child,
            stdin,
            lines: rx,
        })
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        tracing::trace!(pid = self.child.id(), line, "to engine");
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| PlayerError::Crash(format!("cannot write to the engine: {e}")))
    }

    /// Reads lines until `f` returns true for one, or the deadline passes.
    fn read_until(
        &mut self,
        deadline: Instant,
        mut f: impl FnMut(&str) -> bool,
    ) -> Result<(), ReadError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    tracing::trace!(pid = self.child.id(), line, "from engine");
                    if f(&line) {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Err(ReadError::Timeout),
                Err(RecvTimeoutError::Disconnected) => return Err(ReadError::Eof),
            }
        }
    }

    /// The exit status if the process has ended (waiting briefly for it to be reaped).
    /// Sends a handshake line; an engine that already exited makes the write fail with a broken
    /// pipe, which is reported as the exit it is (with its status), not as a write error.
    fn send_at_start(&mut self, line: &str, awaiting: &str) -> Result<(), String> {
        self.send(line).map_err(|e| {
            if matches!(self.child.try_wait(), Ok(Some(_))) || self.lines_closed() {
                format!("it exited before {awaiting} ({})", self.exit_status())
            } else {
                e.to_string()
            }
        })
    }

    /// True when the engine's output has closed (its reader thread has ended).
    fn lines_closed(&self) -> bool {
        matches!(
            self.lines.recv_timeout(Duration::from_millis(100)),
            Err(RecvTimeoutError::Disconnected)
        )
    }

    fn exit_status(&mut self) -> String {
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        "output closed".to_string()
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes (the rest of a longer line is skipped).
fn read_line_capped(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(total);
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let n = chunk.len();
        let room = MAX_LINE.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..n.min(room)]);
        reader.consume(n);
        total += n;
        if done {
            return Ok(total);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // The engine leads its own group: this also ends anything it started.
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
        live().remove(&pid);
    }
}

/// Whether engines that know only orthodox chess play these rules correctly: Latte under the
/// `normal` rule-set is orthodox chess from another start position.
fn orthodox_compatible(rules: Rules) -> bool {
    matches!(rules.variant(), Variant::Chess)
        || (rules.variant() == Variant::Latte && rules.ruleset() == Ruleset::Normal)
}

/// A declared UCI option: its name and, for combos, the values.
struct DeclaredOption {
    name: String,
    vars: Vec<String>,
}

fn parse_option_line(line: &str) -> Option<DeclaredOption> {
    let rest = line.strip_prefix("option name ")?;
    let (name, tail) = rest.split_once(" type ")?;
    let mut vars = Vec::new();
    let mut tokens = tail.split_whitespace().peekable();
    while let Some(t) = tokens.next() {
        if t == "var" {
            if let Some(v) = tokens.next() {
                vars.push(v.to_string());
            }
        }
    }
    Some(DeclaredOption {
        name: name.trim().to_string(),
        vars,
    })
}

/// A UCI engine process playing one geometry.
pub struct UciPlayer<P: SearchPosition> {
    spec: UciSpec,
    rules: Rules,
    process: Option<Process>,
    /// Options that tell the engine the variant and rule-set, found at the first start.
    variant_options: Vec<(String, String)>,
    /// The game the cached move list belongs to, and its moves in coordinate notation.
    cache_start: String,
    cache_pos: Option<P>,
    cache_moves: Vec<String>,
}

impl<P: SearchPosition> UciPlayer<P> {
    /// Starts the engine and checks that it speaks UCI and plays `rules`.
    pub fn start(spec: UciSpec, rules: Rules) -> Result<Self, WorkerError> {
        let mut player = UciPlayer {
            spec,
            rules,
            process: None,
            variant_options: Vec::new(),
            cache_start: String::new(),
            cache_pos: None,
            cache_moves: Vec::new(),
        };
        let (process, variant_options) =
            player
                .launch(true)
                .map_err(|detail| WorkerError::EngineStart {
                    name: player.spec.name.clone(),
                    detail,
                })?;
        player.process = Some(process);
        player.variant_options = variant_options;
        Ok(player)
    }

    /// The process id of the running engine, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.child.id())
    }

    /// Spawns the process and runs the handshake; on the first start it also works out the
    /// variant options from the declared ones.
    fn launch(&self, first: bool) -> Result<(Process, Vec<(String, String)>), String> {
        let mut p = Process::spawn(&self.spec)
            .map_err(|e| format!("cannot run {}: {e}", self.spec.command.display()))?;
        let timeout = self.spec.startup_timeout;
        let deadline = Instant::now() + timeout;
        p.send_at_start("uci", "uciok")?;
        let mut declared = Vec::new();
        p.read_until(deadline, |line| {
            if let Some(o) = parse_option_line(line) {
                declared.push(o);
            }
            line.trim() == "uciok"
        })
        .map_err(|e| match e {
            ReadError::Eof => format!("it exited before uciok ({})", p.exit_status()),
            ReadError::Timeout => format!("no uciok within {timeout:?}"),
        })?;
        let variant_options = if first {
            self.variant_setup(&declared)?
        } else {
            self.variant_options.clone()
        };
        for (name, value) in variant_options.iter().chain(&self.spec.options) {
            p.send_at_start(&format!("setoption name {name} value {value}"), "readyok")?;
        }
        p.send_at_start("isready", "readyok")?;
        p.read_until(deadline, |line| line.trim() == "readyok")
            .map_err(|e| match e {
                ReadError::Eof => format!("it exited before readyok ({})", p.exit_status()),
                ReadError::Timeout => format!("no readyok within {timeout:?}"),
            })?;
        Ok((p, variant_options))
    }

    fn variant_setup(&self, declared: &[DeclaredOption]) -> Result<Vec<(String, String)>, String> {
        let find = |name: &str| declared.iter().find(|o| o.name.eq_ignore_ascii_case(name));
        let mut out = Vec::new();
        let variant = self.rules.variant().id();
        match find("UCI_Variant") {
            Some(o) if o.vars.iter().any(|v| v == variant) => {
                out.push((o.name.clone(), variant.to_string()));
            }
            Some(o) if orthodox_compatible(self.rules) && o.vars.iter().any(|v| v == "chess") => {
                out.push((o.name.clone(), "chess".to_string()));
            }
            _ if orthodox_compatible(self.rules) => {}
            _ => {
                return Err(format!(
                    "it does not declare UCI_Variant {variant}, so it cannot play {}",
                    self.rules
                ))
            }
        }
        if let Some(o) = find("Ruleset") {
            out.push((o.name.clone(), self.rules.ruleset().id().to_string()));
        } else if !orthodox_compatible(self.rules) && self.rules.variant() == Variant::Latte {
            return Err(format!(
                "it has no Ruleset option, so it cannot play {}",
                self.rules
            ));
        }
        Ok(out)
    }

    fn process(&mut self) -> Result<&mut Process, PlayerError> {
        if self.process.is_none() {
            tracing::info!(engine = %self.spec.name, "restarting engine");
            let (p, _) = self
                .launch(false)
                .map_err(|e| PlayerError::Crash(format!("restart failed: {e}")))?;
            self.process = Some(p);
        }
        self.process
            .as_mut()
            .ok_or_else(|| PlayerError::Crash("no process".into()))
    }

    /// Ends the process (it is restarted on the next request).
    fn kill(&mut self) {
        self.process = None;
    }

    fn fail(&mut self, e: ReadError, waited: Duration) -> PlayerError {
        let err = match e {
            ReadError::Eof => PlayerError::Crash(
                self.process
                    .as_mut()
                    .map_or_else(|| "no process".to_string(), Process::exit_status),
            ),
            ReadError::Timeout => PlayerError::Timeout(waited),
        };
        self.kill();
        err
    }

    /// The `position` command for the game, reusing the coordinate moves already written.
    fn position_command(&mut self, game: &Game<P>) -> String {
        let moves = game.moves();
        let stale = self.cache_start != game.start_fen()
            || self.cache_moves.len() > moves.len()
            || self.cache_pos.is_none();
        if stale {
            self.cache_start = game.start_fen().to_string();
            self.cache_moves.clear();
            self.cache_pos = P::from_fen(self.rules, game.start_fen()).ok();
        }
        if let Some(pos) = self.cache_pos.as_mut() {
            for &mv in &moves[self.cache_moves.len()..] {
                self.cache_moves.push(pos.move_info(mv).uci());
                pos.make_move(mv);
            }
        }
        let mut cmd = format!("position fen {}", game.start_fen());
        if !self.cache_moves.is_empty() {
            cmd.push_str(" moves");
            for m in &self.cache_moves {
                cmd.push(' ');
                cmd.push_str(m);
            }
        }
        cmd
    }
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

/// The `go` command for a request.
fn go_command(request: &GoRequest) -> String {
    match request.tc {
        TimeControl::Nodes(n) => format!("go nodes {n}"),
        TimeControl::Depth(d) => format!("go depth {d}"),
        TimeControl::MoveTime(t) => format!("go movetime {}", millis(t).max(1)),
        TimeControl::Clock { .. } => {
            let [w, b] = request.clocks.unwrap_or([Duration::ZERO; 2]);
            let inc = millis(request.inc);
            format!(
                "go wtime {} btime {} winc {inc} binc {inc}",
                millis(w),
                millis(b)
            )
        }
    }
}

/// What the `info` lines said last.
#[derive(Default)]
struct InfoState {
    score: Option<i32>,
    depth: Option<u32>,
    nodes: Option<u64>,
}

impl InfoState {
    fn read(&mut self, line: &str) {
        let mut tokens = line.split_whitespace();
        if tokens.next() != Some("info") {
            return;
        }
        let tokens: Vec<&str> = tokens.collect();
        let mut i = 0;
        let mut bound = false;
        let mut score = None;
        while i < tokens.len() {
            match tokens[i] {
                "depth" => {
                    if let Some(d) = tokens.get(i + 1).and_then(|t| t.parse().ok()) {
                        self.depth = Some(d);
                    }
                    i += 1;
                }
                "nodes" => {
                    if let Some(n) = tokens.get(i + 1).and_then(|t| t.parse().ok()) {
                        self.nodes = Some(n);
                    }
                    i += 1;
                }
                "score" => {
                    let kind = tokens.get(i + 1).copied();
                    let value = tokens.get(i + 2).and_then(|t| t.parse::<i32>().ok());
                    score = match (kind, value) {
                        (Some("cp"), Some(v)) => Some(v.clamp(-(MATE - 1000), MATE - 1000)),
                        (Some("mate"), Some(n)) if n > 0 => Some(MATE - (2 * n.min(500) - 1)),
                        // `saturating_neg`: an engine may send `mate -2147483648`.
                        (Some("mate"), Some(n)) => Some(-(MATE - 2 * n.saturating_neg().min(500))),
                        _ => None,
                    };
                    i += 2;
                }
                "lowerbound" | "upperbound" => bound = true,
                // The PV and string run to the end of the line.
                "pv" | "string" => break,
                _ => {}
            }
            i += 1;
        }
        if let (Some(s), false) = (score, bound) {
            self.score = Some(s);
        }
    }
}

impl<P: SearchPosition> Player<P> for UciPlayer<P> {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn new_game(&mut self, _game: &Game<P>) -> Result<(), PlayerError> {
        let timeout = self.spec.startup_timeout;
        let p = self.process()?;
        p.send("ucinewgame")?;
        p.send("isready")?;
        let deadline = Instant::now() + timeout;
        match p.read_until(deadline, |line| line.trim() == "readyok") {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(e, timeout)),
        }
    }

    fn go(&mut self, game: &Game<P>, request: &GoRequest) -> Result<Reply<P::Move>, PlayerError> {
        let position = self.position_command(game);
        let go = go_command(request);
        let wait = request.deadline.unwrap_or(self.spec.move_timeout);
        let p = self.process()?;
        if let Err(e) = p.send(&position).and_then(|()| p.send(&go)) {
            self.kill();
            return Err(e);
        }
        let start = Instant::now();
        let deadline = start + wait;
        let mut info = InfoState::default();
        let mut best: Option<String> = None;
        let read = p.read_until(deadline, |line| {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix("bestmove") {
                if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                    best = Some(rest.split_whitespace().next().unwrap_or("").to_string());
                    return true;
                }
            }
            info.read(trimmed);
            false
        });
        let elapsed = start.elapsed();
        if let Err(e) = read {
            return Err(self.fail(e, wait));
        }
        let text = best.unwrap_or_default();
        let mv = parse_uci(game.position(), &text).map_err(|_| PlayerError::IllegalMove(text))?;
        Ok(Reply {
            mv,
            score: info.score,
            depth: info.depth,
            nodes: info.nodes,
            elapsed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI once saw "cannot write to the engine: Broken pipe" for an engine that exits at start:
    /// the exit raced the first write. An engine gone before the handshake is named as exited.
    #[test]
    fn writing_to_an_engine_that_exited_says_it_exited() {
        let mut p = Process::spawn(&UciSpec::new("gone", "true")).expect("spawn true");
        let _ = p.child.wait();
        // Filling the pipe's buffer makes a write fail however the kernel buffers it.
        let line = "x".repeat(1 << 17);
        let err = p.send_at_start(&line, "uciok").expect_err("no reader");
        assert!(err.contains("exited before uciok"), "{err}");
    }

    #[test]
    fn info_lines_give_scores_from_the_mover() {
        let mut s = InfoState::default();
        s.read("info depth 7 seldepth 9 score cp -35 nodes 1234 pv e2e4 e7e5");
        assert_eq!(
            (s.score, s.depth, s.nodes),
            (Some(-35), Some(7), Some(1234))
        );
        s.read("info depth 8 score cp 99 lowerbound nodes 2000");
        assert_eq!(s.score, Some(-35), "bounds are not scores");
        s.read("info depth 9 score mate 3 pv a1a2");
        assert_eq!(
            engine::search::Score::from_internal(s.score.expect("mate")),
            engine::search::Score::Mate(3)
        );
        s.read("info score mate -2");
        assert_eq!(
            engine::search::Score::from_internal(s.score.expect("mate")),
            engine::search::Score::Mate(-2)
        );
        s.read("info string score cp 5000");
        assert_eq!(
            engine::search::Score::from_internal(s.score.expect("kept")),
            engine::search::Score::Mate(-2)
        );
    }

    #[test]
    fn long_lines_are_capped() {
        let mut data = vec![b'x'; MAX_LINE * 2];
        data.extend_from_slice(b"\nbestmove e2e4\n");
        let mut r = BufReader::new(&data[..]);
        let mut buf = Vec::new();
        read_line_capped(&mut r, &mut buf).expect("read");
        assert_eq!(buf.len(), MAX_LINE);
        buf.clear();
        read_line_capped(&mut r, &mut buf).expect("read");
        assert_eq!(buf, b"bestmove e2e4\n");
    }

    #[test]
    fn option_lines() {
        let o = parse_option_line(
            "option name UCI_Variant type combo default chess var chess var latte",
        )
        .expect("option");
        assert_eq!(o.name, "UCI_Variant");
        assert_eq!(o.vars, ["chess", "latte"]);
        let o = parse_option_line("option name Use NNUE type check default true").expect("option");
        assert_eq!(o.name, "Use NNUE");
    }
}
