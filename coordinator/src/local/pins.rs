//! Which build of each external engine a local run is played with.
//!
//! `coordinator local` resumes a run from its state folder by name, and an external engine is
//! only a name and a path on the command line. Without a record of the build, running the
//! same command after a rebuild (or with the other patch of an SPRT) would add the new build's
//! games to the old build's totals, silently. So a new run is pinned to the SHA-256 of each
//! external engine as declared when it is created (the workers then refuse leases for any
//! other build), and a resumed run must be given the builds it was pinned to.

use std::path::Path;

use worker::cluster::engines::{EngineRefused, Engines};

use super::plan::{Plan, PlannedRun};

/// Why a plan's engines do not fit the declared builds or the stored runs.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PinError {
    /// The plan pins a build other than the one declared with `--engine`.
    #[error(
        "run {run:?}: {side}.sha256 pins engine {engine:?} to {pinned}, but --engine {engine}=... \
         is {declared}: declare that build"
    )]
    PlanPin {
        /// Run name.
        run: String,
        /// `first` or `second`.
        side: &'static str,
        /// Engine name.
        engine: String,
        /// The plan's digest.
        pinned: String,
        /// The declared file's digest.
        declared: String,
    },
    /// A run in the state folder was played with another build of an engine.
    #[error(
        "run {run:?} in {state} was played with engine {engine:?} of sha256 {stored}, but \
         --engine {engine}=... is now {declared}: give the build it began with to resume it, \
         or another --state to start afresh"
    )]
    Resumed {
        /// Run name.
        run: String,
        /// The state folder.
        state: String,
        /// Engine name.
        engine: String,
        /// The stored run's digest.
        stored: String,
        /// The declared file's digest.
        declared: String,
    },
    /// A declared network file plays a game it is not for.
    #[error(
        "run {run:?} plays {variant}, but engine {engine:?} is a network for {network}: \
         declare a {variant} network, or play it in {network} games only"
    )]
    NetworkGame {
        /// Run name.
        run: String,
        /// Engine name.
        engine: String,
        /// The network's game.
        network: engine::Variant,
        /// The run's variant entry that it cannot play.
        variant: String,
    },
    /// An option our engine does not have, or a value out of its range, for a declared network
    /// file (our engine plays it, so its options are our engine's parameters).
    #[error("run {run:?}: {source}")]
    NetworkOption {
        /// Run name.
        run: String,
        /// The field and the problem.
        source: crate::config::ConfigError,
    },
    /// The plan names an engine that is not declared with `--engine`.
    #[error(
        "run {run:?} plays the external engine {engine:?}: declare it with --engine {engine}=PATH"
    )]
    Undeclared {
        /// Run name.
        run: String,
        /// Engine name.
        engine: String,
    },
}

const SIDES: [&str; 2] = ["first", "second"];

/// Pins every external player of `plan` without a `sha256` to the declared build, and checks
/// that each external engine is declared and that a pin the plan gives itself is the declared
/// build: otherwise the local workers would refuse every lease and the run would wait forever.
pub fn pin(plan: &mut Plan, engines: &Engines) -> Result<(), PinError> {
    for run in &mut plan.runs {
        let players = [Some(&mut run.config.first), run.config.second.as_mut()];
        for (side, player) in SIDES.into_iter().zip(players) {
            let Some(player) = player else { continue };
            if player.is_builtin() {
                continue;
            }
            let declared = match engines.resolve(&player.engine, &player.sha256) {
                Ok(e) => {
                    // A network file evaluates its own game only: the workers would refuse
                    // every lease of another.
                    if let Some(net) = e.network() {
                        let other = run.config.variants.iter().find(|v| {
                            v.variant.parse::<engine::Variant>().ok() != Some(net.variant)
                        });
                        if let Some(v) = other {
                            return Err(PinError::NetworkGame {
                                run: run.config.name.clone(),
                                engine: player.engine.clone(),
                                network: net.variant,
                                variant: v.variant.clone(),
                            });
                        }
                        // Checked as the built-in engine's are at create, instead of by
                        // every worker refusing the lease.
                        crate::config::check_builtin_options(side, player).map_err(|source| {
                            PinError::NetworkOption {
                                run: run.config.name.clone(),
                                source,
                            }
                        })?;
                    }
                    e.sha256().to_string()
                }
                Err(EngineRefused::Undeclared(engine)) => {
                    return Err(PinError::Undeclared {
                        run: run.config.name.clone(),
                        engine,
                    })
                }
                Err(EngineRefused::DigestMismatch {
                    name,
                    pinned,
                    declared,
                }) => {
                    return Err(PinError::PlanPin {
                        run: run.config.name.clone(),
                        side,
                        engine: name,
                        pinned,
                        declared,
                    })
                }
            };
            if player.sha256.is_empty() {
                player.sha256.clone_from(&declared);
                if let Some(toml::Value::Table(t)) = run.table.get_mut(side) {
                    t.insert("sha256".into(), toml::Value::String(declared));
                }
            }
        }
    }
    Ok(())
}

