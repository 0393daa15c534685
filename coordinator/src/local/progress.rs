//! Plain progress lines for `coordinator local`. indicatif hides its bar when stderr is not a
//! terminal (CI logs, `nohup`, a pipe), which left the command silent for the minutes a run
//! takes; there, as with `--quiet`, a line like fastchess's goes to stderr instead: every few
//! seconds while games end, once a minute while none does. The lines are built by pure
//! functions from the same `ShowRun` answer that feeds the bar, so they cost no extra work on
//! the coordinator and are easy to test.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use proto::v1 as pb;

/// How often a plain line is printed at most, when games have been played since the last:
/// often enough to follow a fast run, rarely enough that an hour-long run stays readable.
pub(super) const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// How often a line is printed when no game ended since the last one, to show the run is
/// alive. Games at 10+0.1 take half a minute: a line every five seconds repeated the same
/// figures six times over, a 400-game match logged 500 lines, most of them copies.
pub(super) const ALIVE_EVERY: Duration = Duration::from_secs(60);

/// Whether to print plain lines instead of the bar: asked for (`--quiet`), or the bar would be
/// invisible because stderr, where indicatif draws, is not a terminal. stdout does not matter:
/// redirecting only the final report leaves the bar visible.
pub(super) fn plain_wanted(quiet: bool) -> bool {
    quiet || !std::io::stderr().is_terminal()
}

/// The games this process has seen played and how long that took. The rate counts only this
/// session's games, so a resumed run does not claim the last session's games as played in no
/// time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Session {
    /// Games played since following began.
    pub(super) games: u64,
    /// Time since following began.
    pub(super) elapsed: Duration,
}

/// Keeps the start of one run's session and when the next line is due.
#[derive(Debug)]
pub(super) struct Ticker {
    started: Instant,
    games_at_start: u64,
    /// When the last line was printed and at how many games (none before the first).
    last_line: Option<(Instant, u64)>,
}

impl Ticker {
    /// Starts a session at `games_at_start` games; the first line is due at once, so a log
    /// shows which run started.
    pub(super) fn new(games_at_start: u64) -> Self {
        let now = Instant::now();
        Self {
            started: now,
            games_at_start,
            last_line: None,
        }
    }

    /// The session up to now, with `games` played in all.
    pub(super) fn session(&self, games: u64) -> Session {
        Session {
            games: games.saturating_sub(self.games_at_start),
            elapsed: self.started.elapsed(),
        }
    }

    /// True when a line is due at `games` played: the first at once, then after
    /// [`PLAIN_EVERY`] when games were played since the last line, else after
    /// [`ALIVE_EVERY`].
    pub(super) fn due(&mut self, games: u64) -> bool {
        self.due_at(Instant::now(), games)
    }

    fn due_at(&mut self, now: Instant, games: u64) -> bool {
        if let Some((at, printed)) = self.last_line {
            let wait = if games == printed {
                ALIVE_EVERY
            } else {
                PLAIN_EVERY
            };
            if now.saturating_duration_since(at) < wait {
                return false;
            }
        }
        self.last_line = Some((now, games));
        true
    }
}

/// Games of a run: done and planned (the summary counts pairs).
fn games(d: &pb::RunDetail) -> (u64, u64) {
    let s = d.summary.as_ref();
    let done = s.map_or(0, |s| s.pairs_done);
    let total = s.map_or(0, |s| s.pairs_total);
    (done.saturating_mul(2), total.saturating_mul(2))
}

/// Games per second of a session; 0 until time has passed, rather than a division by zero.
fn rate(session: Session) -> f64 {
    let secs = session.elapsed.as_secs_f64();
    if secs > 0.0 {
        session.games as f64 / secs
    } else {
        0.0
    }
}

