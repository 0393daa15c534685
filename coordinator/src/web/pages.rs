//! The HTML pages: runs, a run, workers. Rendered on the server from the same figures as the
//! JSON endpoints and with the same chart code as `report.html`. `?fragment=1` answers only
//! the live part of a page (`<div id="live">`), which the script swaps in after each commit.

use super::api::{self, ApiError, S};
use super::auth;
use super::WebState;
use crate::history::Point;
use crate::report::charts::{self, History};
use crate::report::escape;
use crate::report::json::state_name;
use crate::service::now_ms;
use axum::extract::{Path, Query};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Response};
use proto::v1 as pb;
use std::fmt::Write as _;

/// Query string of every page.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct PageQuery {
    /// Only the live part.
    #[serde(default)]
    fragment: Option<String>,
}

fn layout(title: &str, here: &str, before: &str, live: &str) -> String {
    let nav = |href: &str, name: &str| {
        let class = if name == here { " class=\"here\"" } else { "" };
        format!("<a href=\"{href}\"{class}>{name}</a>")
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{t}</title>\
<link rel=\"stylesheet\" href=\"/assets/dashboard.css\"><script src=\"/assets/dashboard.js\" defer></script>\
</head><body><header>{runs}{workers}<span class=\"live\" id=\"updated\">live</span></header>\
<main>{before}<div id=\"live\">{live}</div></main></body></html>\n",
        t = escape(title),
        runs = nav("/", "Runs"),
        workers = nav("/workers", "Workers"),
    )
}

fn respond(q: &PageQuery, title: &str, here: &str, before: &str, live: String) -> Response {
    if q.fragment.is_some() {
        Html(live).into_response()
    } else {
        Html(layout(title, here, before, &live)).into_response()
    }
}

fn td(text: &str) -> String {
    format!("<td>{}</td>", escape(text))
}

fn td_l(text: &str) -> String {
    format!("<td class=\"l\">{}</td>", escape(text))
}

fn td_num(value: f64, text: &str) -> String {
    format!("<td data-value=\"{value}\">{}</td>", escape(text))
}

fn th_sort(name: &str) -> String {
    format!("<th data-sort>{}</th>", escape(name))
}

