//! `coordinator stats check FILE...`: recompute every figure of reference-vector files.

use crate::cli::Outcome;
use anyhow::Context;
use clap::Args;
use stats::vectors::{check_vectors, FileReport, Tolerances};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `coordinator stats check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Vector files in the format of stats/tests/data/fishtest_vectors.json.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One relative (and, near zero, absolute) tolerance for every figure, instead of the
    /// vectors' README suggestion (1e-9; LLRs 1e-8; SPRT Elo 1e-6).
    #[arg(long, value_name = "TOL", value_parser = parse_tolerance)]
    pub tolerance: Option<f64>,
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("'{text}' is not a tolerance (a number ≥ 0)")),
    }
}

pub(super) fn run(args: &CheckArgs) -> anyhow::Result<Outcome> {
    let tol = args
        .tolerance
        .map_or_else(Tolerances::default, Tolerances::uniform);
    // Read and parse everything first: a bad file is bad input, not a failed check.
    let mut reports: Vec<(String, FileReport)> = Vec::new();
    for path in &args.files {
        let shown = path.display().to_string();
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read '{shown}'"))?;
        let report = check_vectors(&text, &tol).with_context(|| format!("'{shown}'"))?;
        reports.push((shown, report));
    }
    let mut out = String::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    for (file, report) in &reports {
        let _ = writeln!(out, "{file}: {} vectors", report.vectors.len());
        for m in &report.file_mismatches {
            failed += 1;
            let _ = writeln!(out, "  MISMATCH {file}: {m}");
        }
        for v in &report.vectors {
            if v.passed() {
                passed += 1;
                let _ = writeln!(
                    out,
                    "  ok   {:<24} {:>3} figures, largest error {:.1e} of the tolerance",
                    v.id, v.checked, v.worst_ratio
                );
            } else {
                failed += 1;
                let _ = writeln!(
                    out,
                    "  FAIL {:<24} {:>3} figures, {} mismatched",
                    v.id,
                    v.checked,
                    v.mismatches.len()
                );
                for m in &v.mismatches {
                    let _ = writeln!(out, "    MISMATCH {}: {m}", v.id);
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "tolerance: |got - want| <= {:e} + {:e}*|want| (LLR {:e}, SPRT Elo {:e})",
        tol.general.abs, tol.general.rel, tol.llr.rel, tol.sprt_elo.rel
    );
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    Ok(Outcome {
        stdout: out,
        code: u8::from(failed > 0),
    })
}
