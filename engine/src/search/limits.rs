//! Search limits as UCI `go` gives them, and the time budget derived from them.

use std::time::Duration;

use crate::params::Params;
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
    /// `go mate N`: a mate for the side to move in at most N moves ends the search (found
    /// at any depth), and the search goes no deeper than 2N plies when `depth` is unset.
    pub mate: Option<u32>,
    /// Time kept in reserve for the GUI and the process (UCI `Move Overhead`); `None` is
    /// [`DEFAULT_OVERHEAD`].
    pub overhead: Option<Duration>,
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

/// Time kept in reserve for the GUI and process overhead unless `Move Overhead` says otherwise.
pub const DEFAULT_OVERHEAD: Duration = Duration::from_millis(20);

/// The most `Move Overhead` may reserve, in milliseconds.
pub const MAX_OVERHEAD_MS: u64 = 5000;

impl Limits {
    /// The budget for `side`'s move, or `None` for untimed searches: without a `movestogo`,
    /// the clock is shared as if `TimeMovesToGo` moves were left, plus `TimeIncShare` percent
    /// of the increment; the hard cap is `TimeHardFactor` percent of that (at most three
    /// quarters of the clock).
    pub fn budget(&self, side: Color, p: &Params) -> Option<TimeBudget> {
        if self.infinite {
            return None;
        }
        let overhead = self.overhead.unwrap_or(DEFAULT_OVERHEAD);
        if let Some(t) = self.movetime {
            let t = t.saturating_sub(overhead / 2).max(Duration::from_millis(1));
            return Some(TimeBudget { soft: t, hard: t });
        }
        let left = self.time[side.index()]?;
        let inc = self.inc[side.index()];
        let usable = left.saturating_sub(overhead).max(Duration::from_millis(1));
        // The parameters are range-checked where they are set; the conversions only keep a
        // value set directly in code from wrapping.
        let percent = |v: i32| u32::try_from(v).unwrap_or(0);
        let moves = match self.movestogo {
            Some(m) => m.clamp(1, 50),
            None => percent(p.time_moves).max(1),
        };
        let soft =
            (usable / moves + inc.saturating_mul(percent(p.time_inc_share)) / 100).min(usable / 2);
        let hard = (soft.saturating_mul(percent(p.time_hard_factor)) / 100)
            .min(usable * 3 / 4)
            .max(soft);
        Some(TimeBudget { soft, hard })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_stay_within_the_clock() {
        let p = Params::default();
        let mut l = Limits {
            time: [Some(Duration::from_secs(10)), None],
            ..Limits::default()
        };
        let b = l.budget(Color::White, &p).expect("timed");
        assert!(b.soft <= b.hard && b.hard < Duration::from_secs(10));
        assert_eq!(l.budget(Color::Black, &p), None);
        l.movetime = Some(Duration::from_millis(500));
        assert!(l.budget(Color::Black, &p).expect("movetime").hard <= Duration::from_millis(500));
        l.infinite = true;
        assert_eq!(l.budget(Color::White, &p), None);
    }

    /// `Move Overhead` is what the budget keeps back: a larger one leaves less to think.
    #[test]
    fn move_overhead_is_kept_back() {
        let p = Params::default();
        let clock = Limits {
            time: [Some(Duration::from_secs(10)), None],
            ..Limits::default()
        };
        let budget = |overhead: Option<Duration>| {
            Limits {
                overhead,
                ..clock.clone()
            }
            .budget(Color::White, &p)
            .expect("timed")
        };
        let (none, default, large) = (
            budget(Some(Duration::ZERO)),
            budget(None),
            budget(Some(Duration::from_secs(5))),
        );
        assert!(large.soft < default.soft && default.soft < none.soft);
        assert!(large.hard <= Duration::from_secs(5));
        let fixed = Limits {
            movetime: Some(Duration::from_millis(1000)),
            overhead: Some(Duration::from_millis(400)),
            ..Limits::default()
        };
        let b = fixed.budget(Color::White, &p).expect("movetime");
        assert_eq!(b.hard, Duration::from_millis(800));
    }

    /// The time parameters move the budget as documented, and a GUI's `movestogo` takes
    /// the place of `TimeMovesToGo`.
    #[test]
    fn time_parameters_shape_the_budget() {
        let limits = Limits {
            time: [Some(Duration::from_millis(20_020)), None],
            inc: [Duration::from_millis(400), Duration::ZERO],
            ..Limits::default()
        };
        let mut p = Params::default();
        let (moves, share, factor) = (20, 50, 200);
        p.time_moves = moves;
        p.time_inc_share = share;
        p.time_hard_factor = factor;
        let b = limits.budget(Color::White, &p).expect("timed");
        // 20 s usable after the 20 ms reserve, a twentieth of it and half the increment.
        let soft = Duration::from_millis(20_000 / moves as u64 + 400 * share as u64 / 100);
        assert_eq!(b.soft, soft);
        assert_eq!(b.hard, soft * factor as u32 / 100);
        let gui = Limits {
            movestogo: Some(10),
            ..limits.clone()
        };
        let b = gui.budget(Color::White, &p).expect("timed");
        assert_eq!(
            b.soft,
            Duration::from_millis(20_000 / 10 + 400 * share as u64 / 100)
        );
        // A huge clock from a GUI does not overflow the arithmetic.
        let huge = Limits {
            time: [Some(Duration::from_millis(u64::MAX)), None],
            inc: [Duration::from_millis(u64::MAX), Duration::ZERO],
            ..Limits::default()
        };
        p.time_hard_factor = 600;
        let b = huge.budget(Color::White, &p).expect("timed");
        assert!(b.soft <= b.hard);
    }
}
