//! The UCI front end driven as a GUI would drive it: a real `engine` process over pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("engine starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Lines up to and including the first one starting with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let done = l.starts_with(prefix);
                    out.push(l);
                    if done {
                        return out;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {prefix:?} within 60 s; got {out:?}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engine exited before {prefix:?}; got {out:?}")
                }
            }
        }
    }

    /// Waits for the search's `bestmove`, checking that no line before it reports an error:
    /// the move, and every line the search printed (its `info` lines, the `bestmove` last).
    fn best_move(&mut self) -> (String, Vec<String>) {
        let lines = self.until("bestmove");
        assert!(
            !lines.iter().any(|l| l.contains("error")),
            "an error before bestmove: {lines:?}"
        );
        let best = lines
            .last()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_else(|| panic!("bestmove without a move: {lines:?}"))
            .to_string();
        (best, lines)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn handshake_lists_variants_rulesets_and_parameters() {
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.until("uciok");
    assert!(lines.iter().any(|l| l.starts_with("id name")));
    assert!(lines
        .iter()
        .any(|l| l.contains("UCI_Variant type combo") && l.contains("var secutor")));
    assert!(lines
        .iter()
        .any(|l| l.contains("Ruleset type combo") && l.contains("var tworooks")));
    for spec in engine::params::SPECS {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("option name {} type spin", spec.name))),
            "{}",
            spec.name
        );
    }
    e.send("isready");
    e.until("readyok");
}

#[test]
fn plays_legal_moves_in_every_variant() {
    let mut e = Engine::start();
    for (variant, ruleset, moves) in [
        ("chess", "normal", "e2e4 e7e5"),
        ("latte", "both", "d2d4 d7d5"),
        ("secutor", "extended", "f2f4 f7f5"),
    ] {
        e.send(&format!("setoption name UCI_Variant value {variant}"));
        e.send(&format!("setoption name Ruleset value {ruleset}"));
        e.send("ucinewgame");
        e.send(&format!("position startpos moves {moves}"));
        e.send("go depth 4");
        let (best, lines) = e.best_move();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info depth 4") && l.contains(" pv ")),
            "{lines:?}"
        );
        // `bestmove M ponder R`: a GUI with pondering on needs R to ponder at all.
        let last: Vec<&str> = lines.last().expect("bestmove").split_whitespace().collect();
        assert_eq!(last.get(2), Some(&"ponder"), "{variant}: {lines:?}");
        let reply = last.get(3).expect("a ponder move");
        // The move and the reply are legal: playing them is accepted.
        e.send(&format!("position startpos moves {moves} {best} {reply}"));
        e.send("d");
        let d = e.until("info string variant");
        assert!(
            !d.iter().any(|l| l.contains("error")),
            "{variant}: {best} {reply} refused: {d:?}"
        );
    }
}