fn ago(now: u64, at: u64) -> String {
    let s = now.saturating_sub(at) / 1000;
    match s {
        0..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}

fn signed(v: f64) -> String {
    format!("{v:+.1}")
}

/// The run's key figure in a line: LLR against its bounds, Elo with its interval, SPSA
/// iterations, or White's score per rule-set for a study.
fn key_figure(d: &pb::RunDetail) -> (f64, String) {
    let kind = d.summary.as_ref().map_or("", |s| s.kind.as_str());
    if let Some(p) = &d.sprt {
        return (
            p.llr,
            format!(
                "LLR {:.2} [{:.2}, {:.2}] {}",
                p.llr, p.lower_bound, p.upper_bound, p.state
            ),
        );
    }
    if kind == "spsa" {
        let it = d.spsa.first().map_or(0, |p| p.iterations);
        return (it as f64, format!("{it} iterations"));
    }
    if kind == "study" {
        let rows: Vec<String> = d
            .study
            .iter()
            .map(|r| format!("{} {:.3}", r.ruleset, r.white_score))
            .collect();
        return (0.0, format!("White's score: {}", rows.join(", ")));
    }
    match &d.elo {
        Some(e) => (
            e.elo,
            format!(
                "Elo {} [{}, {}]",
                signed(e.elo),
                signed(e.ci_low),
                signed(e.ci_high)
            ),
        ),
        None => (0.0, "no games yet".into()),
    }
}

fn progress_cell(s: &pb::RunSummary) -> String {
    let share = if s.pairs_total == 0 {
        0.0
    } else {
        s.pairs_done as f64 / s.pairs_total as f64
    };
    format!(
        "<td data-value=\"{share}\"><span class=\"bar\"><span style=\"width:{:.1}%\"></span></span>{} / {} games</td>",
        100.0 * share.min(1.0),
        2 * s.pairs_done,
        2 * s.pairs_total
    )
}

/// `GET /`: every run.
pub(super) async fn runs(
    axum::extract::State(s): S,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let details = api::details(&s).await?;
    let rates = api::rates(&s, &details).await?;
    let now = now_ms();
    let mut rows = Vec::with_capacity(details.len());
    for (d, rate) in details.iter().zip(rates) {
        let sm = d.summary.clone().unwrap_or_default();
        let state = state_name(sm.state);
        let (fig_value, fig) = key_figure(d);
        rows.push(format!(
            "<tr data-run=\"{id}\">{idc}<td class=\"l\"><a href=\"/runs/{id}\">{name}</a></td>{kind}\
<td class=\"l state-{state}\" data-field=\"state\" title=\"{reason}\">{state}</td>{variants}{progress}{rate}\
<td class=\"l\" data-field=\"figure\" data-value=\"{fig_value}\">{fig}</td>{created}</tr>",
            id = sm.run_id,
            idc = td_num(sm.run_id as f64, &sm.run_id.to_string()),
            name = escape(&sm.name),
            kind = td_l(&sm.kind),
            reason = escape(&sm.finish_reason),
            variants = td_l(&api::variants(&d.config_toml).join(", ")),
            progress = progress_cell(&sm),
            rate = td_num(rate, &format!("{rate:.1}")),
            fig = escape(&fig),
            created = td_num(sm.created_unix_ms as f64, &ago(now, sm.created_unix_ms)),
        ));
    }
    let mut live = table_with_class(
        "runs",
        "filterable",
        &[
            "id", "name", "kind", "state", "variants", "progress", "games/s", "figure", "created",
        ],
        &rows,
    );
    if details.is_empty() {
        live.push_str(
            "<p>No runs yet: create one with <code>coordinator run create CONFIG.toml</code>.</p>",
        );
    }
    live.push_str(&compare_links(&details));
    let before = "<h1>Runs</h1><input id=\"filter\" type=\"search\" placeholder=\"filter by name, kind, state, variant\" aria-label=\"filter runs\">";
    Ok(respond(&q, "Runs", "Runs", before, live))
}

/// Most studies one comparison page lines up (each is a column).
pub(super) const COMPARE_MAX_RUNS: usize = 8;

/// Links to the side-by-side page for each variant with two or more studies (the latest
/// [`COMPARE_MAX_RUNS`]): several strengths, or other engines playing the baseline.
fn compare_links(details: &[pb::RunDetail]) -> String {
    let mut by_variant: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for d in details {
        let Some(sm) = d.summary.as_ref() else {
            continue;
        };
        if sm.kind != "study" {
            continue;
        }
        let Ok(config) = crate::config::RunConfig::parse(&d.config_toml) else {
            continue;
        };
        if let Some(v) = config.variants.first() {
            by_variant
                .entry(v.variant.clone())
                .or_default()
                .push(sm.run_id);
        }
    }
    let links: Vec<String> = by_variant
        .into_iter()
        .filter(|(_, ids)| ids.len() >= 2)
        .map(|(variant, mut ids)| {
            ids.sort_unstable();
            let latest = &ids[ids.len().saturating_sub(COMPARE_MAX_RUNS)..];
            let list: Vec<String> = latest.iter().map(u64::to_string).collect();
            format!(
                "<li><a class=\"compare\" href=\"/compare?runs={}\">{} studies side by side (runs {})</a></li>",
                list.join(","),
                escape(&variant),
                list.join(", ")
            )
        })
        .collect();
    if links.is_empty() {
        String::new()
    } else {
        format!("<h2>Studies side by side</h2><ul>{}</ul>", links.concat())
    }
}

/// Query of `/compare`: the study runs to line up, `runs=3,4,5`.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct CompareQuery {
    #[serde(default)]
    runs: Option<String>,
    #[serde(default)]
    fragment: Option<String>,
}

