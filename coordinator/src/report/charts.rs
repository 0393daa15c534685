//! The charts of a run, drawn from its history: the end-of-plan `report.html` and the live
//! dashboard call these same functions, so both show the same pictures.

use proto::v1 as pb;
use stats::{llr, logistic_elo, EloModel, Pentanomial, Results};

use super::{bar_chart, line_chart, Bar, BarChart, LineChart, Series};

/// What the charts need of a run's past: cumulative figures at points along its pairs.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Cumulative pentanomial at each point, in order.
    pub pentanomials: Vec<Pentanomial>,
    /// Stored LLR at those points when known (else computed from the pentanomial).
    pub llrs: Vec<Option<f64>>,
    /// SPSA parameters after `x` iterations, in order.
    pub thetas: Vec<(u64, Vec<f64>)>,
}

fn name(d: &pb::RunDetail) -> String {
    d.summary
        .as_ref()
        .map_or_else(|| "?".into(), |s| s.name.clone())
}

/// Elo of `first` with its 95% band over games; `None` with fewer than two points.
pub fn elo(detail: &pb::RunDetail, h: &History) -> Option<String> {
    let mut s = Series {
        name: "Elo of first (95% interval)".into(),
        ..Series::default()
    };
    for p in &h.pentanomials {
        if let Ok(e) = logistic_elo(&Results::Pentanomial(*p)) {
            let g = p.games() as f64;
            if e.elo.is_finite() && e.ci[0].is_finite() && e.ci[1].is_finite() {
                s.points.push((g, e.elo));
                s.band.push((g, e.ci[0], e.ci[1]));
            }
        }
    }
    (s.points.len() >= 2).then(|| {
        line_chart(&LineChart {
            title: format!("{}: Elo over games", name(detail)),
            x_label: "games".into(),
            y_label: "Elo".into(),
            series: vec![s],
            hlines: vec![(0.0, "0".into())],
        })
    })
}

/// The SPRT's model by its name in [`pb::SprtFigures::model`].
pub fn elo_model(name: &str) -> EloModel {
    match name {
        "logistic" => EloModel::Logistic,
        "bayeselo" => EloModel::BayesElo,
        _ => EloModel::Normalized,
    }
}

/// LLR over games against the test's bounds (SPRT runs).
pub fn llr_chart(detail: &pb::RunDetail, h: &History) -> Option<String> {
    let sprt = detail.sprt.as_ref()?;
    let model = elo_model(&sprt.model);
    let mut s = Series {
        name: "LLR".into(),
        ..Series::default()
    };
    for (i, p) in h.pentanomials.iter().enumerate() {
        let stored = h.llrs.get(i).copied().flatten();
        let v = stored.or_else(|| llr(model, sprt.elo0, sprt.elo1, &Results::Pentanomial(*p)).ok());
        if let Some(v) = v.filter(|v| v.is_finite()) {
            s.points.push((p.games() as f64, v));
        }
    }
    (s.points.len() >= 2).then(|| {
        line_chart(&LineChart {
            title: format!("{}: LLR against its bounds", name(detail)),
            x_label: "games".into(),
            y_label: "LLR".into(),
            series: vec![s],
            hlines: vec![
                (
                    sprt.upper_bound,
                    format!("accept H1 ({:.2})", sprt.upper_bound),
                ),
                (
                    sprt.lower_bound,
                    format!("accept H0 ({:.2})", sprt.lower_bound),
                ),
            ],
        })
    })
}

/// Every SPSA parameter over iterations, as a share of its range (one scale for all).
pub fn spsa(detail: &pb::RunDetail, h: &History) -> Option<String> {
    let params = &detail.spsa;
    if params.is_empty() || h.thetas.len() < 2 {
        return None;
    }
    let step = (h.thetas.len() / 200).max(1);
    let last = h.thetas.len() - 1;
    let series = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let range = (p.max - p.min).max(1e-9);
            let mut points = vec![(0.0, 100.0 * (p.start - p.min) / range)];
            points.extend(
                h.thetas
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| j % step == 0 || *j == last)
                    .filter_map(|(_, (x, theta))| {
                        theta
                            .get(i)
                            .map(|t| (*x as f64, 100.0 * (t - p.min) / range))
                    }),
            );
            Series {
                name: p.name.clone(),
                points,
                band: vec![],
            }
        })
        .collect();
    Some(line_chart(&LineChart {
        title: format!("{}: SPSA parameters over iterations", name(detail)),
        x_label: "iterations (game pairs)".into(),
        y_label: "% of the parameter's range".into(),
        series,
        hlines: vec![],
    }))
}

/// White's score (with intervals) and draw rate per rule-set (two or more rule-sets).
pub fn study(detail: &pb::RunDetail) -> Vec<String> {
    let rows = &detail.study;
    if rows.len() < 2 {
        return vec![];
    }
    let score = BarChart {
        title: format!(
            "{}: White's score per rule-set (95% interval)",
            name(detail)
        ),
        y_label: "White's score".into(),
        bars: rows
            .iter()
            .map(|r| Bar {
                label: r.ruleset.clone(),
                value: r.white_score,
                interval: Some((r.white_score_low, r.white_score_high)),
            })
            .collect(),
        reference: Some((0.5, "50%".into())),
    };
    let draws = BarChart {
        title: format!("{}: draw rate per rule-set", name(detail)),
        y_label: "draw rate".into(),
        bars: rows
            .iter()
            .map(|r| Bar {
                label: r.ruleset.clone(),
                value: r.draw_rate,
                interval: None,
            })
            .collect(),
        reference: None,
    };
    vec![bar_chart(&score), bar_chart(&draws)]
}