#[test]
fn fixed_nodes_are_reproducible_after_ucinewgame() {
    let mut e = Engine::start();
    let mut runs = Vec::new();
    for _ in 0..2 {
        e.send("ucinewgame");
        e.send("position startpos moves e2e4 c7c5 g1f3");
        e.send("go nodes 20000");
        let lines = e.until("bestmove");
        let last_info = lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .cloned()
            .unwrap_or_default();
        let nodes = last_info
            .split_whitespace()
            .skip_while(|w| *w != "nodes")
            .nth(1)
            .map(str::to_string);
        runs.push((lines.last().cloned(), nodes));
    }
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn bad_input_is_answered_and_the_engine_keeps_running() {
    let mut e = Engine::start();
    for (cmd, needle) in [
        ("position startpos moves e2e5", "illegal move"),
        ("position fen 8/8/8 w - - 0 1", "ranks"),
        ("setoption name UCI_Variant value shogi", "unknown variant"),
        (
            "setoption name Ruleset value extended",
            "does not exist in chess",
        ),
        (
            "setoption name KnightValueMg value 99999",
            "outside its range",
        ),
        ("setoption name NoSuchOption value 1", "unknown option"),
        ("go depth x", "not a number"),
        ("frobnicate", "unknown command"),
        ("setoption name MultiPV value 0", "between 1 and 256"),
        ("setoption name MultiPV value 257", "between 1 and 256"),
        ("setoption name MultiPV value many", "between 1 and 256"),
        ("setoption name MultiPV", "needs a value"),
        ("setoption name Threads value 0", "between 1 and 256"),
        ("setoption name Threads value 257", "between 1 and 256"),
        (
            "setoption name Move Overhead value -1",
            "between 0 and 5000",
        ),
        (
            "setoption name Move Overhead value 5001",
            "between 0 and 5000",
        ),
        (
            "setoption name UCI_Chess960 value true",
            "does not play Chess960",
        ),
        (
            "setoption name Ponder value maybe",
            "neither true nor false",
        ),
        ("go depth 3 searchmoves", "needs at least one move"),
        ("go searchmoves e2e5 depth 3", "e2e5 is not a legal move"),
        ("debug maybe", "expected on or off"),
        ("debug", "expected on or off"),
    ] {
        e.send(cmd);
        let lines = e.until("info string error");
        assert!(
            lines.last().is_some_and(|l| l.contains(needle)),
            "{cmd}: {lines:?}"
        );
    }
    e.send("position startpos");
    e.send("go depth 2");
    e.until("bestmove");
}

#[test]
fn stop_ends_an_infinite_search_with_a_move() {
    let mut e = Engine::start();
    e.send("position startpos");
    e.send("go infinite");
    e.until("info depth 3");
    e.send("isready");
    e.until("readyok");
    e.send("stop");
    let (best, _) = e.best_move();
    assert_ne!(best, "0000");
}

#[test]
fn movetime_is_respected_roughly() {
    let mut e = Engine::start();
    e.send("position startpos");
    let t = Instant::now();
    e.send("go movetime 300");
    e.until("bestmove");
    // Generous bound: the machine may be loaded; the point is that the search ends by itself.
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn params_command_lists_spsa_lines_and_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["params", "--variant", "secutor", "--format", "spsa"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.starts_with("SecutorValueMg, ")));
    assert_eq!(text.lines().next().map(|l| l.split(", ").count()), Some(6));
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["params", "--variant", "latte"])
        .output()
        .expect("runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> = json
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"PawnValueMg") && !names.contains(&"SecutorValueMg"));
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["params", "--variant", "latte", "--format", "xml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// The static evaluation the engine prints for its current position.
fn printed_eval(e: &mut Engine) -> i32 {
    e.send("eval");
    let lines = e.until("info string eval");
    let line = lines.last().expect("an eval line");
    line.split_whitespace()
        .nth(3)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no value in {line:?}"))
}

/// `EvalFile` loads a network file and the engine evaluates and searches with it, in its own
/// game only; `<builtin>` goes back to the shipped network; a file that cannot be used is
/// answered with an error naming it, and the engine keeps playing.
#[test]
fn eval_file_plays_with_a_network_from_a_file() {
    use engine::board8::net_file;
    use engine::board8::Board;
    use engine::eval::{PawnCache, SearchPosition};
    use engine::params::Params;
    use engine::{Rules, Variant};

    let dir = tempfile::tempdir().expect("temp dir");
    let latte = Rules::default_for(Variant::Latte);
    // Latte's network with 40 centipawns more for the side to move.
    let mut net = engine::board8::builtin_net(latte)
        .expect("Latte has a network")
        .clone();
    net.output_bias += 40 * engine::board8::net::QB * engine::board8::net::QA;
    let path = dir.path().join("latte-plus.net");
    net_file::write(&path, &net_file::to_bytes(&net, Variant::Latte)).expect("written");
    let loaded = net_file::load(&path).expect("loads");
    let fen = "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1";
    let mut expected = Board::from_fen(latte, fen).expect("start");
    let shipped = expected.evaluate(&Params::default(), &mut PawnCache::new());
    expected.use_network(Board::network(&loaded, latte).expect("Latte's"));
    let with_file = expected.evaluate(&Params::default(), &mut PawnCache::new());
    assert_ne!(shipped, with_file);

    let mut e = Engine::start();
    e.send("uci");
    let lines = e.until("uciok");
    assert!(
        lines
            .iter()
            .any(|l| l == "option name EvalFile type string default <builtin>"),
        "{lines:?}"
    );
    e.send("setoption name UCI_Variant value latte");
    e.send("position startpos");
    assert_eq!(printed_eval(&mut e), shipped);
    e.send(&format!("setoption name EvalFile value {}", path.display()));
    let lines = e.until("info string EvalFile");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.contains("latte network") && l.contains(loaded.name())),
        "{lines:?}"
    );
    assert_eq!(printed_eval(&mut e), with_file);
    e.send("go depth 5");
    e.until("bestmove");

    // Another game keeps its own network, and says so.
    e.send("setoption name UCI_Variant value chess");
    let lines = e.until("info string EvalFile not used");
    assert!(
        lines.last().is_some_and(|l| l.contains("is for latte")),
        "{lines:?}"
    );
    e.send("setoption name UCI_Variant value latte");
    e.send("position startpos");
    assert_eq!(printed_eval(&mut e), with_file);

    // A file that is not a network, or none at all, is an error naming it; the loaded
    // network stays.
    let junk = dir.path().join("junk.net");
    std::fs::write(&junk, b"not a network").expect("written");
    for (file, needle) in [
        (junk, "is not a network file"),
        (dir.path().join("missing.net"), "cannot read network file"),
    ] {
        e.send(&format!("setoption name EvalFile value {}", file.display()));
        let lines = e.until("info string error");
        assert!(
            lines.last().is_some_and(|l| l.contains(needle)
                && l.contains(&*file.file_name().expect("name").to_string_lossy())),
            "{lines:?}"
        );
    }
    assert_eq!(printed_eval(&mut e), with_file);
    e.send("setoption name EvalFile value <builtin>");
    e.until("info string EvalFile");
    assert_eq!(printed_eval(&mut e), shipped);
}

