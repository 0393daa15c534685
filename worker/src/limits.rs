//! What bounds each move of a game: a node count, a depth, a fixed time, or a clock kept by the
//! runner.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::WorkerError;

/// The limit per move, the same for both players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeControl {
    /// Search this many nodes per move (deterministic for our engine).
    Nodes(u64),
    /// Search to this depth.
    Depth(u32),
    /// Think this long per move; an answer later than this plus the margin loses on time.
    MoveTime(Duration),
    /// A clock per side: `base` at the start, `inc` added after each move.
    Clock {
        /// Starting time.
        base: Duration,
        /// Increment per move.
        inc: Duration,
    },
}

impl TimeControl {
    /// Whether time decides this control (a late answer loses on time, and times are worth
    /// writing into the PGN).
    pub fn is_timed(self) -> bool {
        matches!(self, TimeControl::MoveTime(_) | TimeControl::Clock { .. })
    }

    /// The value of the PGN `TimeControl` tag: the standard `base+inc` (seconds) for a clock,
    /// `nodes=N`, `depth=N` or `movetime=S` otherwise.
    pub fn pgn_tag(self) -> String {
        self.to_string()
    }
}

fn secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeControl::Nodes(n) => write!(f, "nodes={n}"),
            TimeControl::Depth(d) => write!(f, "depth={d}"),
            TimeControl::MoveTime(t) => write!(f, "movetime={}", secs(t)),
            TimeControl::Clock { base, inc } => write!(f, "{}+{}", secs(base), secs(inc)),
        }
    }
}

fn parse_secs(text: &str, whole: &str) -> Result<Duration, WorkerError> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| WorkerError::TimeControl(whole.to_string()))?;
    if !(v.is_finite() && (0.0..1e7).contains(&v)) {
        return Err(WorkerError::TimeControl(whole.to_string()));
    }
    Ok(Duration::from_secs_f64(v))
}

impl FromStr for TimeControl {
    type Err = WorkerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || WorkerError::TimeControl(s.to_string());
        if let Some((key, value)) = s.split_once('=') {
            return match key.trim() {
                "nodes" | "n" | "N" => value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(TimeControl::Nodes)
                    .ok_or_else(bad),
                "depth" | "d" | "D" => value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&d| (1..=100).contains(&d))
                    .map(TimeControl::Depth)
                    .ok_or_else(bad),
                "movetime" | "st" | "MT" => {
                    let t = parse_secs(value, s)?;
                    if t.is_zero() {
                        return Err(bad());
                    }
                    Ok(TimeControl::MoveTime(t))
                }
                _ => Err(bad()),
            };
        }
        let (base, inc) = s.split_once('+').unwrap_or((s, "0"));
        let base = parse_secs(base, s)?;
        let inc = parse_secs(inc, s)?;
        if base.is_zero() {
            return Err(bad());
        }
        Ok(TimeControl::Clock { base, inc })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for (text, tc) in [
            ("nodes=5000", TimeControl::Nodes(5000)),
            ("depth=7", TimeControl::Depth(7)),
            (
                "movetime=0.5",
                TimeControl::MoveTime(Duration::from_millis(500)),
            ),
            (
                "10+0.1",
                TimeControl::Clock {
                    base: Duration::from_secs(10),
                    inc: Duration::from_millis(100),
                },
            ),
        ] {
            assert_eq!(text.parse::<TimeControl>().expect("valid"), tc);
            assert_eq!(tc.to_string(), text);
        }
        for bad in [
            "nodes=0", "nodes=x", "depth=0", "10+x", "hours=3", "-5+1", "",
        ] {
            let err = bad.parse::<TimeControl>().expect_err(bad);
            assert!(err.to_string().contains(bad), "{err}");
        }
    }
}
