//! What `engine tune-squares` and `engine tune-weights` both read: the labelled positions,
//! their rules, the games held out, and the weights the fit starts from. One set of flags, so
//! that the two fits, which take turns (the table as the residual of the weights, the weights
//! around the table), are driven alike.

use anyhow::{Context, Result};
use clap::Args;

use engine::params::Params;
use engine::tune::Counts;
use engine::Rules;

#[derive(Args)]
pub(crate) struct DataArgs {
    /// `FEN [result]` lines (`worker positions` writes them from PGN; `worker label` scores
    /// them by a stronger engine); several files are read as one data set.
    #[arg(long, required = true)]
    pub(crate) positions: Vec<String>,
    /// The variant the positions are of.
    #[arg(long, default_value = "chess")]
    variant: String,
    /// The rule-set (default: the variant's default).
    #[arg(long)]
    ruleset: Option<String>,
    /// Hold out every N-th pair of games (a changed result or a move number going back starts
    /// the next game; a pair is an opening played with both colours) to measure the fit (0:
    /// none).
    #[arg(long, default_value_t = engine::tune::FitConfig::default().holdout)]
    pub(crate) holdout: usize,
    /// A parameters file (`name=value` lines or JSON, as `tune-weights --out` writes): the
    /// evaluation's weights to fit around (tune-squares) or from (tune-weights) instead of
    /// the engine's defaults, so one fit can follow another without a new build.
    #[arg(long)]
    pub(crate) params: Option<String>,
}

impl DataArgs {
    /// The rules named by `--variant` and `--ruleset`.
    pub(crate) fn rules(&self) -> Result<Rules> {
        Ok(Rules::parse(&self.variant, self.ruleset.as_deref())?)
    }

    /// The engine's defaults, with `--params` applied.
    pub(crate) fn params(&self) -> Result<Params> {
        let Some(path) = &self.params else {
            return Ok(Params::default());
        };
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
        engine::params_file::params_from(&text).with_context(|| format!("parameters file {path}"))
    }

    /// Every `--positions` file read by `read` and joined by `append`, each file's counts
    /// printed as it is read; `None` only if `read` kept nothing from any file (clap requires
    /// one file at least).
    pub(crate) fn read_all<T>(
        &self,
        mut read: impl FnMut(&str) -> Result<T>,
        counts: impl Fn(&T) -> (Counts, usize),
        mut append: impl FnMut(&mut T, T),
    ) -> Result<Option<T>> {
        let mut all: Option<T> = None;
        for file in &self.positions {
            let text =
                std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
            let set = read(&text).with_context(|| format!("in {file}"))?;
            let (c, kept) = counts(&set);
            println!(
                "{file}: {} positions of {} games, {} not quiet, {kept} kept",
                c.read, c.games, c.not_quiet
            );
            match &mut all {
                Some(all) => append(all, set),
                None => all = Some(set),
            }
        }
        Ok(all)
    }
}