/// The `info` lines of the last completed depth of a several-line search, by rank.
fn last_lines(lines: &[String]) -> Vec<(u32, i32, String)> {
    let field = |l: &str, key: &str| -> Option<String> {
        let t: Vec<&str> = l.split_whitespace().collect();
        t.iter()
            .position(|&w| w == key)
            .and_then(|i| t.get(i + 1))
            .map(|s| s.to_string())
    };
    let ranked: Vec<(u32, u32, i32, String)> = lines
        .iter()
        .filter(|l| l.starts_with("info depth") && l.contains(" multipv "))
        .map(|l| {
            let depth = field(l, "depth")
                .and_then(|d| d.parse().ok())
                .expect("depth");
            let rank = field(l, "multipv")
                .and_then(|d| d.parse().ok())
                .expect("rank");
            let score = field(l, "cp").and_then(|d| d.parse().ok()).unwrap_or(0);
            (depth, rank, score, field(l, "pv").expect("pv"))
        })
        .collect();
    let last = ranked.iter().map(|r| r.0).max().expect("ranked lines");
    ranked
        .into_iter()
        .filter(|r| r.0 == last)
        .map(|(_, rank, score, mv)| (rank, score, mv))
        .collect()
}

/// `MultiPV` as an analysing GUI uses it: each depth reports that many lines, ranked best
/// first, each with another first move, and the move played is the first line's; a
/// position with fewer legal moves reports as many lines as it has moves.
#[test]
fn multipv_reports_ranked_distinct_lines_on_both_boards() {
    let mut e = Engine::start();
    e.send("uci");
    let options = e.until("uciok");
    assert!(options
        .iter()
        .any(|l| l == "option name MultiPV type spin default 1 min 1 max 256"));
    assert!(options
        .iter()
        .any(|l| l == "option name Threads type spin default 1 min 1 max 256"));
    for (variant, ruleset) in [("chess", "normal"), ("secutor", "extended")] {
        e.send(&format!("setoption name UCI_Variant value {variant}"));
        e.send(&format!("setoption name Ruleset value {ruleset}"));
        e.send("setoption name MultiPV value 4");
        e.send("ucinewgame");
        e.send("position startpos");
        e.send("go depth 7");
        let (best, lines) = e.best_move();
        let ranked = last_lines(&lines);
        assert_eq!(
            ranked.iter().map(|r| r.0).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "{variant}: {lines:?}"
        );
        assert!(
            ranked.windows(2).all(|w| w[0].1 >= w[1].1),
            "{variant}: ranked by score: {ranked:?}"
        );
        let mut firsts: Vec<&str> = ranked.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(best, firsts[0], "{variant}: {lines:?}");
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(
            firsts.len(),
            4,
            "{variant}: distinct first moves: {ranked:?}"
        );
    }
    // Two legal moves (Kg1 and h4): two lines, not four.
    e.send("setoption name UCI_Variant value chess");
    e.send("position fen 7k/8/8/8/8/7P/r7/7K w - - 0 1");
    e.send("go depth 4");
    let (_, lines) = e.best_move();
    let mut firsts: Vec<String> = last_lines(&lines).into_iter().map(|r| r.2).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, ["h1g1", "h3h4"], "{lines:?}");
    // One line again: the plain output, without ranks.
    e.send("setoption name MultiPV value 1");
    e.send("position startpos");
    e.send("go depth 5");
    let (_, lines) = e.best_move();
    assert!(lines.iter().all(|l| !l.contains("multipv")), "{lines:?}");
}

