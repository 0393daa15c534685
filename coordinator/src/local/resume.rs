//! Whether a run found in the state folder is still the run the plan describes.
//!
//! `coordinator local` resumes a run by name and plays it with the settings it was created
//! with. A plan edited since (another clock, another seed), or the same command without the
//! `--scale` of the first session, would otherwise be ignored without a word: a user who
//! asked for 400 games a variant would get the 200 of the earlier trial and read them as the
//! 400. So a resumed run's stored settings must be the plan's, and any that are not are
//! named with both values.
//!
//! One setting may differ: a plan with more games than the stored run grows it (the
//! coordinator's "add games", [`crate::extend`]), so a 200-game trial that looks worth it
//! becomes the 400-game run by running the plan as written. Fewer games than stored is a
//! change like any other: games already played cannot be taken back.
//!
//! The players are compared apart from their `sha256` pins (which [`super::pins`] checks with
//! a message of their own, and which runs created before pinning lack), and not at all for a
//! run that takes tuned values (`tuned_from`): its stored players hold the values of the
//! tuning it followed, which the plan does not write.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::RunConfig;

use super::plan::PlannedRun;

/// The most characters of a value shown in the message: a long options table is cut.
const SHOWN: usize = 80;

/// Why a stored run cannot be resumed with the plan.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResumeError {
    /// The stored run was created with other settings than the plan now gives.
    #[error(
        "run {run:?} in {state} was created with other settings than the plan now gives \
         ({}); a resumed run keeps the settings it was created with (only its games may \
         grow): give another --state to play the plan as written, or put the old settings \
         back to resume",
        .changes.join("; ")
    )]
    Changed {
        /// Run name.
        run: String,
        /// The state folder.
        state: String,
        /// One `key: stored value in the state folder, planned value in the plan` each.
        changes: Vec<String>,
    },
    /// The stored run's settings do not read as a run config (a state folder of another
    /// version, or a damaged one).
    #[error(
        "run {run:?} in {state}: its stored settings do not read ({reason}); give another --state"
    )]
    Unreadable {
        /// Run name.
        run: String,
        /// The state folder.
        state: String,
        /// What the config parser said.
        reason: String,
    },
}

/// How a stored run resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resumed {
    /// With the settings it has.
    Unchanged,
    /// With its game budget raised to the plan's.
    Grows {
        /// Games stored.
        from: u64,
        /// Games planned.
        to: u64,
    },
}

/// Checks the stored config of the run named like `planned` against the plan's.
pub fn check(
    planned: &PlannedRun,
    stored_config_toml: &str,
    state: &Path,
) -> Result<Resumed, ResumeError> {
    let state = state.display().to_string();
    let run = planned.config.name.clone();
    let mut stored = RunConfig::parse(stored_config_toml).map_err(|e| ResumeError::Unreadable {
        run: run.clone(),
        state: state.clone(),
        reason: e.to_string(),
    })?;
    let mut plan = planned.config.clone();
    for config in [&mut stored, &mut plan] {
        config.first.sha256.clear();
        if let Some(second) = config.second.as_mut() {
            second.sha256.clear();
        }
    }
    if planned.tuned_from.is_some() {
        stored.first = plan.first.clone();
        stored.second = plan.second.clone();
    }
    let resumed = if stored.games < plan.games {
        let grows = Resumed::Grows {
            from: stored.games,
            to: plan.games,
        };
        stored.games = plan.games;
        grows
    } else {
        Resumed::Unchanged
    };
    if stored == plan {
        return Ok(resumed);
    }
    // What else changed is named (a larger budget beside it is not: it would be granted).
    // The configs decide; their TOML forms only name what differs. Both came from TOML and go
    // back to it, but if one did not, or no top-level key shows the difference, it is still
    // refused, only without the keys.
    let changes = match (toml::Value::try_from(&stored), toml::Value::try_from(&plan)) {
        (Ok(then), Ok(now)) => differences(&then, &now),
        _ => Vec::new(),
    };
    Err(ResumeError::Changed {
        run,
        state,
        changes: if changes.is_empty() {
            vec!["(settings)".into()]
        } else {
            changes
        },
    })
}

/// The top-level keys whose values differ, each with both values.
fn differences(then: &toml::Value, now: &toml::Value) -> Vec<String> {
    let empty = toml::Table::new();
    let then = then.as_table().unwrap_or(&empty);
    let now = now.as_table().unwrap_or(&empty);
    let keys: BTreeSet<&String> = then.keys().chain(now.keys()).collect();
    keys.into_iter()
        .filter(|k| then.get(*k) != now.get(*k))
        .map(|k| {
            format!(
                "{k}: {} in the state folder, {} in the plan",
                shown(then.get(k)),
                shown(now.get(k))
            )
        })
        .collect()
}

