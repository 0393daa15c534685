//! The reports of a finished plan: a text summary for the terminal, a JSON file for scripts
//! and a self-contained HTML file with SVG plots (Elo with its interval over games, LLR
//! against its bounds, SPSA parameters over iterations, study bars with intervals).

use std::path::{Path, PathBuf};

use proto::v1 as pb;
use serde_json::{json, Value};
use stats::Pentanomial;

use crate::client::format_detail;
use crate::report::charts::{self, History};
use crate::report::{html_page, Block, Section};

/// What a report needs of one run.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The figures the coordinator computed.
    pub detail: pb::RunDetail,
    /// Pair scores of `first` (half points) in pair order.
    pub pairs: Vec<u8>,
    /// θ after each SPSA update, in order.
    pub spsa_thetas: Vec<(u64, Vec<f64>)>,
    /// The SPSA run this run measures, if any.
    pub tuned_from: Option<String>,
    /// How fast its games went on this machine (for the study's sizing).
    pub pace: Option<crate::report::study::Pace>,
}

/// The files written.
#[derive(Debug, Clone)]
pub struct Written {
    /// The terminal summary (also printed).
    pub text: String,
    /// `report.json`.
    pub json: PathBuf,
    /// `report.html`.
    pub html: PathBuf,
}

fn name(d: &pb::RunDetail) -> String {
    d.summary
        .as_ref()
        .map_or_else(|| "?".into(), |s| s.name.clone())
}

fn kind(d: &pb::RunDetail) -> String {
    d.summary
        .as_ref()
        .map_or_else(String::new, |s| s.kind.clone())
}

/// Cumulative pentanomial counts at about `points` checkpoints along the pairs.
fn checkpoints(pairs: &[u8], points: usize) -> Vec<Pentanomial> {
    let step = (pairs.len() / points.max(1)).max(1);
    let mut p = Pentanomial::default();
    let mut out = Vec::new();
    for (i, &s) in pairs.iter().enumerate() {
        p.0[usize::from(s.min(4))] += 1;
        if (i + 1) % step == 0 || i + 1 == pairs.len() {
            out.push(p);
        }
    }
    out
}

/// The run's history for the charts: cumulative pentanomials at about 120 points, and θ after
/// each SPSA update.
fn history(run: &RunData) -> History {
    History {
        pentanomials: checkpoints(&run.pairs, 120),
        llrs: vec![],
        thetas: run.spsa_thetas.clone(),
    }
}

/// The run's full study figures, when it has them.
fn study_of(d: &pb::RunDetail) -> Option<stats::study::Study> {
    if d.study_json.is_empty() {
        return None;
    }
    serde_json::from_str(&d.study_json).ok()
}

fn headline(run: &RunData) -> Option<String> {
    let source = run.tuned_from.as_ref()?;
    let e = run.detail.elo.as_ref()?;
    Some(format!(
        "Tuned ({source}) against its start: {:+.1} Elo, 95% interval [{:+.1}, {:+.1}], LOS {:.1}% over {} games.",
        e.elo,
        e.ci_low,
        e.ci_high,
        100.0 * e.los,
        run.detail.wins + run.detail.draws + run.detail.losses
    ))
}

fn run_json(run: &RunData) -> Value {
    let mut v = crate::report::json::detail(&run.detail);
    if let Some(map) = v.as_object_mut() {
        map.insert("tuned_from".into(), json!(run.tuned_from));
    }
    v
}

/// The terminal summary of every run.
pub fn text(title: &str, runs: &[RunData]) -> String {
    let mut out = format!("== {title} ==\n");
    for run in runs {
        out.push('\n');
        out.push_str(&format_detail(&run.detail));
        if let Some(h) = headline(run) {
            out.push_str(&h);
            out.push('\n');
        }
        if let Some(study) = study_of(&run.detail) {
            out.push('\n');
            let config = crate::config::RunConfig::parse(&run.detail.config_toml).ok();
            let mut tables = crate::report::study::tables(&study);
            tables.extend(crate::report::study::decisions_for(&study, config.as_ref()));
            out.push_str(&crate::report::study::text(&tables));
        }
    }
    out.push_str(&crate::report::study::text(&across(runs)));
    out
}

/// The plan's studies side by side, when it has two or more (several strengths or engines):
/// the comparisons across them, then the baseline as each played it.
fn across(runs: &[RunData]) -> Vec<crate::report::study::StudyTable> {
    let studies: Vec<(String, stats::study::Study)> = runs
        .iter()
        .filter_map(|r| Some((name(&r.detail), study_of(&r.detail)?)))
        .collect();
    crate::report::study::side_by_side(&studies)
}