/// The run ids of a `/compare` query, checked: whole numbers, no repeats, two to
/// [`COMPARE_MAX_RUNS`].
pub(super) fn compare_ids(raw: Option<&str>) -> Result<Vec<u64>, ApiError> {
    let raw = raw.map(str::trim).unwrap_or_default();
    if raw.is_empty() {
        return Err(ApiError::BadRequest(
            "give the study runs to compare: /compare?runs=3,4".into(),
        ));
    }
    let mut ids = Vec::new();
    for item in raw.split(',') {
        if ids.len() == COMPARE_MAX_RUNS {
            return Err(ApiError::BadRequest(format!(
                "at most {COMPARE_MAX_RUNS} runs side by side"
            )));
        }
        let id = item.trim().parse::<u64>().map_err(|_| {
            ApiError::BadRequest(format!(
                "runs: {:?} is not a run id (whole numbers, separated by commas)",
                item.chars().take(40).collect::<String>()
            ))
        })?;
        if ids.contains(&id) {
            return Err(ApiError::BadRequest(format!(
                "runs: run {id} is given twice"
            )));
        }
        ids.push(id);
    }
    if ids.len() < 2 {
        return Err(ApiError::BadRequest(
            "runs: give two or more study runs to compare".into(),
        ));
    }
    Ok(ids)
}

/// `GET /compare?runs=3,4,5`: studies side by side, as the local report shows a plan's: each
/// comparison across them with a verdict, and the baseline as each played it.
pub(super) async fn compare(
    axum::extract::State(s): S,
    headers: HeaderMap,
    Query(cq): Query<CompareQuery>,
) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let ids = compare_ids(cq.runs.as_deref())?;
    let mut studies = Vec::new();
    let mut rows = Vec::new();
    for id in ids {
        let d = api::detail(&s, id).await?;
        let sm = d.summary.clone().unwrap_or_default();
        if sm.kind != "study" {
            return Err(ApiError::BadRequest(format!(
                "run {id} is a {} run, not a study",
                sm.kind
            )));
        }
        let Ok(study) = serde_json::from_str::<stats::study::Study>(&d.study_json) else {
            return Err(ApiError::BadRequest(format!(
                "run {id} has no study figures yet"
            )));
        };
        let games: u64 = study.rulesets.iter().map(|r| r.games).sum();
        let player = crate::config::RunConfig::parse(&d.config_toml)
            .map(|c| c.first.engine)
            .unwrap_or_default();
        rows.push(format!(
            "<tr>{}<td class=\"l\"><a href=\"/runs/{id}\">{}</a></td>{}{}{}</tr>",
            td_num(id as f64, &id.to_string()),
            escape(&sm.name),
            td_l(&player),
            td_l(&api::variants(&d.config_toml).join(", ")),
            td_num(games as f64, &games.to_string()),
        ));
        studies.push((format!("{} (run {id})", sm.name), study));
    }
    let mut live = table(
        "compared",
        &["id", "study", "engine", "rule-sets", "games"],
        &rows,
    );
    let tables = crate::report::study::side_by_side(&studies);
    if tables.is_empty() {
        live.push_str(
            "<p>These studies have nothing in common to line up: no comparison against the \
             same baseline, and no shared baseline rule-set.</p>",
        );
    }
    for (k, t) in tables.into_iter().enumerate() {
        let headers: Vec<&str> = t.headers.iter().map(String::as_str).collect();
        let rows: Vec<String> = t
            .rows
            .iter()
            .map(|r| format!("<tr>{}</tr>", r.iter().map(|c| td_l(c)).collect::<String>()))
            .collect();
        let _ = write!(
            live,
            "<h2>{}</h2><p class=\"note\">{}</p>{}",
            escape(&t.title),
            escape(&t.note),
            table(&format!("across-{k}"), &headers, &rows)
        );
    }
    let q = PageQuery {
        fragment: cq.fragment,
    };
    let before = "<h1>Studies side by side</h1>";
    Ok(respond(&q, "Studies side by side", "", before, live))
}