fn shown(value: Option<&toml::Value>) -> String {
    let Some(value) = value else {
        return "none".into();
    };
    let text = value.to_string();
    if text.chars().count() <= SHOWN {
        text
    } else {
        let cut: String = text.chars().take(SHOWN).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::plan;

    const PLAN: &str = r#"
title = "resume"

[[runs]]
name = "latte"
kind = "match"
games = 400
seed = 301
[runs.limits]
tc = "10+0.1"
[[runs.variants]]
variant = "latte"
ruleset = "normal"
[runs.first]
engine = "patch"
[runs.second]
engine = "master"
"#;

    fn run(text: &str, scale: f64) -> PlannedRun {
        plan::parse(text, scale, std::path::Path::new("."))
            .expect("plan")
            .runs
            .remove(0)
    }

    fn stored(planned: &PlannedRun) -> String {
        toml::to_string(&planned.table).expect("toml")
    }

    #[test]
    fn the_same_plan_resumes() {
        let p = run(PLAN, 1.0);
        assert_eq!(
            check(&p, &stored(&p), Path::new("s")),
            Ok(Resumed::Unchanged)
        );
    }

    #[test]
    fn a_plan_with_more_games_grows_the_run() {
        let trial = run(PLAN, 0.5);
        let full = run(PLAN, 1.0);
        assert_eq!(
            check(&full, &stored(&trial), Path::new("s")),
            Ok(Resumed::Grows { from: 200, to: 400 })
        );
    }

    #[test]
    fn a_plan_with_fewer_games_is_refused_naming_the_budget() {
        let full = run(PLAN, 1.0);
        let trial = run(PLAN, 0.5);
        let e = check(&trial, &stored(&full), Path::new("s")).expect_err("refused");
        let ResumeError::Changed { run, changes, .. } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(run, "latte");
        assert_eq!(
            changes,
            &["games: 400 in the state folder, 200 in the plan".to_string()]
        );
        assert!(e.to_string().contains("--state"), "{e}");
    }

    #[test]
    fn more_games_do_not_hide_another_change() {
        let old = run(PLAN, 0.5);
        let new = run(&PLAN.replace("seed = 301", "seed = 7"), 1.0);
        let Err(ResumeError::Changed { changes, .. }) = check(&new, &stored(&old), Path::new("s"))
        else {
            panic!("a changed seed resumed");
        };
        assert_eq!(
            changes,
            ["seed: 301 in the state folder, 7 in the plan".to_string()]
        );
    }

    #[test]
    fn every_changed_setting_is_named() {
        let old = run(PLAN, 1.0);
        let new = run(
            &PLAN
                .replace("seed = 301", "seed = 7")
                .replace("10+0.1", "5+0.05"),
            1.0,
        );
        let Err(ResumeError::Changed { changes, .. }) = check(&new, &stored(&old), Path::new("s"))
        else {
            panic!("a changed seed and clock resumed");
        };
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(changes[0].starts_with("limits: "), "{changes:?}");
        assert!(
            changes[1].starts_with("seed: 301 in the state folder, 7"),
            "{changes:?}"
        );
    }

    #[test]
    fn pins_and_tuned_values_are_not_settings() {
        let p = run(PLAN, 1.0);
        let mut pinned = p.table.clone();
        if let Some(toml::Value::Table(first)) = pinned.get_mut("first") {
            first.insert("sha256".into(), toml::Value::String("ab".repeat(32)));
        }
        let pinned = toml::to_string(&pinned).expect("toml");
        assert_eq!(check(&p, &pinned, Path::new("s")), Ok(Resumed::Unchanged));

        let mut tuned = p.clone();
        tuned.tuned_from = Some("tune".into());
        let with_values =
            plan::with_tuned_values(&tuned, &[("KnightValueMg".into(), 260.0, 250.0)])
                .expect("tuned");
        assert_eq!(
            check(&tuned, &with_values, Path::new("s")),
            Ok(Resumed::Unchanged)
        );
        // The same values are a change for a run that does not take them from a tuning.
        assert!(check(&p, &with_values, Path::new("s")).is_err());
    }

    #[test]
    fn stored_settings_that_do_not_read_are_named() {
        let p = run(PLAN, 1.0);
        let e = check(&p, "name = 3", Path::new("s")).expect_err("refused");
        assert!(matches!(e, ResumeError::Unreadable { .. }), "{e:?}");
        assert!(e.to_string().contains("\"latte\""), "{e}");
    }
}