/// A duration as `45s`, `3m12s` or `2h05m`: short, and precise enough for an estimate.
fn short_duration(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// Time left at the session's rate; `?` while there is no rate to go by.
fn eta(remaining_games: u64, games_per_sec: f64) -> String {
    if remaining_games == 0 {
        return short_duration(0);
    }
    let secs = remaining_games as f64 / games_per_sec;
    if !(games_per_sec > 0.0 && secs.is_finite()) {
        return "?".into();
    }
    // Finite and positive here, and `as` saturates: no wrap on an absurd estimate.
    short_duration(secs.round() as u64)
}

/// An SPRT's Elo (when it has games) and its LLR against the bounds, or `None` for a run
/// without an SPRT. The LLR says how near a decision is; the Elo, what it is heading for
/// (fishtest shows both: an LLR alone hides a test drifting toward a tiny gain).
///
/// The test counts pairs in index order only (so that which batches come back first cannot
/// steer it), while the Elo counts every pair reported: when the two differ the LLR says how
/// many games it covers, or a user sees it jump while the Elo stands still and suspects a bug.
pub(super) fn sprt_figures(d: &pb::RunDetail) -> Option<String> {
    let p = d.sprt.as_ref()?;
    let mut llr = format!(
        "LLR {:.2} [{:.2}, {:.2}]",
        p.llr, p.lower_bound, p.upper_bound
    );
    let counted = p.counted_pairs.saturating_mul(2);
    if counted < games(d).0 {
        llr.push_str(&format!(" over the first {counted} games"));
    }
    Some(match &d.elo {
        Some(e) => format!(
            "Elo {:+.1} [{:+.1}, {:+.1}], {llr}",
            e.elo, e.ci_low, e.ci_high
        ),
        None => llr,
    })
}

/// The figure a reader of a run of this kind waits for: the LLR against its bounds (SPRT), the
/// iterations (SPSA), White's score under the first rule-set (study), Elo with its interval
/// (match). Empty while there is nothing to show yet.
fn key_figure(d: &pb::RunDetail) -> String {
    let kind = d.summary.as_ref().map_or("", |s| s.kind.as_str());
    match kind {
        "sprt" => sprt_figures(d).unwrap_or_default(),
        "spsa" => d
            .spsa
            .first()
            .map_or_else(String::new, |p| format!("{} iterations", p.iterations)),
        "study" => d
            .study
            .first()
            .filter(|r| r.games > 0)
            .map_or_else(String::new, |r| {
                format!(
                    "{}: White {:.3} [{:.3}, {:.3}]",
                    r.ruleset, r.white_score, r.white_score_low, r.white_score_high
                )
            }),
        _ => d.elo.as_ref().map_or_else(String::new, |e| {
            format!("Elo {:+.1} [{:+.1}, {:+.1}]", e.elo, e.ci_low, e.ci_high)
        }),
    }
}

/// `progress: run N "name": ` — the start every line of a run shares, so a log can be grepped.
fn prefix(run_no: usize, d: &pb::RunDetail) -> String {
    let name = d.summary.as_ref().map_or("", |s| s.name.as_str());
    format!("progress: run {run_no} {name:?}: ")
}

/// Appends `, figure` when there is one.
fn with_figure(mut line: String, d: &pb::RunDetail) -> String {
    let figure = key_figure(d);
    if !figure.is_empty() {
        line.push_str(", ");
        line.push_str(&figure);
    }
    line
}

/// One progress line of run number `run_no` (1-based, in plan order), e.g.
/// `progress: run 1 "tune": 1234/10000 games (12.3%), 45.6 games/s, ETA 3m12s, 617 iterations`.
pub(super) fn progress_line(run_no: usize, d: &pb::RunDetail, session: Session) -> String {
    let (done, total) = games(d);
    let percent = if total > 0 {
        100.0 * done as f64 / total as f64
    } else {
        0.0
    };
    let per_sec = rate(session);
    let line = format!(
        "{}{done}/{total} games ({percent:.1}%), {per_sec:.1} games/s, ETA {}",
        prefix(run_no, d),
        eta(total.saturating_sub(done), per_sec)
    );
    with_figure(line, d)
}

/// The last line of a run: why it ended, after how many games and how long, and its figure.
pub(super) fn finish_line(run_no: usize, d: &pb::RunDetail, session: Session) -> String {
    let (done, total) = games(d);
    let reason = d
        .summary
        .as_ref()
        .map(|s| s.finish_reason.as_str())
        .filter(|r| !r.is_empty())
        .unwrap_or("ended");
    let line = format!(
        "{}{reason} after {done}/{total} games in {}",
        prefix(run_no, d),
        short_duration(session.elapsed.as_secs())
    );
    let mut line = with_figure(line, d);
    if crate::client::sprt_ran_out(d) {
        line.push_str(
            ": undecided; raise the run's `games` in the plan and run the same command to play on",
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(kind: &str, done_pairs: u64, total_pairs: u64) -> pb::RunDetail {
        pb::RunDetail {
            summary: Some(pb::RunSummary {
                name: "name".into(),
                kind: kind.into(),
                pairs_done: done_pairs,
                pairs_total: total_pairs,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn session(games: u64, secs: f64) -> Session {
        Session {
            games,
            elapsed: Duration::from_secs_f64(secs),
        }
    }

    #[test]
    fn match_line_shows_elo_with_its_interval() {
        let mut d = detail("match", 617, 5000);
        d.elo = Some(pb::EloFigures {
            elo: 12.3,
            ci_low: -5.1,
            ci_high: 29.7,
            ..Default::default()
        });
        // 1234 of 10000 games at 45.6 games/s: 8766 left take 192 s.
        assert_eq!(
            progress_line(1, &d, session(1234, 1234.0 / 45.6)),
            "progress: run 1 \"name\": 1234/10000 games (12.3%), 45.6 games/s, ETA 3m12s, \
             Elo +12.3 [-5.1, +29.7]"
        );
    }

    #[test]
    fn sprt_line_shows_llr_against_its_bounds() {
        let mut d = detail("sprt", 50, 1000);
        d.sprt = Some(pb::SprtFigures {
            llr: 1.234,
            lower_bound: -2.944,
            upper_bound: 2.944,
            counted_pairs: 50,
            ..Default::default()
        });
        assert_eq!(
            progress_line(2, &d, session(100, 10.0)),
            "progress: run 2 \"name\": 100/2000 games (5.0%), 10.0 games/s, ETA 3m10s, \
             LLR 1.23 [-2.94, 2.94]"
        );
        // With games behind it, the Elo it is heading for comes first.
        d.elo = Some(pb::EloFigures {
            elo: 8.04,
            ci_low: -10.0,
            ci_high: 26.1,
            ..Default::default()
        });
        assert_eq!(
            progress_line(2, &d, session(100, 10.0)),
            "progress: run 2 \"name\": 100/2000 games (5.0%), 10.0 games/s, ETA 3m10s, \
             Elo +8.0 [-10.0, +26.1], LLR 1.23 [-2.94, 2.94]"
        );
        // Pairs reported beyond one still out are in the Elo but not yet in the test.
        if let Some(p) = d.sprt.as_mut() {
            p.counted_pairs = 44;
        }
        assert_eq!(
            progress_line(2, &d, session(100, 10.0)),
            "progress: run 2 \"name\": 100/2000 games (5.0%), 10.0 games/s, ETA 3m10s, \
             Elo +8.0 [-10.0, +26.1], LLR 1.23 [-2.94, 2.94] over the first 88 games"
        );
    }

    #[test]
    fn spsa_line_shows_the_iterations() {
        let mut d = detail("spsa", 300, 4000);
        d.spsa = vec![pb::SpsaParam {
            name: "KnightValueMg".into(),
            iterations: 300,
            ..Default::default()
        }];
        assert_eq!(
            progress_line(1, &d, session(600, 60.0)),
            "progress: run 1 \"name\": 600/8000 games (7.5%), 10.0 games/s, ETA 12m20s, \
             300 iterations"
        );
    }

    #[test]
    fn study_line_shows_whites_score_of_the_first_ruleset() {
        let mut d = detail("study", 10, 10);
        let row = |ruleset: &str, score: f64| pb::RulesetRow {
            ruleset: ruleset.into(),
            games: 20,
            white_score: score,
            white_score_low: score - 0.1,
            white_score_high: score + 0.1,
            ..Default::default()
        };
        d.study = vec![row("normal", 0.55), row("luft", 0.6)];
        assert_eq!(
            progress_line(3, &d, session(20, 4.0)),
            "progress: run 3 \"name\": 20/20 games (100.0%), 5.0 games/s, ETA 0s, \
             normal: White 0.550 [0.450, 0.650]"
        );
    }

    #[test]
    fn study_without_games_shows_no_figure() {
        let mut d = detail("study", 0, 10);
        d.study = vec![pb::RulesetRow {
            ruleset: "normal".into(),
            ..Default::default()
        }];
        assert_eq!(
            progress_line(1, &d, session(0, 3.0)),
            "progress: run 1 \"name\": 0/20 games (0.0%), 0.0 games/s, ETA ?"
        );
    }

    #[test]
    fn zero_games_so_far_has_no_eta_and_no_figure() {
        let d = detail("match", 0, 100);
        assert_eq!(
            progress_line(1, &d, session(0, 5.0)),
            "progress: run 1 \"name\": 0/200 games (0.0%), 0.0 games/s, ETA ?"
        );
    }

    #[test]
    fn zero_elapsed_does_not_divide_by_zero() {
        let d = detail("match", 10, 100);
        let line = progress_line(1, &d, session(20, 0.0));
        assert!(line.contains("0.0 games/s, ETA ?"), "{line}");
        let empty = progress_line(1, &pb::RunDetail::default(), session(0, 0.0));
        assert_eq!(
            empty,
            "progress: run 1 \"\": 0/0 games (0.0%), 0.0 games/s, ETA 0s"
        );
    }

    #[test]
    fn resumed_run_rates_only_this_sessions_games() {
        let mut ticker = Ticker::new(1000);
        assert!(ticker.due(1000), "the first line is due at once");
        assert!(!ticker.due(1002), "then not before PLAIN_EVERY");
        assert_eq!(ticker.session(1010).games, 10);
        assert_eq!(ticker.session(500).games, 0, "never negative");
    }

    #[test]
    fn a_line_comes_when_games_were_played_or_a_minute_passed() {
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let mut ticker = Ticker::new(0);
        assert!(ticker.due_at(at(0), 0));
        assert!(!ticker.due_at(at(1), 2), "games, but too soon");
        assert!(ticker.due_at(at(5), 2), "games, PLAIN_EVERY later");
        assert!(
            !ticker.due_at(at(30), 2),
            "no game since: the same figures again"
        );
        assert!(!ticker.due_at(at(64), 2));
        assert!(ticker.due_at(at(65), 2), "a minute without a game: alive");
        assert!(ticker.due_at(at(70), 4));
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(short_duration(0), "0s");
        assert_eq!(short_duration(59), "59s");
        assert_eq!(short_duration(192), "3m12s");
        assert_eq!(short_duration(3600 * 2 + 5 * 60 + 59), "2h05m");
        assert_eq!(eta(10, 0.0), "?");
        assert_eq!(eta(10, f64::NAN), "?");
        assert_eq!(eta(u64::MAX, 1e-300), "?");
        assert_eq!(eta(0, 0.0), "0s");
    }

    #[test]
    fn finish_line_gives_reason_games_time_and_figure() {
        let mut d = detail("sprt", 400, 1000);
        if let Some(s) = d.summary.as_mut() {
            s.finish_reason = "sprt accepted".into();
        }
        d.sprt = Some(pb::SprtFigures {
            llr: 2.95,
            lower_bound: -2.94,
            upper_bound: 2.94,
            counted_pairs: 400,
            ..Default::default()
        });
        assert_eq!(
            finish_line(1, &d, session(800, 75.0)),
            "progress: run 1 \"name\": sprt accepted after 800/2000 games in 1m15s, \
             LLR 2.95 [-2.94, 2.94]"
        );
        // The same test out of games before a decision says so, and how to play on.
        if let Some(s) = d.summary.as_mut() {
            s.state = pb::RunState::Finished as i32;
            s.finish_reason = crate::extend::ALL_PAIRS_PLAYED.into();
            s.pairs_done = 1000;
        }
        if let Some(p) = d.sprt.as_mut() {
            p.state = "continue".into();
            p.llr = 1.5;
            p.counted_pairs = 1000;
        }
        assert_eq!(
            finish_line(1, &d, session(2000, 75.0)),
            "progress: run 1 \"name\": all pairs played after 2000/2000 games in 1m15s, \
             LLR 1.50 [-2.94, 2.94]: undecided; raise the run's `games` in the plan and run the \
             same command to play on"
        );
        let d = detail("match", 0, 1);
        assert_eq!(
            finish_line(1, &d, session(0, 0.0)),
            "progress: run 1 \"name\": ended after 0/2 games in 0s"
        );
    }
}