fn history_of(points: &[Point], d: &pb::RunDetail) -> History {
    let mut h = History::default();
    for p in points {
        h.pentanomials.push(p.penta());
        h.llrs.push(p.llr);
        if !p.theta.is_empty() {
            h.thetas.push((p.pairs, p.theta.clone()));
        }
    }
    // The current figures as the last point, so charts reach what the numbers above say.
    let done = d.summary.as_ref().map_or(0, |s| s.pairs_done);
    if points.last().is_none_or(|p| p.pairs < done) {
        let mut penta = [0u64; 5];
        for (slot, v) in penta.iter_mut().zip(&d.pentanomial) {
            *slot = *v;
        }
        h.pentanomials.push(stats::Pentanomial(penta));
        h.llrs.push(d.sprt.as_ref().map(|s| s.llr));
        if !d.spsa.is_empty() {
            h.thetas
                .push((done, d.spsa.iter().map(|p| p.value).collect()));
        }
    }
    h
}

fn figures_block(d: &pb::RunDetail, rate: f64) -> String {
    let s = d.summary.clone().unwrap_or_default();
    let state = state_name(s.state);
    let mut out = String::from("<div class=\"figs\">");
    let mut fig = |id: &str, label: &str, value: &str| {
        let _ = write!(
            out,
            "<div><small>{}</small><b id=\"{id}\">{}</b></div>",
            escape(label),
            escape(value)
        );
    };
    fig("state", "state", state);
    fig("kind", "kind", &s.kind);
    fig(
        "pairs-done",
        "pairs done / planned",
        &format!("{} / {}", s.pairs_done, s.pairs_total),
    );
    fig("games", "games", &(2 * s.pairs_done).to_string());
    fig("leased", "pairs leased", &s.pairs_leased.to_string());
    fig("rate", "games/s (last 2 min)", &format!("{rate:.1}"));
    // A study is one engine playing itself: the Elo of "first" against itself is noise about
    // zero, and its tables say what the run is for.
    let is_study = s.kind == "study";
    if is_study {
        out.push_str("</div>");
        if !s.finish_reason.is_empty() {
            let _ = write!(out, "<p id=\"reason\">{}</p>", escape(&s.finish_reason));
        }
        return out;
    }
    fig(
        "wdl",
        "W / D / L of first",
        &format!("{} / {} / {}", d.wins, d.draws, d.losses),
    );
    if let Some(e) = &d.elo {
        fig(
            "elo",
            "Elo of first (95%)",
            &format!(
                "{} [{}, {}]",
                signed(e.elo),
                signed(e.ci_low),
                signed(e.ci_high)
            ),
        );
        fig("los", "LOS", &format!("{:.1}%", 100.0 * e.los));
        fig(
            "nelo",
            "nElo (95%)",
            &format!(
                "{} [{}, {}]",
                signed(e.nelo),
                signed(e.nelo_ci_low),
                signed(e.nelo_ci_high)
            ),
        );
    }
    if let Some(p) = &d.sprt {
        fig(
            "llr",
            &format!("LLR ({}, elo0 {}, elo1 {})", p.model, p.elo0, p.elo1),
            &format!("{:.2} [{:.2}, {:.2}]", p.llr, p.lower_bound, p.upper_bound),
        );
        fig("sprt-state", "SPRT", &p.state);
    }
    out.push_str("</div>");
    if !s.finish_reason.is_empty() {
        let _ = write!(out, "<p id=\"reason\">{}</p>", escape(&s.finish_reason));
    }
    out
}

fn table(id: &str, headers: &[&str], rows: &[String]) -> String {
    table_with_class(id, "", headers, rows)
}

