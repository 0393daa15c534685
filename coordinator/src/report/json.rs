//! A run's figures as JSON: `report.json` at the end of a plan and the dashboard's
//! `/api/runs/ID` give the same document.

use proto::v1 as pb;
use serde_json::{json, Value};

/// The state's name as the command line and the pages show it.
pub fn state_name(state: i32) -> &'static str {
    match pb::RunState::try_from(state) {
        Ok(pb::RunState::Active) => "active",
        Ok(pb::RunState::Paused) => "paused",
        Ok(pb::RunState::Stopped) => "stopped",
        Ok(pb::RunState::Finished) => "finished",
        _ => "unknown",
    }
}

/// A run's summary line.
pub fn summary(s: &pb::RunSummary) -> Value {
    json!({
        "id": s.run_id,
        "name": s.name,
        "kind": s.kind,
        "state": state_name(s.state),
        "priority": s.priority,
        "finish_reason": s.finish_reason,
        "pairs_done": s.pairs_done,
        "pairs_total": s.pairs_total,
        "pairs_leased": s.pairs_leased,
        "games_done": 2 * s.pairs_done,
        "created_unix_ms": s.created_unix_ms,
    })
}

/// Elo figures, if any.
pub fn elo(e: Option<&pb::EloFigures>) -> Value {
    e.map_or(Value::Null, |e| {
        json!({
            "elo": e.elo, "ci": [e.ci_low, e.ci_high], "los": e.los,
            "nelo": e.nelo, "nelo_ci": [e.nelo_ci_low, e.nelo_ci_high],
        })
    })
}

/// SPRT figures, if any.
pub fn sprt(p: Option<&pb::SprtFigures>) -> Value {
    p.map_or(Value::Null, |p| {
        json!({
            "llr": p.llr, "bounds": [p.lower_bound, p.upper_bound], "state": p.state,
            "elo0": p.elo0, "elo1": p.elo1, "model": p.model, "counted_pairs": p.counted_pairs,
        })
    })
}

/// Every figure of a run.
pub fn detail(d: &pb::RunDetail) -> Value {
    let s = d.summary.clone().unwrap_or_default();
    let mut v = summary(&s);
    let extra = json!({
        "wins": d.wins, "draws": d.draws, "losses": d.losses,
        "pentanomial": d.pentanomial,
        "elo": elo(d.elo.as_ref()),
        "sprt": sprt(d.sprt.as_ref()),
        "spsa": d.spsa.iter().map(|p| json!({
            "name": p.name, "value": p.value, "start": p.start, "min": p.min, "max": p.max,
            "iterations": p.iterations,
        })).collect::<Vec<_>>(),
        "study": d.study.iter().map(|r| json!({
            "ruleset": r.ruleset, "games": r.games, "white_wins": r.white_wins, "draws": r.draws,
            "black_wins": r.black_wins, "white_score": r.white_score,
            "white_score_ci": [r.white_score_low, r.white_score_high], "draw_rate": r.draw_rate,
            "mean_plies": r.mean_plies, "castling_share": r.castling_share,
        })).collect::<Vec<_>>(),
        "comparisons": d.comparisons.iter().map(|c| json!({
            "ruleset": c.ruleset, "baseline": c.baseline, "white_score_diff": c.white_score_diff,
            "white_score_p": c.white_score_p, "draw_rate_diff": c.draw_rate_diff, "draw_rate_p": c.draw_rate_p,
        })).collect::<Vec<_>>(),
        "by_ruleset": d.row_scores.iter().map(|r| json!({
            "ruleset": r.ruleset, "wins": r.wins, "draws": r.draws, "losses": r.losses,
            "pentanomial": r.pentanomial, "elo": elo(r.elo.as_ref()),
        })).collect::<Vec<_>>(),
        "workers": d.workers.iter().map(|w| json!({
            "name": w.name, "pairs": w.pairs, "pentanomial": w.pentanomial,
            "residual": w.residual, "flagged": w.flagged, "excluded": w.excluded,
            "labels": w.labels,
        })).collect::<Vec<_>>(),
        "config_toml": d.config_toml,
    });
    if let (Some(map), Value::Object(more)) = (v.as_object_mut(), extra) {
        map.extend(more);
    }
    v
}