/// Checks a stored run (its config as created) against the pinned plan's run of the same
/// name before resuming it. A stored run without a pin (created before runs were pinned) can
/// not be checked and passes.
pub fn check_resumed(
    planned: &PlannedRun,
    stored_config_toml: &str,
    state: &Path,
) -> Result<(), PinError> {
    let Ok(stored) = stored_config_toml.parse::<toml::Table>() else {
        return Ok(());
    };
    for side in SIDES {
        let (Some(toml::Value::Table(now)), Some(toml::Value::Table(then))) =
            (planned.table.get(side), stored.get(side))
        else {
            continue;
        };
        let sha = |t: &toml::Table| {
            t.get("sha256")
                .and_then(toml::Value::as_str)
                .unwrap_or_default()
                .to_ascii_lowercase()
        };
        let (declared, pinned) = (sha(now), sha(then));
        if !pinned.is_empty() && !declared.is_empty() && pinned != declared {
            return Err(PinError::Resumed {
                run: planned.config.name.clone(),
                state: state.display().to_string(),
                engine: now
                    .get("engine")
                    .and_then(toml::Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                stored: pinned,
                declared,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use worker::cluster::engines::EngineArg;

    const PLAN: &str = r#"
title = "pins"

[[runs]]
name = "a-vs-b"
kind = "match"
games = 10
seed = 1
[runs.limits]
nodes = 1000
[[runs.variants]]
variant = "latte"
ruleset = "normal"
[runs.first]
engine = "a"
[runs.second]
engine = "b"
"#;

    fn engines(dir: &Path, a: &[u8], b: &[u8]) -> Engines {
        let mut args = Vec::new();
        for (name, body) in [("a", a), ("b", b)] {
            let path = dir.join(name);
            std::fs::write(&path, body).expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            args.push(EngineArg {
                name: name.into(),
                path,
            });
        }
        Engines::declare(&args).expect("declared")
    }

    fn sha_of(engines: &Engines, name: &str) -> String {
        engines
            .iter()
            .find(|e| e.name() == name)
            .expect("declared")
            .sha256()
            .to_string()
    }

    #[test]
    fn a_new_run_is_pinned_to_the_declared_builds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engines = engines(dir.path(), b"build one", b"build two");
        let mut plan =
            super::super::plan::parse(PLAN, 1.0, std::path::Path::new(".")).expect("plan");
        pin(&mut plan, &engines).expect("pinned");
        let run = &plan.runs[0];
        assert_eq!(run.config.first.sha256, sha_of(&engines, "a"));
        assert_eq!(
            run.config.second.as_ref().map(|p| p.sha256.clone()),
            Some(sha_of(&engines, "b"))
        );
        // What the coordinator stores is the table: it carries the pins too, and stays a
        // valid run config.
        let text = toml::to_string(&run.table).expect("toml");
        let back = crate::config::RunConfig::parse(&text).expect("valid config");
        assert_eq!(back.first.sha256, sha_of(&engines, "a"));
    }

    #[test]
    fn a_plan_pin_that_is_not_the_declared_build_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engines = engines(dir.path(), b"build one", b"build two");
        let pinning_b = |sha: &str| {
            let text = PLAN.replace(
                "[runs.second]\nengine = \"b\"",
                &format!("[runs.second]\nengine = \"b\"\nsha256 = \"{sha}\""),
            );
            super::super::plan::parse(&text, 1.0, std::path::Path::new(".")).expect("plan")
        };
        let mut plan = pinning_b(&"0".repeat(64));
        let e = pin(&mut plan, &engines).expect_err("refused");
        assert!(
            matches!(&e, PinError::PlanPin { side: "second", .. }),
            "{e}"
        );
        assert!(e.to_string().contains(&sha_of(&engines, "b")), "{e}");
        // A pin that is the declared build passes.
        let mut plan = pinning_b(&sha_of(&engines, "b"));
        pin(&mut plan, &engines).expect("the same build");
    }

    #[test]
    fn resuming_with_another_build_is_refused_and_with_the_same_passes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let before = engines(dir.path(), b"build one", b"build two");
        let mut plan =
            super::super::plan::parse(PLAN, 1.0, std::path::Path::new(".")).expect("plan");
        pin(&mut plan, &before).expect("pinned");
        let stored = toml::to_string(&plan.runs[0].table).expect("toml");
        let state = dir.path().join("state");

        let mut same =
            super::super::plan::parse(PLAN, 1.0, std::path::Path::new(".")).expect("plan");
        pin(&mut same, &before).expect("pinned");
        check_resumed(&same.runs[0], &stored, &state).expect("same builds");

        // `b` rebuilt: its games must not join the old build's.
        let after = engines(dir.path(), b"build one", b"build two, patched");
        let mut rebuilt =
            super::super::plan::parse(PLAN, 1.0, std::path::Path::new(".")).expect("plan");
        pin(&mut rebuilt, &after).expect("pinned");
        let e = check_resumed(&rebuilt.runs[0], &stored, &state).expect_err("refused");
        let PinError::Resumed {
            engine,
            stored: s,
            declared,
            ..
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!(engine, "b");
        assert_eq!(s, &sha_of(&before, "b"));
        assert_eq!(declared, &sha_of(&after, "b"));
        assert!(e.to_string().contains("--state"), "{e}");

        // A run stored before runs were pinned cannot be checked: it resumes.
        let unpinned = toml::to_string(
            &super::super::plan::parse(PLAN, 1.0, std::path::Path::new("."))
                .expect("plan")
                .runs[0]
                .table,
        )
        .expect("toml");
        check_resumed(&rebuilt.runs[0], &unpinned, &state).expect("nothing to check");
    }
}
