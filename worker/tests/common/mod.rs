//! Helpers shared by the worker's integration tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::time::Duration;

use engine::eval::SearchPosition;
use engine::notation::parse_uci;
use engine::Game;
use worker::player::{GoRequest, Player, PlayerError, Reply};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Step {
    /// Play this move (coordinate notation) reporting this score and time.
    Move(&'static str, Option<i32>, Duration),
    /// Fail.
    Fail(PlayerError),
}

/// A player that answers from a script: tests the runner apart from any engine.
pub struct Scripted {
    pub name: String,
    pub steps: VecDeque<Step>,
    pub new_game_error: Option<PlayerError>,
}

impl Scripted {
    pub fn new(name: &str, steps: Vec<Step>) -> Self {
        Scripted {
            name: name.into(),
            steps: steps.into(),
            new_game_error: None,
        }
    }

    /// Moves with the same score and no time.
    pub fn moves(name: &str, moves: &[&'static str], score: Option<i32>) -> Self {
        Scripted::new(
            name,
            moves
                .iter()
                .map(|&m| Step::Move(m, score, Duration::ZERO))
                .collect(),
        )
    }
}

impl<P: SearchPosition> Player<P> for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn new_game(&mut self, _game: &Game<P>) -> Result<(), PlayerError> {
        match self.new_game_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn go(&mut self, game: &Game<P>, _request: &GoRequest) -> Result<Reply<P::Move>, PlayerError> {
        match self.steps.pop_front() {
            Some(Step::Move(text, score, elapsed)) => {
                let mv = parse_uci(game.position(), text)
                    .map_err(|_| PlayerError::IllegalMove(text.to_string()))?;
                Ok(Reply {
                    mv,
                    score,
                    depth: Some(1),
                    nodes: Some(1),
                    elapsed,
                })
            }
            Some(Step::Fail(e)) => Err(e),
            None => Err(PlayerError::Crash("script ended".into())),
        }
    }
}

/// The fake UCI engine built with this crate.
pub fn fake_uci() -> &'static str {
    env!("CARGO_BIN_EXE_fake-uci")
}

/// Whether a process is gone (or a zombie no one has reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// Waits up to `timeout` for `f` to hold.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
