//! A local plan: the runs `coordinator local` plays one after the other, each a run config as
//! `coordinator run create` takes it, under `[[runs]]`. One extra key links runs:
//! `tuned_from = "<name of an earlier spsa run>"` makes the run's `first` player use that
//! run's final values and its `second` player the values the tuning started from, so a
//! tuning can be followed by a match that measures what it gained. A player may also name
//! `options_file = "weights.txt"` (read beside the plan; see [`crate::options_file`]).
//!
//! ```toml
//! title = "Quickstart"
//!
//! [[runs]]
//! name = "tune"
//! kind = "spsa"
//! # ... as any run config
//!
//! [[runs]]
//! name = "check"
//! kind = "match"
//! tuned_from = "tune"
//! # ...
//! ```

use std::path::Path;

use crate::config::{ConfigError, RunConfig, RunKind};

/// One run of a plan.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// The run's table, as written (with the budget scaled), without `tuned_from`.
    pub table: toml::Table,
    /// The parsed config (validated).
    pub config: RunConfig,
    /// The SPSA run whose result this run measures.
    pub tuned_from: Option<String>,
}

/// A parsed plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Title of the report.
    pub title: String,
    /// The runs, in order.
    pub runs: Vec<PlannedRun>,
}

impl Plan {
    /// Keeps only the runs named in `only` (all when it is empty), in the plan's order. A
    /// name the plan does not have is refused, naming the runs it has.
    pub fn select(&mut self, only: &[String]) -> Result<(), ConfigError> {
        if let Some(missing) = only
            .iter()
            .find(|n| !self.runs.iter().any(|r| &r.config.name == *n))
        {
            let names: Vec<&str> = self.runs.iter().map(|r| r.config.name.as_str()).collect();
            return Err(err(
                "runs",
                format!(
                    "the plan has no run {missing:?} (its runs: {})",
                    names.join(", ")
                ),
            ));
        }
        if !only.is_empty() {
            self.runs.retain(|r| only.contains(&r.config.name));
        }
        Ok(())
    }
}

impl Plan {
    /// Gives every SPRT run of the plan the bounds `<elo0, elo1>` (in the unit its `model`
    /// says) in place of those it was written with: one plan tests changes of every size,
    /// as fishtest's tests choose their bounds, without a copy of the plan per bound. A plan
    /// without an SPRT run is refused: the bounds would silently mean nothing.
    pub fn set_sprt_bounds(&mut self, elo0: f64, elo1: f64) -> Result<(), ConfigError> {
        let mut found = false;
        for run in &mut self.runs {
            if run.config.kind != RunKind::Sprt {
                continue;
            }
            found = true;
            let name = run.config.name.clone();
            let at = |f: &str| format!("--sprt-bounds (run {name:?}): {f}");
            let mut table = run.table.clone();
            let sprt = match table.get_mut("sprt") {
                Some(toml::Value::Table(t)) => t,
                _ => return Err(err(at("sprt"), "the run has no [sprt] table")),
            };
            sprt.insert("elo0".into(), toml::Value::Float(elo0));
            sprt.insert("elo1".into(), toml::Value::Float(elo1));
            let text = toml::to_string(&table).map_err(|e| err(at("sprt"), e.to_string()))?;
            run.config = RunConfig::parse(&text).map_err(|e| err(at(&e.field), e.message))?;
            run.table = table;
        }
        if found {
            Ok(())
        } else {
            Err(err("--sprt-bounds", "the plan has no run of kind \"sprt\""))
        }
    }
}

impl Plan {
    /// Gives every run of the plan the seed `seed` in place of its own: the same plan played
    /// again on other openings and other per-pair seeds, an independent repeat of a test
    /// rather than the same games in the same order (which a plan's fixed seed makes of a
    /// second run), without a copy of the plan per seed. TOML integers are signed, so a seed
    /// beyond `i64::MAX` is refused by name rather than wrapped.
    pub fn set_seed(&mut self, seed: u64) -> Result<(), ConfigError> {
        let value = i64::try_from(seed).map_err(|_| {
            err(
                "--seed",
                format!("{seed} is beyond {} (a TOML integer)", i64::MAX),
            )
        })?;
        for run in &mut self.runs {
            let name = run.config.name.clone();
            let at = |f: &str| format!("--seed (run {name:?}): {f}");
            let mut table = run.table.clone();
            table.insert("seed".into(), toml::Value::Integer(value));
            let text = toml::to_string(&table).map_err(|e| err(at("seed"), e.to_string()))?;
            run.config = RunConfig::parse(&text).map_err(|e| err(at(&e.field), e.message))?;
            run.table = table;
        }
        Ok(())
    }
}

fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// Reads a plan. `scale` multiplies every game budget (at least one pair stays), for quick
/// trials of a plan; SPSA schedules follow the scaled budget. `dir` is where the players'
/// `options_file`s are read from (the plan's directory, [`crate::options_file::plan_dir`]).
pub fn parse(text: &str, scale: f64, dir: &Path) -> Result<Plan, ConfigError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(err("--scale", format!("{scale} is not a positive number")));
    }
    let mut doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| err("(toml)", e.message().to_string()))?;
    let title = match doc.remove("title") {
        None => "Local run".to_string(),
        Some(toml::Value::String(s)) => s,
        Some(_) => return Err(err("title", "must be a string")),
    };
    let runs = match doc.remove("runs") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a,
        Some(_) => {
            return Err(err(
                "runs",
                "must be a non-empty array of tables ([[runs]])",
            ))
        }
        None => {
            return Err(err(
                "runs",
                "missing: a plan lists its runs as [[runs]] tables",
            ))
        }
    };
    if let Some(k) = doc.keys().next() {
        return Err(err(
            k.clone(),
            "unknown key (a plan has `title` and `[[runs]]`)",
        ));
    }
    let mut out: Vec<PlannedRun> = Vec::new();
    for (i, value) in runs.into_iter().enumerate() {
        let at = |f: &str| format!("runs[{i}].{f}");
        let toml::Value::Table(mut table) = value else {
            return Err(err(format!("runs[{i}]"), "must be a table"));
        };
        let tuned_from = match table.remove("tuned_from") {
            None => None,
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => {
                return Err(err(
                    at("tuned_from"),
                    "must be the name of an earlier spsa run",
                ))
            }
        };
        if scale != 1.0 {
            if let Some(toml::Value::Integer(g)) = table.get("games") {
                // Saturating: an absurd budget stays absurd (and is refused by the config
                // check) instead of overflowing.
                let scaled = ((*g as f64 * scale / 2.0).round() as i64)
                    .max(1)
                    .saturating_mul(2);
                table.insert("games".into(), toml::Value::Integer(scaled));
            }
        }
        crate::options_file::resolve(&mut table, dir, &format!("runs[{i}]."))?;
        let text = toml::to_string(&table).map_err(|e| err(format!("runs[{i}]"), e.to_string()))?;
        let config = RunConfig::parse(&text).map_err(|e| err(at(&e.field), e.message))?;
        if out.iter().any(|r| r.config.name == config.name) {
            return Err(err(
                at("name"),
                format!("{:?} is used by an earlier run of the plan", config.name),
            ));
        }
        if let Some(source) = &tuned_from {
            match out.iter().find(|r| &r.config.name == source) {
                Some(r) if r.config.kind == RunKind::Spsa => {}
                Some(_) => {
                    return Err(err(
                        at("tuned_from"),
                        format!("run {source:?} is not an spsa run"),
                    ))
                }
                None => {
                    return Err(err(
                        at("tuned_from"),
                        format!("no earlier run is named {source:?}"),
                    ))
                }
            }
        }
        out.push(PlannedRun {
            table,
            config,
            tuned_from,
        });
    }
    Ok(Plan { title, runs: out })
}

