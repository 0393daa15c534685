//! `engine tune-squares`: fits the learned piece-square table of a variant to labelled
//! positions and writes it where the engine includes it.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use engine::eval::squares::SquareTable;
use engine::tune::{
    check_learning_rate, enough_positions, fit_scale, table_source, FitConfig, Samples, TuneError,
};
use engine::Role;

use crate::fit_args::DataArgs;

#[derive(Args)]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Passes over the training positions; 0 fits nothing and prints the losses of the table
    /// the engine has now (or of none, with --from-zero) on these positions.
    #[arg(long, default_value_t = FitConfig::default().epochs)]
    epochs: usize,
    /// Adam's step size in centipawns.
    #[arg(long, default_value_t = FitConfig::default().learning_rate)]
    learning_rate: f64,
    /// L2 penalty per centipawn squared.
    #[arg(long, default_value_t = FitConfig::default().l2)]
    l2: f64,
    /// Start from zero instead of the table the engine has now.
    #[arg(long)]
    from_zero: bool,
    /// Keep the material the data asks for in the table (each role's change added to its every
    /// square) instead of dropping it: for labels from a stronger engine's evaluations.
    #[arg(long)]
    keep_material: bool,
    /// Write the fitted table here (the engine's is `engine/src/board8/tables/chess.rs`).
    #[arg(long)]
    out: Option<String>,
    /// Where the positions came from, for the written file's header (the commands that made
    /// them, say).
    #[arg(long)]
    source: Option<String>,
}

pub(crate) fn run(a: &TuneArgs) -> Result<ExitCode> {
    check_learning_rate(a.learning_rate)?;
    if a.epochs == 0 && a.out.is_some() {
        anyhow::bail!(
            "--epochs 0 only measures the table the engine has; there is no fitted table for --out to write"
        );
    }
    let rules = a.data.rules()?;
    let current = engine::board8::square_table(rules).ok_or(TuneError::NoTable(rules))?;
    let params = a.data.params()?;
    let started = Instant::now();
    let samples = a
        .data
        .read_all(
            |text| Ok(Samples::read(text, rules, &params)?),
            |s| (s.counts(), s.len()),
            Samples::append,
        )?
        .unwrap_or_default();
    enough_positions(samples.len())?;
    let k = fit_scale(&samples);
    println!(
        "{} quiet positions read in {:.1} s; logistic scale K = {k:.4}",
        samples.len(),
        started.elapsed().as_secs_f64()
    );
    let config = FitConfig {
        epochs: a.epochs,
        learning_rate: a.learning_rate,
        l2: a.l2,
        holdout: a.data.holdout,
        keep_material: a.keep_material,
        ..FitConfig::default()
    };
    let start = if a.from_zero {
        &SquareTable::ZERO
    } else {
        current
    };
    if a.epochs == 0 {
        let fit = config.fit(&samples, k, start, 0, |_| {});
        let which = if a.from_zero {
            "without a table"
        } else {
            "with the engine's table"
        };
        println!(
            "loss {which}: train {:.6}, held out {:.6} (no epochs: nothing fitted)",
            fit.start.train, fit.start.holdout
        );
        return Ok(ExitCode::SUCCESS);
    }
    let every = (a.epochs / 10).max(1);
    let fit = config.fit(&samples, k, start, every, |p| {
        println!(
            "epoch {:>5}  train {:.6}  held out {:.6}",
            p.epoch, p.train, p.holdout
        );
    });
    println!(
        "loss from {:.6} to {:.6} (held out: {:.6} to {:.6}) in {:.1} s",
        fit.start.train,
        fit.end.train,
        fit.start.holdout,
        fit.end.holdout,
        started.elapsed().as_secs_f64()
    );
    // Each side has one king, so a king offset cancels out: there is none to report.
    let offsets: Vec<String> = Role::ALL[..Role::King.index()]
        .iter()
        .zip(&fit.offsets)
        .map(|(r, (m, e))| format!("{} {m:+.0}/{e:+.0}", r.name()))
        .collect();
    let kept = if a.keep_material {
        "kept in the table"
    } else {
        "not kept (SPSA tunes material; --keep-material keeps it)"
    };
    println!(
        "material (mg/eg) the data asked for beside the table, {kept}: {}",
        offsets.join(", ")
    );
    if let Some(out) = &a.out {
        let header = vec![
            format!(
                "Fitted by `engine tune-squares` on {} quiet positions of {} ({}), {} epochs{},",
                samples.len(),
                rules,
                a.data.positions.join(", "),
                a.epochs,
                if a.keep_material {
                    ", material kept"
                } else {
                    ""
                }
            ),
            format!(
                "learning rate {}, L2 {}, K {:.4}: mean squared error {:.6} -> {:.6}, held out {:.6} -> {:.6}.",
                a.learning_rate, a.l2, fit.k, fit.start.train, fit.end.train, fit.start.holdout, fit.end.holdout
            ),
            "Values in centipawns from the piece's own side, the eighth rank on top, for a side whose".into(),
            "king stands on the e..h files (a king on a..d reads them mirrored by file); then each".into(),
            "role's values by where it stands from its own and from the enemy king; knights to".into(),
            "queens by the safe squares they reach; the attack on the enemy king by its attackers".into(),
            "and danger units; passed pawns by square and by where they stand from either king;".into(),
            "enemy pieces by their cheapest attacker; pawns by shape; space; the material's make-up;".into(),
            "knights to queens by the pawns on the board; the pawn lead by the kind of ending; the".into(),
            "lead in pieces by the pawns on the board.".into(),
        ];
        let mut header = header;
        if let Some(source) = &a.source {
            header.insert(2, format!("Positions: {source}."));
        }
        if let Some(params) = &a.data.params {
            header.insert(
                2,
                format!("Around the weights of {params} (the engine's defaults otherwise)."),
            );
        }
        std::fs::write(out, table_source(&fit.table, &header))
            .with_context(|| format!("cannot write {out}"))?;
        println!("table written to {out}");
    }
    Ok(ExitCode::SUCCESS)
}
