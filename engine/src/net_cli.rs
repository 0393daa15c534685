//! `engine tune-net`: fits the evaluation's small network to labelled positions.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use engine::board8::net_file;
use engine::tune::net::{NetConfig, NetSamples};
use engine::tune::{check_learning_rate, enough_positions, TuneError};

use crate::fit_args::DataArgs;

#[derive(Args)]
pub(crate) struct NetArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Passes over the training positions (0: print the evaluation's loss alone).
    #[arg(long, default_value_t = 16)]
    epochs: usize,
    /// Adam's step size.
    #[arg(long, default_value_t = 0.001)]
    learning_rate: f64,
    /// Positions per step.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Hidden units a view (the shipped network's width unless given): a network of another
    /// width written with --out makes the engine's build that width.
    #[arg(long, default_value_t = engine::board8::net::HIDDEN)]
    hidden: usize,
    /// The seed of the first weights and of the positions' order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads the fit's sums are split over, each batch's gradient and each epoch's losses
    /// (1 to 256); the fit is the same for the same seed and threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Write the fitted network here (the engine's are `engine/src/board8/tables/<variant>_net.rs`,
    /// each declaring its variant's static: `CHESS_NET`, `LATTE_NET`).
    #[arg(long)]
    out: Option<String>,
    /// Where the positions came from, for the written file's header.
    #[arg(long)]
    source: Option<String>,
    /// Also write the fitted network as a network file here: what the UCI option `EvalFile`
    /// and a worker's `net=FILE` read, so that it plays without a build of its own.
    #[arg(long)]
    out_net: Option<String>,
}

#[derive(Args)]
pub(crate) struct ExportArgs {
    /// chess or latte: whose built-in network.
    #[arg(long)]
    variant: String,
    /// The network file to write.
    #[arg(long)]
    out: String,
    /// Multiply the network's output by this (1: as built in): how much the network weighs
    /// in its own game alone (NetScale weighs chess's and Latte's alike), for an SPRT.
    #[arg(long, default_value_t = 1.0)]
    output_scale: f64,
}

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// The network file (engine tune-net --out-net, engine export-net).
    net: String,
    /// The Rust source to write: engine/src/board8/tables/<variant>_net.rs makes it the
    /// built-in network of its game at the next build.
    #[arg(long)]
    out: String,
}

/// `engine import-net`: a network file that won its SPRT becomes the built-in network of its
/// game: its Rust source, as `tune-net --out` writes it, with where it came from.
pub(crate) fn import(a: &ImportArgs) -> Result<ExitCode> {
    let loaded = net_file::load(std::path::Path::new(&a.net))?;
    let header = [format!(
        "Imported by `engine import-net` from {} (network {}, the first 12 hex digits of its SHA-256).",
        a.net,
        loaded.name()
    )];
    std::fs::write(&a.out, loaded.net.net().source(loaded.variant, &header))
        .with_context(|| format!("cannot write {}", a.out))?;
    println!(
        "{} network {} written to {} (built in at the next build)",
        loaded.variant,
        loaded.name(),
        a.out
    );
    Ok(ExitCode::SUCCESS)
}