/// The config text of a run measuring a tuning: `first` plays the tuned values, `second`
/// the start values. Values are rounded to the integers the engine's parameters take.
pub fn with_tuned_values(
    run: &PlannedRun,
    params: &[(String, f64, f64)],
) -> Result<String, ConfigError> {
    let mut table = run.table.clone();
    for (key, pick) in [("first", 0usize), ("second", 1usize)] {
        let player = table
            .entry(key.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(player) = player else {
            return Err(err(key, "must be a table"));
        };
        let options = player
            .entry("options".to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(options) = options else {
            return Err(err(format!("{key}.options"), "must be a table"));
        };
        for (name, tuned, start) in params {
            let v = if pick == 0 { *tuned } else { *start };
            options.insert(name.clone(), toml::Value::Integer(v.round() as i64));
        }
        if !player.contains_key("name") {
            player.insert(
                "name".into(),
                toml::Value::String(if pick == 0 { "tuned" } else { "start" }.into()),
            );
        }
    }
    toml::to_string(&table).map_err(|e| err("(toml)", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--sprt-bounds` replaces the bounds of every SPRT run (config and stored table alike,
    /// so a resume compares what was played), leaves the other runs alone, and refuses a plan
    /// without an SPRT run and bounds the SPRT itself would refuse.
    #[test]
    fn sprt_bounds_replace_every_sprt_runs_bounds_or_are_refused() {
        let text = include_str!("../../../examples/tune-search.toml");
        let mut plan = parse(text, 1.0, Path::new(".")).expect("plan");
        let spsa_before = plan.runs[0].clone();
        plan.set_sprt_bounds(-1.5, 4.0).expect("bounds");
        let sprt = plan.runs[1].config.sprt.as_ref().expect("sprt section");
        assert_eq!((sprt.elo0, sprt.elo1), (-1.5, 4.0));
        let table = plan.runs[1].table["sprt"].as_table().expect("table");
        assert_eq!(table["elo0"].as_float(), Some(-1.5));
        assert_eq!(table["elo1"].as_float(), Some(4.0));
        assert_eq!(plan.runs[0].table, spsa_before.table);

        let matches_only = "title = \"t\"\n[[runs]]\nname = \"m\"\nkind = \"match\"\ngames = 4\n\
             [runs.limits]\nnodes = 100\n[[runs.variants]]\nvariant = \"latte\"\n\
             ruleset = \"normal\"\n[runs.first]\nengine = \"builtin\"\n";
        let e = parse(matches_only, 1.0, Path::new("."))
            .expect("plan")
            .set_sprt_bounds(0.0, 5.0)
            .unwrap_err();
        assert!(e.to_string().contains("no run of kind \"sprt\""), "{e}");
        for (e0, e1) in [(5.0, 0.0), (2.0, 2.0), (f64::NAN, 5.0), (0.0, 5000.0)] {
            let e = parse(text, 1.0, Path::new("."))
                .expect("plan")
                .set_sprt_bounds(e0, e1)
                .unwrap_err();
            assert!(e.to_string().contains("--sprt-bounds"), "{e0}, {e1}: {e}");
        }
    }

    /// `--seed` replaces every run's seed (config and stored table alike, so a resume compares
    /// what was played), and refuses a seed TOML cannot hold instead of wrapping it.
    #[test]
    fn seed_replaces_every_runs_seed_or_is_refused() {
        let text = include_str!("../../../examples/tune-search.toml");
        let mut plan = parse(text, 1.0, Path::new(".")).expect("plan");
        assert!(plan.runs.len() >= 2);
        assert!(plan.runs.iter().all(|r| r.config.seed != 103));
        plan.set_seed(103).expect("seed");
        for run in &plan.runs {
            assert_eq!(run.config.seed, 103, "{}", run.config.name);
            assert_eq!(run.table["seed"].as_integer(), Some(103));
        }
        let before = plan.runs[0].table.clone();
        let e = plan.set_seed(u64::MAX).unwrap_err();
        assert!(e.to_string().contains("--seed"), "{e}");
        assert!(e.to_string().contains(&u64::MAX.to_string()), "{e}");
        assert_eq!(plan.runs[0].table, before, "a refused seed changes nothing");
    }

    const PLAN: &str = r#"
title = "t"
[[runs]]
name = "tune"
kind = "spsa"
games = 200
[limits]
nodes = 100
[[runs.variants]]
variant = "latte"
ruleset = "normal"
[runs.first]
engine = "builtin"
[runs.spsa]
params = "KnightValueMg, 250, 150, 600, 20, 0.002"

[[runs]]
name = "check"
kind = "match"
games = 100
tuned_from = "tune"
[runs.limits]
nodes = 100
[[runs.variants]]
variant = "latte"
ruleset = "normal"
[runs.first]
engine = "builtin"
"#;

    #[test]
    fn select_keeps_the_named_runs_and_names_the_plans_runs_for_an_unknown_one() {
        let run = |name: &str| {
            format!(
                "[[runs]]\nname = \"{name}\"\nkind = \"match\"\ngames = 4\n[runs.limits]\n\
                 nodes = 100\n[[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
                 [runs.first]\n\
                 engine = \"builtin\"\n"
            )
        };
        let text = format!("title = \"t\"\n{}{}", run("tune"), run("check"));
        let plan = || parse(&text, 1.0, Path::new(".")).expect("plan");
        let mut all = plan();
        all.select(&[]).expect("no names: every run");
        assert_eq!(all.runs.len(), 2);
        let mut one = plan();
        one.select(&["check".into()]).expect("known");
        let names: Vec<&str> = one.runs.iter().map(|r| r.config.name.as_str()).collect();
        assert_eq!(names, ["check"]);
        let mut bad = plan();
        let e = bad.select(&["chek".into()]).expect_err("unknown");
        assert_eq!(e.field, "runs");
        assert!(
            e.message.contains("\"chek\"") && e.message.contains("tune, check"),
            "{e}"
        );
        assert_eq!(bad.runs.len(), 2, "nothing dropped on a refusal");
    }

    #[test]
    fn plans_parse_scale_and_link() {
        // The `[limits]` table above belongs to the first run only in TOML if written as
        // `[runs.limits]`; a top-level `[limits]` is an unknown plan key.
        let e = parse(PLAN, 1.0, Path::new(".")).unwrap_err();
        assert_eq!(e.field, "limits");
        let plan = parse(
            &PLAN.replace("[limits]", "[runs.limits]"),
            0.1,
            Path::new("."),
        )
        .expect("valid");
        assert_eq!(plan.runs.len(), 2);
        assert_eq!(plan.runs[0].config.games, 20);
        assert_eq!(plan.runs[1].config.games, 10);
        assert_eq!(plan.runs[1].tuned_from.as_deref(), Some("tune"));
        let text = with_tuned_values(&plan.runs[1], &[("KnightValueMg".into(), 331.6, 250.0)])
            .expect("toml");
        let c = RunConfig::parse(&text).expect("still valid");
        assert_eq!(
            c.first.options.get("KnightValueMg"),
            Some(&toml::Value::Integer(332))
        );
        assert_eq!(
            c.second.expect("second").options.get("KnightValueMg"),
            Some(&toml::Value::Integer(250))
        );
    }

    #[test]
    fn a_players_options_file_is_read_beside_the_plan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let text = std::fs::read_to_string(dir.join("sprt-fitted-weights.toml")).expect("plan");
        let plan = parse(&text, 1.0, &dir).expect("plan");
        let second = plan.runs[0].config.second.clone().expect("second");
        assert_eq!(
            second.options.get("PawnValueMg"),
            Some(&toml::Value::Integer(77))
        );
        assert!(plan.runs[0].config.first.options.is_empty());
        let e = parse(&text, 1.0, Path::new("/nonexistent")).expect_err("no file there");
        assert_eq!(e.field, "runs[0].second.options_file");
        assert!(e.message.contains("weights-before-2026-12-05.txt"), "{e}");
    }

    #[test]
    fn errors_name_the_run_and_field() {
        let fixed = PLAN.replace("[limits]", "[runs.limits]");
        let e = parse(
            &fixed.replace("tuned_from = \"tune\"", "tuned_from = \"nope\""),
            1.0,
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(e.field, "runs[1].tuned_from");
        let e = parse(
            &fixed.replace("games = 100", "games = \"many\""),
            1.0,
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.field.starts_with("runs[1].games"), "{e}");
        assert_eq!(
            parse("title = 3\n[[runs]]\n", 1.0, Path::new("."))
                .unwrap_err()
                .field,
            "title"
        );
        assert_eq!(parse("", 1.0, Path::new(".")).unwrap_err().field, "runs");
        assert_eq!(
            parse(&fixed, 0.0, Path::new(".")).unwrap_err().field,
            "--scale"
        );
        let e = parse(
            &fixed.replace("name = \"check\"", "name = \"tune\""),
            1.0,
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(e.field, "runs[1].name");
    }
}