/// `go searchmoves` restricts the choice to the moves given, in every line.
#[test]
fn searchmoves_restricts_the_root() {
    let mut e = Engine::start();
    e.send("position startpos");
    e.send("go depth 6 searchmoves a2a3 h2h4");
    let (best, lines) = e.best_move();
    assert!(matches!(best.as_str(), "a2a3" | "h2h4"), "{lines:?}");
    e.send("setoption name MultiPV value 3");
    e.send("go searchmoves g1f3 b1c3 depth 5");
    let (_, lines) = e.best_move();
    let ranked = last_lines(&lines);
    let mut firsts: Vec<&str> = ranked.iter().map(|r| r.2.as_str()).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, ["b1c3", "g1f3"], "{lines:?}");
}

/// `Threads`: helpers search beside the leading thread on both boards; the move is legal,
/// `stop` ends them all, and a new table size or another variant keeps the thread count.
#[test]
fn several_threads_search_and_stop_together() {
    let mut e = Engine::start();
    e.send("setoption name Threads value 3");
    for (variant, ruleset, moves) in [
        ("chess", "normal", "e2e4 e7e5"),
        ("secutor", "extended", "f2f4 f7f5"),
    ] {
        e.send(&format!("setoption name UCI_Variant value {variant}"));
        e.send(&format!("setoption name Ruleset value {ruleset}"));
        e.send("setoption name Hash value 8");
        e.send(&format!("position startpos moves {moves}"));
        e.send("go depth 8");
        let (best, _) = e.best_move();
        // Legal: the position takes it.
        e.send(&format!("position startpos moves {moves} {best}"));
        e.send("go infinite");
        std::thread::sleep(Duration::from_millis(300));
        e.send("stop");
        e.best_move();
    }
}

/// A GUI sends its next command the moment it reads `bestmove`: the engine, still handing
/// its searchers back, must take it, not answer that a search is running.
#[test]
fn the_next_go_right_after_bestmove_is_taken() {
    let mut e = Engine::start();
    e.send("setoption name Threads value 2");
    e.send("position startpos");
    for _ in 0..300 {
        e.send("go depth 1");
        e.best_move();
    }
}

