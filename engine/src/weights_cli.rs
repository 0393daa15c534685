//! `engine tune-weights`: fits the evaluation's named weights to labelled positions and writes
//! them as a parameters file (`name=value` lines, what `worker match --params1` and UCI
//! `setoption` take).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::params::{specs_for, ParamSpec, Params};
use engine::tune::{
    check_learning_rate, enough_positions, evaluate_all, Positions, TuneError, WeightConfig,
};
use engine::Rules;

use crate::fit_args::DataArgs;

#[derive(Args)]
pub(crate) struct WeightsArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Parameters not to fit (comma-separated names), beside those the positions' static
    /// evaluation never reads (the search's, the clock's), which are left alone anyway.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Fit these parameters only (comma-separated names), e.g. a variant's own weights (those
    /// `engine params --variant secutor` gives the scope `secutor`) fitted to its games'
    /// results, while the weights it shares with the other games keep their values.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Linearisations: each measures every weight's effect around the current weights.
    #[arg(long, default_value_t = WeightConfig::default().rounds)]
    rounds: usize,
    /// Adam's passes over the positions per round.
    #[arg(long, default_value_t = WeightConfig::default().epochs)]
    epochs: usize,
    /// Adam's step size, in the weights' units.
    #[arg(long, default_value_t = WeightConfig::default().learning_rate)]
    learning_rate: f64,
    /// Threads for the evaluations (1 to 256).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Write the fitted parameter set here, one `name=value` a line: every weight that differs
    /// from the engine's defaults (those of `--params` included), so the file alone is the set.
    #[arg(long)]
    out: Option<String>,
}

pub(crate) fn run(a: &WeightsArgs) -> Result<ExitCode> {
    check_learning_rate(a.learning_rate)?;
    let rules = a.data.rules()?;
    with_search_position(rules, Fit(a))
}

/// The weights to fit: the variant's, less `--exclude`, within `--only` when given.
fn chosen_specs(a: &WeightsArgs, rules: Rules) -> Result<Vec<&'static ParamSpec>, TuneError> {
    let named = |names: &[String]| -> Result<Vec<&'static ParamSpec>, TuneError> {
        names
            .iter()
            .map(|n| {
                Params::spec(n)
                    .map(|(_, s)| s)
                    .ok_or_else(|| TuneError::UnknownParam(n.clone()))
            })
            .collect()
    };
    let skip: Vec<&str> = named(&a.exclude)?.iter().map(|s| s.name).collect();
    let only = named(&a.only)?;
    if let Some(s) = only.iter().find(|s| !s.scope.applies_to(rules.variant())) {
        return Err(TuneError::NotInVariant {
            name: s.name,
            rules,
        });
    }
    let only: Vec<&str> = only.iter().map(|s| s.name).collect();
    Ok(specs_for(rules.variant())
        .filter(|s| !skip.contains(&s.name))
        .filter(|s| only.is_empty() || only.contains(&s.name))
        .collect())
}

/// The fit on the variant's board.
struct Fit<'a>(&'a WeightsArgs);

impl WithSearchPosition for Fit<'_> {
    type Output = Result<ExitCode>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Result<ExitCode> {
        fit::<P>(self.0, rules)
    }
}

fn fit<P: SearchPosition>(a: &WeightsArgs, rules: Rules) -> Result<ExitCode> {
    let specs = chosen_specs(a, rules)?;
    let start = a.data.params()?;
    let started = Instant::now();
    let pos = a
        .data
        .read_all(
            |text| Ok(Positions::<P>::read(text, rules, &start)?),
            |p| (p.counts, p.len()),
            Positions::append,
        )?
        .ok_or(TuneError::TooFew {
            found: 0,
            needed: engine::tune::MIN_POSITIONS,
        })?;
    enough_positions(pos.len())?;
    let config = WeightConfig {
        rounds: a.rounds,
        epochs: a.epochs,
        learning_rate: a.learning_rate,
        holdout: a.data.holdout,
        threads: usize::from(a.threads),
    };
    let evaluated = evaluate_all(&pos, &start, config.threads);
    let k = config.fit_scale(&pos, &evaluated);
    let before = config.losses(&pos, &evaluated, k);
    println!(
        "{} quiet positions read in {:.1} s; logistic scale K = {k:.4}; loss train {:.6}, held out {:.6}",
        pos.len(),
        started.elapsed().as_secs_f64(),
        before.train,
        before.holdout
    );
    let mut after = before;
    let fitted = config.fit(&pos, &start, &specs, k, |r| {
        let best = if before.holdout > 0.0 {
            r.losses.holdout < after.holdout
        } else {
            r.losses.train < after.train
        };
        if best {
            after = r.losses;
        }
        println!(
            "round {}  train {:.6}  held out {:.6}  ({:.0} s)",
            r.round,
            r.losses.train,
            r.losses.holdout,
            started.elapsed().as_secs_f64()
        );
        if r.round == 1 && !r.unseen.is_empty() {
            println!(
                "not read by these positions' evaluation, left alone: {}",
                r.unseen.join(", ")
            );
        }
    });
    let mut changed = Vec::new();
    for spec in &specs {
        let (from, to) = (start.get(spec.name), fitted.get(spec.name));
        if let (Some(from), Some(to)) = (from, to) {
            if from != to {
                changed.push(format!("{} {from} -> {to}", spec.name));
            }
        }
    }
    // The whole set against the defaults, not only what this fit moved: a fit that started
    // from `--params` writes what that file set too, so the output alone reproduces it.
    let defaults = Params::default();
    let mut lines = String::new();
    for spec in engine::params::SPECS {
        if let (Some(default), Some(to)) = (defaults.get(spec.name), fitted.get(spec.name)) {
            if default != to {
                let _ = writeln!(lines, "{}={to}", spec.name);
            }
        }
    }
    println!(
        "best round: train {:.6}, held out {:.6}; {} weights changed: {}",
        after.train,
        after.holdout,
        changed.len(),
        changed.join(", ")
    );
    if let Some(out) = &a.out {
        let header = format!(
            "# engine tune-weights on {} quiet positions of {rules} ({}), K {k:.4}, from {}:\n\
             # mean squared error {:.6} -> {:.6}, held out {:.6} -> {:.6}.\n",
            pos.len(),
            a.data.positions.join(", "),
            a.data.params.as_deref().unwrap_or("the engine's defaults"),
            before.train,
            after.train,
            before.holdout,
            after.holdout
        );
        std::fs::write(out, header + &lines).with_context(|| format!("cannot write {out}"))?;
        println!("weights written to {out}");
    }
    Ok(ExitCode::SUCCESS)
}
