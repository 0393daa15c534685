//! Raising a run's game budget (fishtest's "add games").
//!
//! A 200-game trial that looks promising, or a study whose intervals are still too wide,
//! should grow into the run it was meant to be, not be pooled by hand with a second run on
//! other seeds. Pairs are dealt to variants and openings by their index alone
//! ([`RunConfig::entry_for_pair`], [`RunConfig::openings_for_pair`]), so pairs
//! `old..new` continue the run exactly as a run planned with `new` games from the start
//! would have played them: the grown run is the bigger run, not a patchwork.
//!
//! What may not grow:
//! - an SPSA run: its gain schedule (`a`, `c` and `A` decay over the planned iterations) is
//!   set by the budget from the first pair, so more games would change the sequence it has
//!   been following;
//! - a stopped run: an operator ended it;
//! - a run that ended for a reason other than playing every pair (an SPRT that decided, a
//!   study whose stop rule fired): its verdict is in; more games would test a decided
//!   hypothesis again, with the same data counted twice toward the decision.
//!
//! A run that ended by playing every pair becomes active again.

use crate::config::{RunConfig, RunKind, MAX_GAMES};
use crate::model::RunStatus;

/// The finish reason of a run that played every pair of its budget: the one ended run a
/// larger budget reopens.
pub const ALL_PAIRS_PLAYED: &str = "all pairs played";

/// Why a run's budget cannot become the one asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtendError {
    /// SPSA runs keep their budget.
    #[error(
        "run {run} is an SPSA tuning: its gain schedule is set by its game budget from the first \
         pair, so more games would change the sequence it has followed; start a new run from \
         its values instead"
    )]
    Spsa {
        /// Run id.
        run: u64,
    },
    /// Stopped runs stay stopped.
    #[error("run {run} was stopped and stays stopped; create a new run to play more games")]
    Stopped {
        /// Run id.
        run: u64,
    },
    /// The run ended with a verdict.
    #[error("run {run} ended with \"{reason}\", not by playing every pair: its verdict stands")]
    Decided {
        /// Run id.
        run: u64,
        /// Its finish reason.
        reason: String,
    },
    /// The new budget is not above the old one.
    #[error("games: run {run} has a budget of {current} games; the new budget must be more, got {asked}")]
    NotMore {
        /// Run id.
        run: u64,
        /// The budget now.
        current: u64,
        /// The budget asked for.
        asked: u64,
    },
    /// The new budget is odd or too large.
    #[error("games: must be an even number of at most {MAX_GAMES} (games come in pairs), got {0}")]
    Invalid(u64),
    /// The stored config text does not read as TOML with a `games` number (a bug, or a
    /// database edited by hand).
    #[error("run {run}: its stored config has no games number to raise ({reason})")]
    Stored {
        /// Run id.
        run: u64,
        /// What was wrong.
        reason: String,
    },
}

/// A run's config with a new budget: the stored text with only its `games` value changed
/// (comments and layout kept), and that text parsed.
#[derive(Debug, Clone)]
pub struct Extended {
    /// The new config text.
    pub config_toml: String,
    /// The new config.
    pub config: RunConfig,
    /// The status the run takes: active for a run that had played every pair, else its own.
    pub status: RunStatus,
}