/// `engine export-net`: writes a built-in network as a network file, the starting point of a
/// candidate (or the reference an SPRT of one plays against).
pub(crate) fn export(a: &ExportArgs) -> Result<ExitCode> {
    let rules = engine::Rules::parse(&a.variant, None)?;
    let net = engine::board8::builtin_net(rules).ok_or(TuneError::NoNetwork(rules))?;
    if !(a.output_scale.is_finite() && a.output_scale > 0.0) {
        anyhow::bail!("--output-scale {} is not a positive number", a.output_scale);
    }
    let scaled = net.scaled_output(a.output_scale).ok_or_else(|| {
        anyhow::anyhow!(
            "--output-scale {}: the largest output weight would leave the limit the fit clamps to; \
             this network takes at most {}",
            a.output_scale,
            net.max_output_scale()
        )
    })?;
    let bytes = net_file::to_bytes(&scaled, rules.variant());
    net_file::write(std::path::Path::new(&a.out), &bytes)?;
    println!(
        "{} network ({} units a view, output x{}) written to {}",
        rules.variant(),
        engine::board8::net::HIDDEN,
        a.output_scale,
        a.out
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(a: &NetArgs) -> Result<ExitCode> {
    check_learning_rate(a.learning_rate)?;
    if a.epochs == 0 {
        // Name the flag the user gave: the network would go to either.
        let flag = match (&a.out, &a.out_net) {
            (Some(_), Some(_)) => Some("--out and --out-net"),
            (Some(_), None) => Some("--out"),
            (None, Some(_)) => Some("--out-net"),
            (None, None) => None,
        };
        if let Some(flag) = flag {
            anyhow::bail!("--epochs 0 fits nothing; there is no network for {flag} to write");
        }
    }
    if a.batch == 0 {
        return Err(TuneError::Batch.into());
    }
    if !engine::board8::net::WIDTHS.contains(&a.hidden) {
        return Err(TuneError::NetWidth(a.hidden).into());
    }
    let rules = a.data.rules()?;
    if !engine::board8::can_have_net(rules) {
        return Err(TuneError::NoNetwork(rules).into());
    }
    let params = a.data.params()?;
    let started = Instant::now();
    let samples = a
        .data
        .read_all(
            |text| Ok(NetSamples::read(text, rules, &params)?),
            |s| (s.counts, s.len()),
            NetSamples::append,
        )?
        .unwrap_or_default();
    enough_positions(samples.len())?;
    let config = NetConfig {
        epochs: a.epochs,
        learning_rate: a.learning_rate,
        batch: a.batch,
        holdout: a.data.holdout,
        seed: a.seed,
        threads: usize::from(a.threads),
    };
    let k = engine::tune::net::fit_scale(&samples);
    let before = config.losses(&samples, k, None);
    println!(
        "{} quiet positions read in {:.1} s; K = {k:.4}; the evaluation alone: train {:.6}, held out {:.6}",
        samples.len(),
        started.elapsed().as_secs_f64(),
        before.train,
        before.holdout
    );
    if a.epochs == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    let fit = config.fit(a.hidden, &samples, k, |epoch, l| {
        println!(
            "epoch {epoch:>4}  train {:.6}  held out {:.6}  ({:.0} s)",
            l.train,
            l.holdout,
            started.elapsed().as_secs_f64()
        );
    })?;
    let (best, fixed) = (fit.losses, fit.net.fixed_point());
    let q = fixed.losses(&config, &samples, k);
    println!(
        "best held out {:.6} (train {:.6}) at epoch {}; in fixed point as the engine reads it: held out {:.6} (train {:.6})",
        best.holdout, best.train, fit.epoch, q.holdout, q.train
    );
    if let Some(out) = &a.out {
        let mut header = vec![
            format!(
                "Fitted by `engine tune-net` on {} quiet positions of {} ({}), {} units a view, epoch {} of {}, batch {}, learning rate {}, seed {}:",
                samples.len(),
                rules,
                a.data.positions.join(", "),
                a.hidden,
                fit.epoch,
                a.epochs,
                config.batch,
                a.learning_rate,
                a.seed
            ),
            format!(
                "K {k:.4}; mean squared error of the evaluation alone {:.6}, held out {:.6}; with this network {:.6}, held out {:.6}.",
                before.train, before.holdout, q.train, q.holdout
            ),
        ];
        if let Some(source) = &a.source {
            header.push(format!("Positions: {source}."));
        }
        std::fs::write(out, fixed.source(rules.variant(), &header))
            .with_context(|| format!("cannot write {out}"))?;
        println!("network written to {out}");
    }
    if let Some(out) = &a.out_net {
        net_file::write(
            std::path::Path::new(out),
            &fixed.file_bytes(rules.variant()),
        )?;
        println!("network file written to {out}");
        if fixed.hidden() != engine::board8::net::HIDDEN {
            println!(
                "note: this build reads networks of {} units a view; one of {} plays in a build of that width (--out)",
                engine::board8::net::HIDDEN,
                fixed.hidden()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
