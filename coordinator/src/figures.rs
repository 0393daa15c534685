//! A run's figures from its running totals: pentanomial, W/D/L, Elo, SPRT and SPSA state,
//! study rows, and per-token shares with their residuals.

use crate::config::RunKind;
use crate::model::{Detail, RowFigures, SprtFigures, SpsaRow, Summary, WorkerShare};
use crate::residual;
use crate::run::Run;
use stats::Results;

/// Compute a run's figures from its running totals: O(tokens), whatever the run's length.
pub fn detail(run: &Run, summary: Summary) -> Detail {
    let counted = run.totals.counted(&run.excluded);
    let penta = counted.pentanomial;
    let wdl = counted.wdl;
    let results = Results::Pentanomial(penta);
    let (elo, nelo) = if penta.pairs() > 0 {
        (
            stats::logistic_elo(&results).ok(),
            stats::normalized_elo(&results).ok(),
        )
    } else {
        (None, None)
    };
    let sprt = run.sprt.as_ref().map(|s| {
        let (lower, upper) = s.sprt().stopping_bounds();
        SprtFigures {
            llr: s.llr(),
            lower,
            upper,
            state: s.state(),
            params: s.sprt().params,
            counted_pairs: s.counted().pairs(),
        }
    });
    let spsa = run
        .spsa
        .as_ref()
        .map(|s| {
            s.config()
                .params
                .iter()
                .zip(s.theta())
                .map(|(p, &value)| SpsaRow {
                    name: p.name.clone(),
                    value,
                    start: p.start,
                    min: p.min,
                    max: p.max,
                    iterations: s.credited(),
                })
                .collect()
        })
        .unwrap_or_default();
    let study = if run.config.kind == RunKind::Study || run.config.study_rows().len() > 1 {
        let baseline = run
            .config
            .study
            .as_ref()
            .and_then(|s| s.baseline.as_deref())
            .filter(|b| counted.study.ruleset(b).is_some());
        counted.study.study(baseline).ok()
    } else {
        None
    };
    let rows: Vec<[u64; 5]> = run
        .totals
        .by_token
        .values()
        .map(|t| t.pentanomial)
        .collect();
    let res = residual::residuals(&rows);
    let workers = run
        .totals
        .by_token
        .iter()
        .zip(res)
        .map(|((name, t), r)| WorkerShare {
            excluded: run.excluded.contains(name),
            name: name.clone(),
            labels: t.labels.iter().cloned().collect(),
            pentanomial: t.pentanomial,
            residual: r,
        })
        .collect();
    // One row is the whole run, already shown: rows add something only when they are several.
    let by_row = if counted.by_row.len() > 1 {
        counted
            .by_row
            .iter()
            .map(|(row, r)| RowFigures {
                row: row.clone(),
                pentanomial: r.pentanomial,
                wdl: r.wdl,
                elo: stats::logistic_elo(&Results::Pentanomial(stats::Pentanomial(r.pentanomial)))
                    .ok(),
            })
            .collect()
    } else {
        Vec::new()
    };
    Detail {
        summary,
        by_row,
        config_toml: run.config_toml.clone(),
        pentanomial: penta.counts(),
        wdl,
        elo,
        nelo,
        sprt,
        spsa,
        study,
        workers,
    }
}