/// Writes `report.json` and `report.html` into `dir` and returns them with the summary.
pub fn write(dir: &Path, title: &str, runs: &[RunData]) -> std::io::Result<Written> {
    let summary = text(title, runs);
    let json_path = dir.join("report.json");
    let doc = json!({ "title": title, "runs": runs.iter().map(run_json).collect::<Vec<_>>() });
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&doc).unwrap_or_default(),
    )?;

    let mut sections = Vec::new();
    for run in runs {
        let mut blocks = Vec::new();
        if let Some(h) = headline(run) {
            blocks.push(Block::Text(h));
        }
        // A study is one engine playing itself under several rule-sets: its question is what
        // the rules do, so its figures lead and the Elo of a player against itself is left out.
        let is_study = kind(&run.detail) == "study";
        if let Some(study) = study_of(&run.detail) {
            let config = crate::config::RunConfig::parse(&run.detail.config_toml).ok();
            if let Some(w) = config
                .as_ref()
                .and_then(|c| crate::report::study::repeated_openings(c, &study))
            {
                blocks.push(Block::Text(w));
            }
            for t in crate::report::study::run_tables(&study, config.as_ref(), run.pace) {
                blocks.push(Block::Text(format!("{}. {}", t.title, t.note)));
                blocks.push(Block::Table {
                    headers: t.headers,
                    rows: t.rows,
                });
            }
        }
        if !is_study {
            blocks.push(Block::Pre(format_detail(&run.detail)));
        }
        let h = history(run);
        let charts = if is_study {
            vec![]
        } else {
            vec![
                charts::elo(&run.detail, &h),
                charts::llr_chart(&run.detail, &h),
                charts::spsa(&run.detail, &h),
            ]
        };
        for svg in charts.into_iter().flatten() {
            blocks.push(Block::Svg(svg));
        }
        if !run.detail.spsa.is_empty() {
            blocks.push(Block::Table {
                headers: vec![
                    "parameter".into(),
                    "start".into(),
                    "tuned".into(),
                    "min".into(),
                    "max".into(),
                ],
                rows: run
                    .detail
                    .spsa
                    .iter()
                    .map(|p| {
                        vec![
                            p.name.clone(),
                            format!("{}", p.start),
                            format!("{:.1}", p.value),
                            format!("{}", p.min),
                            format!("{}", p.max),
                        ]
                    })
                    .collect(),
            });
        }
        if !run.detail.study.is_empty() && study_of(&run.detail).is_none() {
            blocks.push(Block::Table {
                headers: vec![
                    "rule-set".into(),
                    "games".into(),
                    "White wins".into(),
                    "draws".into(),
                    "Black wins".into(),
                    "White's score (95%)".into(),
                    "draw rate".into(),
                    "mean plies".into(),
                ],
                rows: run
                    .detail
                    .study
                    .iter()
                    .map(|r| {
                        vec![
                            r.ruleset.clone(),
                            r.games.to_string(),
                            r.white_wins.to_string(),
                            r.draws.to_string(),
                            r.black_wins.to_string(),
                            format!(
                                "{:.1}% [{:.1}, {:.1}]",
                                100.0 * r.white_score,
                                100.0 * r.white_score_low,
                                100.0 * r.white_score_high
                            ),
                            format!("{:.1}%", 100.0 * r.draw_rate),
                            format!("{:.0}", r.mean_plies),
                        ]
                    })
                    .collect(),
            });
        }
        for svg in charts::study(&run.detail) {
            blocks.push(Block::Svg(svg));
        }
        if is_study {
            blocks.push(Block::Pre(format_detail(&run.detail)));
        }
        sections.push(Section {
            heading: format!("{} ({})", name(&run.detail), kind(&run.detail)),
            blocks,
        });
    }
    for (k, t) in across(runs).into_iter().enumerate() {
        sections.insert(
            k,
            Section {
                heading: t.title.clone(),
                blocks: vec![
                    Block::Text(t.note),
                    Block::Table {
                        headers: t.headers,
                        rows: t.rows,
                    },
                ],
            },
        );
    }
    let html_path = dir.join("report.html");
    std::fs::write(
        &html_path,
        html_page(
            title,
            "variant self-play cluster: local run report",
            &sections,
        ),
    )?;
    Ok(Written {
        text: summary,
        json: json_path,
        html: html_path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_accumulate_and_end_at_the_total() {
        let pairs = [2u8, 4, 0, 3, 1, 2, 2];
        let c = checkpoints(&pairs, 3);
        assert_eq!(c.last().map(|p| p.pairs()), Some(7));
        assert!(c.windows(2).all(|w| w[0].pairs() < w[1].pairs()));
    }

    #[test]
    fn a_report_renders_every_kind_of_figure() {
        let dir = tempfile::tempdir().expect("temp dir");
        let detail = pb::RunDetail {
            summary: Some(pb::RunSummary {
                name: "t".into(),
                kind: "spsa".into(),
                ..Default::default()
            }),
            spsa: vec![pb::SpsaParam {
                name: "KnightValueMg".into(),
                value: 300.0,
                start: 250.0,
                min: 150.0,
                max: 600.0,
                iterations: 3,
            }],
            sprt: Some(pb::SprtFigures {
                llr: 0.5,
                lower_bound: -2.94,
                upper_bound: 2.94,
                state: "continue".into(),
                elo0: 0.0,
                elo1: 5.0,
                model: "normalized".into(),
                counted_pairs: 6,
            }),
            study: vec![
                pb::RulesetRow {
                    ruleset: "normal".into(),
                    games: 10,
                    white_score: 0.55,
                    white_score_low: 0.4,
                    white_score_high: 0.7,
                    draw_rate: 0.3,
                    ..Default::default()
                },
                pb::RulesetRow {
                    ruleset: "luft".into(),
                    games: 10,
                    white_score: 0.5,
                    white_score_low: 0.35,
                    white_score_high: 0.65,
                    draw_rate: 0.4,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let run = RunData {
            detail,
            pairs: vec![2, 3, 1, 4, 2, 2],
            spsa_thetas: vec![(1, vec![260.0]), (2, vec![280.0]), (3, vec![300.0])],
            tuned_from: None,
            pace: None,
        };
        let w = write(dir.path(), "Report", &[run]).expect("written");
        let html = std::fs::read_to_string(&w.html).expect("html");
        assert!(
            html.matches("<svg").count() >= 4,
            "Elo, LLR, SPSA and two study charts"
        );
        assert!(html.contains("KnightValueMg") && html.contains("luft"));
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(&w.json).expect("json")).expect("valid");
        assert_eq!(json["runs"][0]["spsa"][0]["value"], 300.0);
        assert!(w.text.contains("SPSA"));
    }
}
