//! Search limits as UCI `go` gives them, and the time budget derived from them.

use std::time::Duration;

use crate::types::Color;

/// What bounds a search. Nothing set means "until stopped".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Maximum iterative-deepening depth.
    pub depth: Option<u32>,
    /// Maximum nodes (deterministic: the same nodes give the same move).
    pub nodes: Option<u64>,
    /// Fixed time for this move.
    pub movetime: Option<Duration>,
    /// Remaining clock time per side.
    pub time: [Option<Duration>; 2],
    /// Increment per side.
    pub inc: [Duration; 2],
    /// Moves to the next time control.
    pub movestogo: Option<u32>,
    /// Search until `stop`.
    pub infinite: bool,
}

/// The time a search may use: a soft target checked between iterations and a hard cap checked
/// during the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Do not start another iteration after this.
    pub soft: Duration,
    /// Stop the search at this point.
    pub hard: Duration,
}

/// Time kept in reserve for the GUI and process overhead.
const OVERHEAD: Duration = Duration::from_millis(20);

impl Limits {
    /// The budget for `side`'s move, or `None` for untimed searches.
    pub fn budget(&self, side: Color) -> Option<TimeBudget> {
        if self.infinite {
            return None;
        }
        if let Some(t) = self.movetime {
            let t = t.saturating_sub(OVERHEAD / 2).max(Duration::from_millis(1));
            return Some(TimeBudget { soft: t, hard: t });
        }
        let left = self.time[side.index()]?;
        let inc = self.inc[side.index()];
        let usable = left.saturating_sub(OVERHEAD).max(Duration::from_millis(1));
        let moves = self.movestogo.unwrap_or(25).clamp(1, 50);
        let soft = (usable / moves + inc * 3 / 4).min(usable / 2);
        let hard = (soft * 3).min(usable * 3 / 4).max(soft);
        Some(TimeBudget { soft, hard })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_stay_within_the_clock() {
        let mut l = Limits {
            time: [Some(Duration::from_secs(10)), None],
            ..Limits::default()
        };
        let b = l.budget(Color::White).expect("timed");
        assert!(b.soft <= b.hard && b.hard < Duration::from_secs(10));
        assert_eq!(l.budget(Color::Black), None);
        l.movetime = Some(Duration::from_millis(500));
        assert!(l.budget(Color::Black).expect("movetime").hard <= Duration::from_millis(500));
        l.infinite = true;
        assert_eq!(l.budget(Color::White), None);
    }
}
