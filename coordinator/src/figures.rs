//! A run's figures from its counted pairs: pentanomial, W/D/L, Elo, SPRT and SPSA state,
//! study rows, and per-token shares with their residuals.

use crate::config::RunKind;
use crate::ledger::WorkerId;
use crate::model::{Detail, SprtFigures, SpsaRow, Summary, WorkerShare};
use crate::residual;
use crate::run::{Run, Worker};
use stats::study::{GameRecord, Outcome};
use stats::{Pentanomial, Results};
use std::collections::{BTreeMap, BTreeSet};

/// Most machine labels shown per token.
const LABELS_SHOWN: usize = 16;

/// Compute a run's figures.
pub fn detail(run: &Run, summary: Summary, workers: &BTreeMap<WorkerId, Worker>) -> Detail {
    let mut penta = Pentanomial::default();
    let mut wdl = [0u64; 3];
    let mut by_token: BTreeMap<String, ([u64; 5], BTreeSet<String>)> = BTreeMap::new();
    let mut records = Vec::new();
    for p in run.pairs.values() {
        let (name, label) = workers.get(&p.worker).map_or_else(
            || (format!("worker-{}", p.worker), String::new()),
            |w| (w.token_name.clone(), w.info.name.clone()),
        );
        let row = by_token.entry(name.clone()).or_default();
        row.0[usize::from(p.score.half_points())] += 1;
        if !label.is_empty() && row.1.len() < LABELS_SHOWN {
            row.1.insert(label);
        }
        if run.excluded.contains(&name) {
            continue;
        }
        penta.add(p.score);
        for g in &p.games {
            let first_half = match (g.outcome, g.first_is_white) {
                (Outcome::Draw, _) => 1,
                (Outcome::WhiteWin, true) | (Outcome::BlackWin, false) => 2,
                _ => 0,
            };
            wdl[[2, 1, 0][first_half]] += 1;
            records.push(GameRecord {
                ruleset: g.ruleset.clone(),
                result: g.outcome,
                plies: g.plies,
                termination: g.termination.clone(),
                castlings: g.castlings.clone(),
            });
        }
    }
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
    let rulesets: BTreeSet<&str> = run
        .config
        .variants
        .iter()
        .map(|v| v.ruleset.as_str())
        .collect();
    let study = if run.config.kind == RunKind::Study || rulesets.len() > 1 {
        let baseline = run
            .config
            .study
            .as_ref()
            .and_then(|s| s.baseline.as_deref())
            .filter(|b| records.iter().any(|r| r.ruleset == *b));
        stats::study::study(&records, baseline).ok()
    } else {
        None
    };
    let rows: Vec<[u64; 5]> = by_token.values().map(|r| r.0).collect();
    let res = residual::residuals(&rows);
    let workers = by_token
        .into_iter()
        .zip(res)
        .map(|((name, (p, labels)), r)| WorkerShare {
            excluded: run.excluded.contains(&name),
            name,
            labels: labels.into_iter().collect(),
            pentanomial: p,
            residual: r,
        })
        .collect();
    Detail {
        summary,
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