/// Checks that run `run` may grow to `games` and gives its new config.
pub fn extend(
    run: u64,
    config_toml: &str,
    config: &RunConfig,
    status: RunStatus,
    finish_reason: &str,
    games: u64,
) -> Result<Extended, ExtendError> {
    if config.kind == RunKind::Spsa {
        return Err(ExtendError::Spsa { run });
    }
    let status = match status {
        RunStatus::Stopped => return Err(ExtendError::Stopped { run }),
        RunStatus::Finished if finish_reason != ALL_PAIRS_PLAYED => {
            return Err(ExtendError::Decided {
                run,
                reason: finish_reason.to_string(),
            })
        }
        RunStatus::Finished => RunStatus::Active,
        s @ (RunStatus::Active | RunStatus::Paused) => s,
    };
    if games <= config.games {
        return Err(ExtendError::NotMore {
            run,
            current: config.games,
            asked: games,
        });
    }
    if games > MAX_GAMES || !games.is_multiple_of(2) {
        return Err(ExtendError::Invalid(games));
    }
    let stored = |reason: String| ExtendError::Stored { run, reason };
    let mut doc: toml_edit::DocumentMut = config_toml
        .parse()
        .map_err(|e: toml_edit::TomlError| stored(e.to_string()))?;
    let value = doc
        .get_mut("games")
        .and_then(toml_edit::Item::as_value_mut)
        .filter(|v| v.is_integer())
        .ok_or_else(|| stored("no top-level integer `games`".into()))?;
    let decor = value.decor().clone();
    let signed = i64::try_from(games).map_err(|_| ExtendError::Invalid(games))?;
    *value = toml_edit::Value::from(signed);
    *value.decor_mut() = decor;
    let config_toml = doc.to_string();
    let new = RunConfig::parse(&config_toml).map_err(|e| stored(e.to_string()))?;
    // Only the budget moved: the text edit touched one value, and the parse agrees.
    let mut same = new.clone();
    same.games = config.games;
    if &same != config {
        return Err(stored("the edited config reads differently".into()));
    }
    Ok(Extended {
        config_toml,
        config: new,
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MATCH: &str = "# a trial\nname = \"m\"\nkind = \"match\"\ngames = 200 # first look\n\
                         seed = 3\n[limits]\nnodes = 100\n[[variants]]\nvariant = \"latte\"\n\
                         ruleset = \"normal\"\n[first]\nengine = \"builtin\"\n";

    fn parsed(text: &str) -> RunConfig {
        RunConfig::parse(text).unwrap()
    }

    #[test]
    fn only_the_games_value_changes_and_comments_stay() {
        let c = parsed(MATCH);
        let e = extend(1, MATCH, &c, RunStatus::Active, "", 400).unwrap();
        assert_eq!(
            e.config_toml,
            MATCH.replace("games = 200", "games = 400"),
            "the rest of the text is kept byte for byte"
        );
        assert_eq!(e.config.games, 400);
        assert_eq!(e.status, RunStatus::Active);
    }

    #[test]
    fn a_run_that_played_every_pair_is_reopened_and_a_paused_one_stays_paused() {
        let c = parsed(MATCH);
        let e = extend(1, MATCH, &c, RunStatus::Finished, ALL_PAIRS_PLAYED, 202).unwrap();
        assert_eq!(e.status, RunStatus::Active);
        let e = extend(1, MATCH, &c, RunStatus::Paused, "", 202).unwrap();
        assert_eq!(e.status, RunStatus::Paused);
    }

    #[test]
    fn an_sprt_that_spent_its_budget_undecided_plays_on() {
        let text =
            MATCH.replace("kind = \"match\"", "kind = \"sprt\"") + "[sprt]\nelo0 = 0\nelo1 = 5\n";
        let c = parsed(&text);
        let e = extend(2, &text, &c, RunStatus::Finished, ALL_PAIRS_PLAYED, 1000).unwrap();
        assert_eq!((e.status, e.config.games), (RunStatus::Active, 1000));
        assert_eq!(
            e.config.sprt, c.sprt,
            "the same test, with more games to decide in"
        );
    }

    #[test]
    fn spsa_stopped_and_decided_runs_are_refused_by_name() {
        let c = parsed(MATCH);
        let stopped = extend(4, MATCH, &c, RunStatus::Stopped, "stopped", 400).unwrap_err();
        assert_eq!(stopped, ExtendError::Stopped { run: 4 });
        let decided = extend(4, MATCH, &c, RunStatus::Finished, "sprt accepted", 400).unwrap_err();
        assert!(decided.to_string().contains("sprt accepted"), "{decided}");
        let spsa_text = MATCH.replace("kind = \"match\"", "kind = \"spsa\"")
            + "[spsa]\nparams = \"KnightValueMg,300,200,400,10,0.002\"\n";
        let spsa = parsed(&spsa_text);
        let e = extend(5, &spsa_text, &spsa, RunStatus::Active, "", 400).unwrap_err();
        assert_eq!(e, ExtendError::Spsa { run: 5 });
        assert!(e.to_string().contains("gain schedule"), "{e}");
    }

    #[test]
    fn a_budget_that_does_not_grow_or_is_odd_or_too_large_is_refused() {
        let c = parsed(MATCH);
        for asked in [0, 100, 200] {
            let e = extend(1, MATCH, &c, RunStatus::Active, "", asked).unwrap_err();
            assert_eq!(
                e,
                ExtendError::NotMore {
                    run: 1,
                    current: 200,
                    asked
                }
            );
            assert!(e.to_string().starts_with("games: "), "{e}");
        }
        for asked in [401, MAX_GAMES + 2, u64::MAX] {
            let e = extend(1, MATCH, &c, RunStatus::Active, "", asked).unwrap_err();
            assert_eq!(e, ExtendError::Invalid(asked));
        }
    }

    #[test]
    fn a_stored_text_without_a_games_number_is_named_not_guessed() {
        let c = parsed(MATCH);
        for text in ["games = [", "name = \"m\"\n", "games = \"200\"\n"] {
            let e = extend(1, text, &c, RunStatus::Active, "", 400).unwrap_err();
            assert!(matches!(e, ExtendError::Stored { run: 1, .. }), "{e}");
        }
        // Text that is not the run's config is caught by the comparison.
        let other = MATCH.replace("seed = 3", "seed = 4");
        let e = extend(1, &other, &c, RunStatus::Active, "", 400).unwrap_err();
        assert!(e.to_string().contains("reads differently"), "{e}");
    }
}
