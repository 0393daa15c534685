//! `coordinator stats elo`: Elo, LOS, nElo and optionally the SPRT of a match.

use super::counts::{parse_finite, parse_probability, parse_ptnml, parse_wdl};
use crate::cli::Outcome;
use clap::{ArgGroup, Args, ValueEnum};
use serde_json::{json, Value};
use stats::{
    logistic_elo, normalized_elo, sprt_elo, EloEstimate, EloModel, NeloEstimate, Pentanomial,
    Results, SprtElo, SprtParams, Trinomial,
};
use std::fmt::Write as _;

/// Arguments of `coordinator stats elo`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("counts").required(true).args(["wdl", "ptnml"])))]
pub struct EloArgs {
    /// Game results of the tested engine: wins,draws,losses.
    #[arg(long, value_name = "W,D,L", value_parser = parse_wdl, allow_hyphen_values = true)]
    pub wdl: Option<Trinomial>,
    /// Game-pair results: pairs scoring 0, ½, 1, 1½, 2 (LL,LD,DD+WL,WD,WW).
    #[arg(long, value_name = "LL,LD,DD+WL,WD,WW", value_parser = parse_ptnml, allow_hyphen_values = true)]
    pub ptnml: Option<Pentanomial>,
    /// SPRT: Elo under H0 (in the --model's units).
    #[arg(long, requires = "elo1", value_parser = parse_finite, allow_hyphen_values = true)]
    pub elo0: Option<f64>,
    /// SPRT: Elo under H1 (in the --model's units).
    #[arg(long, requires = "elo0", value_parser = parse_finite, allow_hyphen_values = true)]
    pub elo1: Option<f64>,
    /// SPRT: false-positive probability.
    #[arg(long, default_value_t = 0.05, value_parser = parse_probability)]
    pub alpha: f64,
    /// SPRT: false-negative probability.
    #[arg(long, default_value_t = 0.05, value_parser = parse_probability)]
    pub beta: f64,
    /// SPRT: the Elo model of --elo0/--elo1.
    #[arg(long, value_enum, default_value_t = Model::Normalized)]
    pub model: Model,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Elo models offered on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Model {
    /// Normalised Elo (fishtest's default).
    Normalized,
    /// Logistic Elo.
    Logistic,
}

impl From<Model> for EloModel {
    fn from(m: Model) -> Self {
        match m {
            Model::Normalized => EloModel::Normalized,
            Model::Logistic => EloModel::Logistic,
        }
    }
}

/// The SPRT part of the answer; its figures may be uncomputable for extreme results (fishtest
/// fails there too), which is reported instead of a number.
struct SprtReport {
    params: SprtParams,
    llr: Result<f64, stats::StatsError>,
    estimate: Result<SprtElo, stats::StatsError>,
}

pub(super) fn run(args: &EloArgs) -> anyhow::Result<Outcome> {
    let results = match (args.wdl, args.ptnml) {
        (Some(t), _) => Results::Trinomial(t),
        (None, Some(p)) => Results::Pentanomial(p),
        (None, None) => anyhow::bail!("give --wdl W,D,L or --ptnml LL,LD,DD+WL,WD,WW"),
    };
    let elo = logistic_elo(&results)?;
    let nelo = normalized_elo(&results)?;
    let sprt = match (args.elo0, args.elo1) {
        (Some(elo0), Some(elo1)) => {
            let params = SprtParams::new(args.alpha, args.beta, elo0, elo1, args.model.into())?;
            Some(SprtReport {
                params,
                llr: params.llr(&results),
                estimate: sprt_elo(&results, &params, 0.05),
            })
        }
        _ => None,
    };
    let stdout = if args.json {
        let mut s = serde_json::to_string_pretty(&to_json(&results, &elo, &nelo, sprt.as_ref()))?;
        s.push('\n');
        s
    } else {
        to_text(&results, &elo, &nelo, sprt.as_ref())
    };
    Ok(Outcome { stdout, code: 0 })
}

fn input_json(results: &Results) -> Value {
    match results {
        Results::Trinomial(t) => json!({
            "kind": "trinomial",
            "wins": t.wins, "draws": t.draws, "losses": t.losses,
            "games": t.games(),
        }),
        Results::Pentanomial(p) => json!({
            "kind": "pentanomial",
            "ptnml": p.counts(),
            "pairs": p.pairs(),
            "games": p.games(),
        }),
    }
}

fn to_json(
    results: &Results,
    elo: &EloEstimate,
    nelo: &NeloEstimate,
    sprt: Option<&SprtReport>,
) -> Value {
    let mut out = json!({
        "input": input_json(results),
        "elo": {
            "model": "logistic",
            "elo": elo.elo, "elo95": elo.elo95, "ci": elo.ci, "los": elo.los,
            "score": elo.score, "variance_per_game": elo.variance,
        },
        "nelo": { "nelo": nelo.nelo, "ci": nelo.ci, "t": nelo.t },
    });
    if let Some(s) = sprt {
        let p = &s.params;
        let mut v = json!({
            "model": p.model.to_string().to_lowercase(),
            "elo0": p.elo0, "elo1": p.elo1, "alpha": p.alpha, "beta": p.beta,
            "lower_bound": p.lower_bound(), "upper_bound": p.upper_bound(),
        });
        match &s.llr {
            Ok(llr) => {
                v["llr"] = json!(llr);
                v["state"] = json!(p.decide(*llr).to_string());
            }
            Err(e) => v["llr_error"] = json!(e.to_string()),
        }
        match &s.estimate {
            Ok(e) => {
                v["sprt_elo"] =
                    json!({ "elo": e.elo, "ci": e.ci, "los": e.los, "clamped": e.clamped })
            }
            Err(e) => v["sprt_elo_error"] = json!(e.to_string()),
        }
        out["sprt"] = v;
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

fn to_text(
    results: &Results,
    elo: &EloEstimate,
    nelo: &NeloEstimate,
    sprt: Option<&SprtReport>,
) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = write_text(&mut s, results, elo, nelo, sprt);
    s
}

fn write_text(
    s: &mut String,
    results: &Results,
    elo: &EloEstimate,
    nelo: &NeloEstimate,
    sprt: Option<&SprtReport>,
) -> std::fmt::Result {
    match results {
        Results::Trinomial(t) => writeln!(
            s,
            "Games        : {} (W {}, D {}, L {}; draws {})",
            t.games(),
            t.wins,
            t.draws,
            t.losses,
            pct(t.draws as f64 / t.games() as f64)
        )?,
        Results::Pentanomial(p) => writeln!(
            s,
            "Pairs        : {} ({} games), ptnml(0-2) {:?}",
            p.pairs(),
            p.games(),
            p.counts()
        )?,
    }
    writeln!(s, "Score        : {}", pct(elo.score))?;
    writeln!(
        s,
        "Elo          : {:.2} ± {:.2} (95%: [{:.2}, {:.2}])",
        elo.elo, elo.elo95, elo.ci[0], elo.ci[1]
    )?;
    writeln!(s, "LOS          : {}", pct(elo.los))?;
    writeln!(
        s,
        "nElo         : {:.2} ± {:.2} (95%: [{:.2}, {:.2}])",
        nelo.nelo,
        (nelo.ci[1] - nelo.ci[0]) / 2.0,
        nelo.ci[0],
        nelo.ci[1]
    )?;
    if let Some(r) = sprt {
        let p = &r.params;
        writeln!(s)?;
        writeln!(
            s,
            "SPRT         : {} Elo, H0 {} H1 {}, alpha {}, beta {}",
            p.model.to_string().to_lowercase(),
            p.elo0,
            p.elo1,
            p.alpha,
            p.beta
        )?;
        match &r.llr {
            Ok(llr) => writeln!(
                s,
                "LLR          : {:.3} (bounds [{:.3}, {:.3}]) → {}",
                llr,
                p.lower_bound(),
                p.upper_bound(),
                p.decide(*llr)
            )?,
            Err(e) => writeln!(s, "LLR          : not computable for these results ({e})")?,
        }
        match &r.estimate {
            Ok(e) => writeln!(
                s,
                "SPRT Elo     : {:.2} (95%: [{:.2}, {:.2}]), LOS {}{}  [median-unbiased, logistic]",
                e.elo,
                e.ci[0],
                e.ci[1],
                pct(e.los),
                if e.clamped { ", clamped" } else { "" }
            )?,
            Err(e) => writeln!(s, "SPRT Elo     : not computable for these results ({e})")?,
        }
    }
    Ok(())
}