/// A sortable table in its scrolling box; class `filterable` lets the page's filter box
/// hide its rows.
fn table_with_class(id: &str, class: &str, headers: &[&str], rows: &[String]) -> String {
    let class = if class.is_empty() {
        String::new()
    } else {
        format!(" class=\"{class}\"")
    };
    let mut out = format!("<div class=\"scroll\"><table id=\"{id}\"{class}><thead><tr>");
    for h in headers {
        out.push_str(&th_sort(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str(r);
    }
    out.push_str("</tbody></table></div>");
    out
}

fn penta_table(d: &pb::RunDetail) -> String {
    let mut row = String::from("<tr>");
    for v in &d.pentanomial {
        row.push_str(&td_num(*v as f64, &v.to_string()));
    }
    row.push_str("</tr>");
    table(
        "pentanomial",
        &["0 (LL)", "½ (LD)", "1 (WL, DD)", "1½ (WD)", "2 (WW)"],
        &[row],
    )
}

fn whole(v: f64) -> bool {
    (v - v.round()).abs() < 1e-9
}

fn spsa_block(d: &pb::RunDetail) -> String {
    if d.spsa.is_empty() {
        return String::new();
    }
    let integral = d
        .spsa
        .iter()
        .all(|p| whole(p.start) && whole(p.min) && whole(p.max));
    let rows: Vec<String> = d
        .spsa
        .iter()
        .map(|p| {
            let share = 100.0 * (p.value - p.min) / (p.max - p.min).max(1e-9);
            format!(
                "<tr>{}{}{}{}{}{}</tr>",
                td_l(&p.name),
                td_num(p.start, &format!("{}", p.start)),
                td_num(p.value, &format!("{:.2}", p.value)),
                td_num(share, &format!("{share:.1}%")),
                td_num(p.min, &format!("{}", p.min)),
                td_num(p.max, &format!("{}", p.max)),
            )
        })
        .collect();
    let block: String = d
        .spsa
        .iter()
        .map(|p| {
            if integral {
                format!("{} = {}\n", p.name, p.value.round())
            } else {
                format!("{} = {:.4}\n", p.name, p.value)
            }
        })
        .collect();
    format!(
        "<h2>SPSA parameters</h2>{}<p>Current values, ready to paste into a player's options:</p><pre id=\"spsa-block\">{}</pre>",
        table("spsa", &["parameter", "start", "now", "of range", "min", "max"], &rows),
        escape(&block)
    )
}

/// The study's tables (castling first), from its full figures.
fn study_tables(d: &pb::RunDetail) -> Option<String> {
    let study: stats::study::Study = serde_json::from_str(&d.study_json).ok()?;
    let mut out = String::new();
    let config = crate::config::RunConfig::parse(&d.config_toml).ok();
    if let Some(w) = config
        .as_ref()
        .and_then(|c| crate::report::study::repeated_openings(c, &study))
    {
        out.push_str(&format!("<p class=\"warn\">{}</p>", escape(&w)));
    }
    let tables = crate::report::study::run_tables(&study, config.as_ref(), None);
    for (k, t) in tables.into_iter().enumerate() {
        let headers: Vec<&str> = t.headers.iter().map(String::as_str).collect();
        let rows: Vec<String> = t
            .rows
            .iter()
            .map(|r| {
                let cells: String = r.iter().map(|c| td_l(c)).collect();
                format!("<tr>{cells}</tr>")
            })
            .collect();
        out.push_str(&format!(
            "<h2>{}</h2><p class=\"note\">{}</p>{}",
            escape(&t.title),
            escape(&t.note),
            table(&format!("study-{k}"), &headers, &rows)
        ));
    }
    Some(out)
}

/// `first`'s results under each rule-set of a run that mixes them: did one variant pay for
/// another's gain?
fn row_scores_block(d: &pb::RunDetail) -> String {
    if d.row_scores.is_empty() {
        return String::new();
    }
    let rows: Vec<String> = d
        .row_scores
        .iter()
        .map(|r| {
            let score = crate::client::row_trinomial(r).score().unwrap_or(0.0);
            let elo = r.elo.as_ref().map_or((0.0, String::new()), |e| {
                (
                    e.elo,
                    format!("{:+.1} [{:+.1}, {:+.1}]", e.elo, e.ci_low, e.ci_high),
                )
            });
            format!(
                "<tr>{}{}{}{}{}{}{}</tr>",
                td_l(&r.ruleset),
                td_num(r.wins as f64, &r.wins.to_string()),
                td_num(r.draws as f64, &r.draws.to_string()),
                td_num(r.losses as f64, &r.losses.to_string()),
                td_num(score, &format!("{:.1}%", 100.0 * score)),
                td_num(elo.0, &elo.1),
                td_l(&format!("{:?}", r.pentanomial)),
            )
        })
        .collect();
    format!(
        "<h2>First by rule-set</h2>{}",
        table(
            "by-ruleset",
            &[
                "rule-set",
                "wins",
                "draws",
                "losses",
                "score",
                "Elo (95%)",
                "pentanomial"
            ],
            &rows
        )
    )
}

fn study_block(d: &pb::RunDetail) -> String {
    if d.study.is_empty() {
        return String::new();
    }
    if let Some(tables) = study_tables(d) {
        return tables;
    }
    let rows: Vec<String> = d
        .study
        .iter()
        .map(|r| {
            let mut castling: Vec<String> = r
                .castling_share
                .iter()
                .map(|(k, v)| format!("{k} {:.1}%", 100.0 * v))
                .collect();
            castling.sort();
            format!(
                "<tr>{}{}{}{}{}{}</tr>",
                td_l(&r.ruleset),
                td_num(r.games as f64, &r.games.to_string()),
                td_num(
                    r.white_score,
                    &format!(
                        "{:.3} [{:.3}, {:.3}]",
                        r.white_score, r.white_score_low, r.white_score_high
                    )
                ),
                td_num(r.draw_rate, &format!("{:.1}%", 100.0 * r.draw_rate)),
                td_num(r.mean_plies, &format!("{:.1}", r.mean_plies)),
                td_l(&castling.join(", ")),
            )
        })
        .collect();
    let mut out = format!(
        "<h2>Rule-sets</h2>{}",
        table(
            "study",
            &[
                "rule-set",
                "games",
                "White's score (95%)",
                "draw rate",
                "mean plies",
                "castling played (share of games)"
            ],
            &rows
        )
    );
    if !d.comparisons.is_empty() {
        let rows: Vec<String> = d
            .comparisons
            .iter()
            .map(|c| {
                format!(
                    "<tr>{}{}{}{}{}{}</tr>",
                    td_l(&c.ruleset),
                    td_l(&c.baseline),
                    td_num(c.white_score_diff, &format!("{:+.3}", c.white_score_diff)),
                    td_num(c.white_score_p, &format!("{:.3}", c.white_score_p)),
                    td_num(c.draw_rate_diff, &format!("{:+.3}", c.draw_rate_diff)),
                    td_num(c.draw_rate_p, &format!("{:.3}", c.draw_rate_p)),
                )
            })
            .collect();
        out.push_str("<h2>Against the baseline</h2>");
        out.push_str(&table(
            "comparisons",
            &[
                "rule-set",
                "baseline",
                "White's score diff",
                "p",
                "draw rate diff",
                "p",
            ],
            &rows,
        ));
    }
    out
}

fn workers_block(d: &pb::RunDetail, id: u64) -> String {
    if d.workers.is_empty() {
        return String::new();
    }
    let rows: Vec<String> = d
        .workers
        .iter()
        .map(|w| {
            let penta: Vec<String> = w.pentanomial.iter().map(u64::to_string).collect();
            let flag = if w.flagged {
                format!("<td class=\"flag\" data-value=\"{}\">{:+.2} flagged</td>", w.residual, w.residual)
            } else {
                td_num(w.residual, &format!("{:+.2}", w.residual))
            };
            let (label, to) = if w.excluded { ("include", "false") } else { ("exclude", "true") };
            format!(
                "<tr>{}{}{}{}{flag}{}<td><button data-action=\"exclude\" data-run=\"{id}\" data-worker=\"{}\" data-exclude=\"{to}\">{label}</button></td></tr>",
                td_l(&w.name),
                td_l(&w.labels.join(", ")),
                td_num(w.pairs as f64, &w.pairs.to_string()),
                td(&format!("[{}]", penta.join(", "))),
                td_l(if w.excluded { "excluded" } else { "counted" }),
                escape(&w.name),
            )
        })
        .collect();
    format!(
        "<h2>Workers (by token)</h2>{}",
        table(
            "run-workers",
            &[
                "token",
                "machines",
                "pairs",
                "pentanomial",
                "residual",
                "figures",
                ""
            ],
            &rows
        )
    )
}

fn leases_block(leases: &[crate::model::LeaseView], now: u64) -> String {
    if leases.is_empty() {
        return "<h2>Active leases</h2><p>None.</p>".into();
    }
    let rows: Vec<String> = leases
        .iter()
        .map(|l| {
            format!(
                "<tr>{}{}{}{}{}{}</tr>",
                td_num(l.id as f64, &l.id.to_string()),
                td_l(&l.worker),
                td_l(&l.token),
                td_num(l.reported as f64, &format!("{} / {}", l.reported, l.pairs)),
                td_num(l.started_ms as f64, &ago(now, l.started_ms)),
                td_num(
                    l.deadline_ms as f64,
                    &format!("in {} s", l.deadline_ms.saturating_sub(now) / 1000)
                ),
            )
        })
        .collect();
    format!(
        "<h2>Active leases</h2>{}",
        table(
            "leases",
            &[
                "lease",
                "machine",
                "token",
                "reported / pairs",
                "issued",
                "deadline"
            ],
            &rows
        )
    )
}

/// `GET /runs/{id}`.
pub(super) async fn run(
    axum::extract::State(s): S,
    Path(raw): Path<String>,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let id = api::run_id(&raw)?;
    let d = api::detail(&s, id).await?;
    let live = run_live(&s, id, &d).await?;
    let name = d.summary.as_ref().map_or("", |s| s.name.as_str());
    let title = format!("Run {id}: {name}");
    let before = format!(
        "<h1>{t}</h1><div class=\"admin\"><input id=\"admin-token\" type=\"password\" autocomplete=\"off\" placeholder=\"admin token (for actions)\" aria-label=\"admin token\">\
<button id=\"pause\" data-action=\"pause\" data-run=\"{id}\">pause</button>\
<button id=\"resume\" data-action=\"resume\" data-run=\"{id}\">resume</button>\
<button id=\"stop\" data-action=\"stop\" data-run=\"{id}\">stop</button>\
<input id=\"add-games\" type=\"number\" min=\"2\" step=\"2\" placeholder=\"games\" aria-label=\"new game budget\">\
<button id=\"extend\" data-action=\"extend\" data-run=\"{id}\">set games</button>\
<a href=\"/runs/{id}/pgn\" id=\"pgn\">PGN</a> <a href=\"/api/runs/{id}\">JSON</a></div><p id=\"action-status\"></p>",
        t = escape(&title),
    );
    Ok(respond(&q, &title, "", &before, live))
}

async fn run_live(s: &WebState, id: u64, d: &pb::RunDetail) -> Result<String, ApiError> {
    let points = s.reader.history(id).await?;
    let rate = api::rates(s, std::slice::from_ref(d))
        .await?
        .first()
        .copied()
        .unwrap_or(0.0);
    let leases = s.core.call(move |c| Ok(c.run_leases(id))).await?;
    let h = history_of(&points, d);
    let mut live = figures_block(d, rate);
    let _ = write!(
        live,
        "<p>Variants: {}</p>",
        escape(&api::variants(&d.config_toml).join(", "))
    );
    let is_study = d.summary.as_ref().is_some_and(|s| s.kind == "study");
    // A study's question is what the rules do: its tables lead, and the Elo chart and
    // pentanomial of an engine playing itself are left out (as in report.html).
    let charts: Vec<String> = if is_study {
        Vec::new()
    } else {
        [
            charts::elo(d, &h),
            charts::llr_chart(d, &h),
            charts::spsa(d, &h),
        ]
        .into_iter()
        .flatten()
        .collect()
    };
    if is_study {
        live.push_str(&study_block(d));
        let study_charts: Vec<String> = charts::study(d).into_iter().collect();
        if !study_charts.is_empty() {
            live.push_str("<h2>Charts</h2>");
            for c in study_charts {
                live.push_str(&c);
            }
        }
    }
    if !charts.is_empty() {
        live.push_str("<h2>Charts</h2>");
        for c in charts {
            live.push_str(&c);
        }
    }
    if !is_study {
        live.push_str("<h2>Pentanomial of first</h2>");
        live.push_str(&penta_table(d));
        live.push_str(&row_scores_block(d));
    }
    live.push_str(&spsa_block(d));
    if !is_study {
        live.push_str(&study_block(d));
    }
    live.push_str(&workers_block(d, id));
    live.push_str(&leases_block(&leases, now_ms()));
    let _ = write!(
        live,
        "<h2>Configuration</h2><pre id=\"config\">{}</pre>",
        escape(&d.config_toml)
    );
    Ok(live)
}

/// `GET /workers`.
pub(super) async fn workers(
    axum::extract::State(s): S,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let now = now_ms();
    let views = s.core.call(move |c| Ok(c.worker_views(now))).await?;
    let rows: Vec<String> = views
        .iter()
        .map(|w| {
            let flag = if w.flagged_runs.is_empty() {
                td_l("")
            } else {
                let runs: Vec<String> = w.flagged_runs.iter().map(|r| format!("run {r}")).collect();
                format!(
                    "<td class=\"l flag\">residual flagged: {}</td>",
                    escape(&runs.join(", "))
                )
            };
            let seen = w
                .last_seen_ms
                .map_or_else(|| "not since start".to_string(), |t| ago(now, t));
            format!(
                "<tr>{}{}{}{}{}{}{}{}{}{}{flag}</tr>",
                td_l(&w.token),
                td_l(&w.label),
                td_num(f64::from(w.cores), &w.cores.to_string()),
                td_l(&w.version),
                td_l(&w.engines.join(", ")),
                td_l(&if w.variants.is_empty() {
                    "all".to_string()
                } else {
                    w.variants.join(", ")
                }),
                td_num(w.games_per_minute, &format!("{:.1}", w.games_per_minute)),
                td_num(w.last_seen_ms.unwrap_or(0) as f64, &seen),
                td_num(f64::from(w.leases), &w.leases.to_string()),
                td_num(w.slots as f64, &w.slots.to_string()),
            )
        })
        .collect();
    let mut live = table_with_class(
        "workers",
        "filterable",
        &[
            "token",
            "machine",
            "cores",
            "version",
            "engines",
            "variants",
            "games/min",
            "last seen",
            "leases",
            "slots",
            "residual",
        ],
        &rows,
    );
    if views.is_empty() {
        live.push_str("<p>No worker has registered since the coordinator started.</p>");
    }
    let before = "<h1>Workers</h1><input id=\"filter\" type=\"search\" placeholder=\"filter by token, machine, engine\" aria-label=\"filter workers\">";
    Ok(respond(&q, "Workers", "Workers", before, live))
}
