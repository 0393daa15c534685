//! A UCI engine for tests that misbehaves on request. Without flags it is our engine's UCI
//! front end; flags make it fail after a number of `go` commands of its lifetime:
//!
//! `--crash-after N`, `--hang-after N`, `--illegal-after N`, `--garbage-after N`,
//! `--delay-ms MS` (before every answer), `--noise` (junk lines before every answer),
//! `--no-uciok`, `--exit-at-start`, `--crash-on-newgame N` (at the N+1-th `ucinewgame`),
//! `--spawn-child` with `--child-pid-file PATH` (starts a `sleep` child that must die with the
//! engine's process group, and writes its pid there).

use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn flag_value(args: &[String], name: &str) -> Option<u64> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    if has("--exit-at-start") {
        std::process::exit(1);
    }
    let crash_after = flag_value(&args, "--crash-after");
    let hang_after = flag_value(&args, "--hang-after");
    let illegal_after = flag_value(&args, "--illegal-after");
    let garbage_after = flag_value(&args, "--garbage-after");
    let crash_on_newgame = flag_value(&args, "--crash-on-newgame");
    let delay = flag_value(&args, "--delay-ms").map(Duration::from_millis);
    let noise = has("--noise");
    let no_uciok = has("--no-uciok");
    let _child = if has("--spawn-child") {
        std::process::Command::new("sleep").arg("300").spawn().ok()
    } else {
        None
    };
    if let (Some(child), Some(i)) = (&_child, args.iter().position(|a| a == "--child-pid-file")) {
        if let Some(path) = args.get(i + 1) {
            let _ = std::fs::write(path, child.id().to_string());
        }
    }

    let out: engine::uci::Output = Arc::new(Mutex::new(std::io::stdout()));
    let say = |line: &str| {
        let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    };
    if let Some(child) = &_child {
        say(&format!("info string child {}", child.id()));
    }
    let mut uci = engine::uci::Uci::new(Arc::clone(&out));
    let mut gos = 0u64;
    let mut newgames = 0u64;
    let mut hung = false;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if hung {
            continue;
        }
        let cmd = line.split_whitespace().next().unwrap_or("");
        match cmd {
            "uci" if no_uciok => continue,
            "ucinewgame" => {
                if crash_on_newgame.is_some_and(|n| newgames >= n) {
                    std::process::exit(3);
                }
                newgames += 1;
            }
            "go" => {
                let n = gos;
                gos += 1;
                if crash_after.is_some_and(|k| n >= k) {
                    std::process::exit(3);
                }
                if hang_after.is_some_and(|k| n >= k) {
                    hung = true;
                    continue;
                }
                if illegal_after.is_some_and(|k| n >= k) {
                    say("info depth 1 score cp 0");
                    say("bestmove a1a1");
                    continue;
                }
                if garbage_after.is_some_and(|k| n >= k) {
                    say("\u{1b}[31m%%%% not uci at all \u{fffd}");
                    say("info depth x score cp banana");
                    say("bestmove !!garbage!!");
                    continue;
                }
                if noise {
                    say("this line is junk");
                    say("info string hello; info depth oops");
                    say("bestmovex e2e4");
                }
                if let Some(d) = delay {
                    std::thread::sleep(d);
                }
            }
            _ => {}
        }
        if !uci.handle(&line) {
            return;
        }
    }
}