/// `bestmove` names no reply to ponder on when the move ends the game (the reply in every
/// variant is checked by `plays_legal_moves_in_every_variant`).
#[test]
fn bestmove_names_no_reply_after_a_mate() {
    let mut e = Engine::start();
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    e.send("go depth 4");
    let (best, lines) = e.best_move();
    assert_eq!(best, "a1a8");
    assert_eq!(lines.last().map(String::as_str), Some("bestmove a1a8"));
}

/// `go mate N` ends when the mate is found, not at the depth N moves would take, and ends at
/// that depth when there is none.
#[test]
fn go_mate_stops_at_the_mate() {
    let mut e = Engine::start();
    let last_depth = |lines: &[String]| {
        lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|d| d.parse::<u32>().ok())
            .unwrap_or_else(|| panic!("no depth: {lines:?}"))
    };
    // Ra8 mates at once: found at depth 1 or 2, not searched on to depth 16.
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    e.send("go mate 8");
    let (best, lines) = e.best_move();
    assert_eq!(best, "a1a8", "{lines:?}");
    assert!(last_depth(&lines) <= 2, "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1 ")),
        "{lines:?}"
    );
    // No mate in two from the start: the search ends at depth 4 all the same.
    e.send("position startpos");
    e.send("go mate 2");
    let (_, lines) = e.best_move();
    assert_eq!(last_depth(&lines), 4, "{lines:?}");
}

/// `debug on`: each `go` first says what it searches with, the time budget included (a
/// user who wonders why a move took the time it did can see it); `debug off` stops it.
/// `register` is accepted: nothing to register.
#[test]
fn debug_mode_reports_each_search_and_register_is_accepted() {
    let mut e = Engine::start();
    e.send("register later");
    e.send("setoption name Threads value 2");
    e.send("setoption name Move Overhead value 100");
    e.send("debug on");
    e.send("position startpos");
    // A refused go says no debug line: it searches nothing.
    e.send("go searchmoves e2e5 depth 2");
    let lines = e.until("info string error");
    assert!(!lines.iter().any(|l| l.contains("debug:")), "{lines:?}");
    e.send("go wtime 10000 btime 10000");
    let (_, lines) = e.best_move();
    let debug: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info string debug:"))
        .collect();
    assert_eq!(debug.len(), 1, "{lines:?}");
    assert!(
        debug[0].contains("variant chess")
            && debug[0].contains("threads 2")
            && debug[0].contains("overhead 100 ms")
            && debug[0].contains("budget soft "),
        "{debug:?}"
    );
    e.send("go depth 3");
    let (_, lines) = e.best_move();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string debug:") && l.ends_with("budget untimed")),
        "{lines:?}"
    );
    e.send("debug off");
    e.send("go depth 3");
    let (_, lines) = e.best_move();
    assert!(!lines.iter().any(|l| l.contains("debug")), "{lines:?}");
}

/// `go ponder`: no move before `ponderhit` or `stop`, whatever the clock says and even when
/// the search itself is over (a depth reached); after either the move comes.
#[test]
fn pondering_waits_for_ponderhit_or_stop() {
    let mut e = Engine::start();
    e.send("uci");
    let options = e.until("uciok");
    assert!(options
        .iter()
        .any(|l| l == "option name Ponder type check default false"));
    e.send("setoption name Ponder value true");
    e.send("position startpos moves e2e4");
    // A 100 ms clock: a timed search would have moved long before.
    e.send("go ponder wtime 100 btime 100");
    std::thread::sleep(Duration::from_millis(600));
    e.send("isready");
    let lines = e.until("readyok");
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    e.send("ponderhit");
    e.best_move();
    for end in ["ponderhit", "stop"] {
        e.send("go ponder depth 2");
        std::thread::sleep(Duration::from_millis(300));
        e.send("isready");
        let lines = e.until("readyok");
        assert!(
            !lines.iter().any(|l| l.starts_with("bestmove")),
            "{end}: {lines:?}"
        );
        e.send(end);
        e.best_move();
    }
}
