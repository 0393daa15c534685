//! A rule-set study as tables, in the order its reader asks: did castling get easier (who
//! castled, how soon, who lost the right without castling, whose king reached a corner), then
//! the balance (White's score, draws), then the score by castling choice, labelled as the
//! association it is. Shared by `report.html` and the dashboard's run page, which render the
//! same tables in their own markup.
//!
//! Every rate carries its 95% interval and, where the study has a baseline, its difference
//! from the baseline with interval and p-value: a figure without its uncertainty invites the
//! reader to see a finding in noise.

use stats::study::{Difference, Rate, RulesetFigures, Side, Study, Summary};

/// One table of a study.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyTable {
    /// Heading.
    pub title: String,
    /// What the table shows and how to read it.
    pub note: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// The study's tables, castling first.
pub fn tables(study: &Study) -> Vec<StudyTable> {
    let mut out = Vec::new();
    out.extend(castling_per_side(study));
    out.extend(castling_by_kind(study));
    out.extend(king_corner(study));
    out.push(balance(study));
    out.extend(by_choice(study));
    out
}

/// Everything a run's page shows of its study, in order: [`tables`], then the sequential
/// decisions when the run has `[study.decide]`, then [`sizing`] towards its stopping width (or
/// ±[`DEFAULT_TARGET_HALF_WIDTH`]), timed at `pace` when known.
pub fn run_tables(
    study: &Study,
    config: Option<&crate::config::RunConfig>,
    pace: Option<Pace>,
) -> Vec<StudyTable> {
    let section = config.and_then(|c| c.study.as_ref());
    let mut out = tables(study);
    out.extend(decisions_for(study, config));
    let target = section
        .and_then(|s| s.stop_half_width)
        .unwrap_or(DEFAULT_TARGET_HALF_WIDTH);
    out.extend(sizing(study, target, pace));
    out
}

/// Per rule-set and side: castled at all and when, lost the right without castling, kept it
/// unused; the two rates against the baseline.
fn castling_per_side(study: &Study) -> Option<StudyTable> {
    let has_baseline = baseline_of(study).is_some();
    let mut rows = Vec::new();
    for r in &study.rulesets {
        let cmp = comparison(study, &r.ruleset);
        for s in &r.sides {
            let vs = |pick: fn(&stats::study::SideComparison) -> Difference| {
                cmp.and_then(|c| c.sides.iter().find(|x| x.side == s.side))
                    .map_or_else(|| "baseline".to_string(), |x| difference(&pick(x)))
            };
            let mut row = vec![
                r.ruleset.clone(),
                side_name(s.side).into(),
                s.games.to_string(),
                rate(&s.castled),
            ];
            if has_baseline {
                row.push(vs(|x| x.castled));
            }
            row.push(s.castled_move.as_ref().map_or_else(|| "–".into(), moves));
            row.push(rate(&s.rights_lost));
            if has_baseline {
                row.push(vs(|x| x.rights_lost));
            }
            row.push(
                s.rights_lost_by_cause
                    .iter()
                    .map(|c| format!("{} {:.1}%", cause_name(c.cause), 100.0 * c.games.rate))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            row.push(
                s.rights_lost_move
                    .as_ref()
                    .map_or_else(|| "–".into(), moves),
            );
            row.push(rate(&s.never_castled_kept_rights));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["rule-set", "side", "games", "castled"];
    if has_baseline {
        headers.push("vs baseline");
    }
    headers.extend(["castled on move", "lost the right uncastled"]);
    if has_baseline {
        headers.push("vs baseline");
    }
    headers.extend(["how", "lost on move", "never castled, kept the right"]);
    Some(StudyTable {
        title: "Did each side castle?".into(),
        note: "Share of games in which the side castled at all (any kind), and in which it \
               lost its last castling right without castling (its king moved, the rook moved, \
               or the rook was captured): 95% Wilson intervals; moves are median (quartiles); \
               'vs baseline' is the difference in percentage points with its 95% interval and \
               two-sided p."
            .into(),
        headers: headers.into_iter().map(String::from).collect(),
        rows,
    })
}

fn cause_name(kind: stats::study::MilestoneKind) -> &'static str {
    use stats::study::MilestoneKind as K;
    match kind {
        K::RightsLostKingMoved => "king moved",
        K::RightsLostRookMoved => "rook moved",
        K::RightsLostRookCaptured => "rook captured",
        K::KingCorner => "king in corner",
    }
}

/// How often and how soon a king reaches a corner of its back rank (the Secutor inventor's
/// claim about extended castling); shown when any king did.
fn king_corner(study: &Study) -> Option<StudyTable> {
    let any = study
        .rulesets
        .iter()
        .flat_map(|r| &r.sides)
        .any(|s| s.king_corner.count > 0);
    if !any {
        return None;
    }
    let rows = study
        .rulesets
        .iter()
        .flat_map(|r| {
            r.sides.iter().map(move |s| {
                vec![
                    r.ruleset.clone(),
                    side_name(s.side).into(),
                    rate(&s.king_corner),
                    s.king_corner_move
                        .as_ref()
                        .map_or_else(|| "–".into(), moves),
                ]
            })
        })
        .collect();
    Some(StudyTable {
        title: "King to a corner".into(),
        note: "Share of games in which the side's king reached a corner square of its own \
               back rank (by castling or otherwise), and the move it first did: median \
               (quartiles)."
            .into(),
        headers: ["rule-set", "side", "games with it", "first on move"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// The side's score by the castling it chose: an association, not an effect.
fn by_choice(study: &Study) -> Option<StudyTable> {
    let rows: Vec<Vec<String>> = study
        .rulesets
        .iter()
        .flat_map(|r| {
            r.sides.iter().flat_map(move |s| {
                s.by_choice.iter().map(move |c| {
                    vec![
                        r.ruleset.clone(),
                        side_name(s.side).into(),
                        c.kind.as_deref().unwrap_or("did not castle").to_string(),
                        c.games.to_string(),
                        format!("{} / {} / {}", c.wins, c.draws, c.losses),
                        format!(
                            "{:.1}% [{:.1}, {:.1}]",
                            100.0 * c.score,
                            100.0 * c.score_ci[0],
                            100.0 * c.score_ci[1]
                        ),
                    ]
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(StudyTable {
        title: "Score by castling choice (an association, not an effect)".into(),
        note: "The side's mean score in the games where it made that choice, with a 95% \
               interval. The engine chooses to castle in positions it likes and not in others, \
               so a higher score after a kind of castling does not show that castling so \
               causes it."
            .into(),
        headers: [
            "rule-set",
            "side",
            "choice",
            "games",
            "W / D / L",
            "side's score",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::White => "White",
        Side::Black => "Black",
    }
}

/// `12.3% [10.1, 14.6]`.
pub fn rate(r: &Rate) -> String {
    format!(
        "{:.1}% [{:.1}, {:.1}]",
        100.0 * r.rate,
        100.0 * r.ci[0],
        100.0 * r.ci[1]
    )
}

/// `+1.2 pts [-0.4, +2.8], p 0.14` for a difference of rates or scores.
pub fn difference(d: &Difference) -> String {
    format!(
        "{:+.1} pts [{:+.1}, {:+.1}], p {}",
        100.0 * d.estimate,
        100.0 * d.ci[0],
        100.0 * d.ci[1],
        p_value(d.p_value)
    )
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// `14 (11–18)`: median and quartiles of move numbers.
pub fn moves(s: &Summary) -> String {
    format!("{:.0} ({:.0}–{:.0})", s.median, s.q1, s.q3)
}

fn baseline_of(study: &Study) -> Option<&str> {
    study.comparisons.first().map(|c| c.baseline.as_str())
}

fn comparison<'a>(study: &'a Study, ruleset: &str) -> Option<&'a stats::study::Comparison> {
    study.comparisons.iter().find(|c| c.ruleset == ruleset)
}

/// Per rule-set, side and kind: how often it was played and when.
fn castling_by_kind(study: &Study) -> Option<StudyTable> {
    let rows: Vec<Vec<String>> = study
        .rulesets
        .iter()
        .flat_map(|r| {
            r.castling.iter().map(move |c| {
                vec![
                    r.ruleset.clone(),
                    side_name(c.side).into(),
                    c.kind.clone(),
                    rate(&c.games),
                    moves(&c.move_number),
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(StudyTable {
        title: "Castling by kind".into(),
        note: "Share of games in which the side played that castling kind (95% Wilson \
               interval), and the move number when it did: median (quartiles)."
            .into(),
        headers: ["rule-set", "side", "kind", "games with it", "on move"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// White's score and the draw rate per rule-set, against the baseline.
fn balance(study: &Study) -> StudyTable {
    let has_baseline = baseline_of(study).is_some();
    let rows = study
        .rulesets
        .iter()
        .map(|r| balance_row(study, r, has_baseline))
        .collect();
    let mut headers = vec!["rule-set", "games", "W / D / L", "White's score (95%)"];
    if has_baseline {
        headers.push("vs baseline");
    }
    headers.push("draw rate (95%)");
    if has_baseline {
        headers.push("vs baseline");
    }
    headers.push("plies");
    StudyTable {
        title: "Balance".into(),
        note: match baseline_of(study) {
            Some(b) => format!(
                "White's mean score per game and the draw rate, each against the baseline \
                 rule-set {b:?}: difference in percentage points, 95% interval, two-sided p."
            ),
            None => "White's mean score per game and the draw rate.".into(),
        },
        headers: headers.into_iter().map(String::from).collect(),
        rows,
    }
}

fn balance_row(study: &Study, r: &RulesetFigures, has_baseline: bool) -> Vec<String> {
    let cmp = comparison(study, &r.ruleset);
    let vs = |d: Option<&Difference>| d.map_or_else(|| "baseline".to_string(), difference);
    let mut row = vec![
        r.ruleset.clone(),
        r.games.to_string(),
        format!("{} / {} / {}", r.white_wins, r.draws, r.black_wins),
        format!(
            "{:.1}% [{:.1}, {:.1}]",
            100.0 * r.white_score,
            100.0 * r.white_score_ci[0],
            100.0 * r.white_score_ci[1]
        ),
    ];
    if has_baseline {
        row.push(vs(cmp.map(|c| &c.white_score)));
    }
    row.push(rate(&r.draw_rate));
    if has_baseline {
        row.push(vs(cmp.map(|c| &c.draw_rate)));
    }
    row.push(moves(&r.plies));
    row
}

/// Openings in the built-in book of `rules`, parsed once per process: a study's page asks on
/// every render, and the books hold thousands of positions each.
fn builtin_openings(rules: engine::Rules) -> Option<u64> {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};
    static COUNTS: OnceLock<Mutex<BTreeMap<String, Option<u64>>>> = OnceLock::new();
    let counts = COUNTS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut counts = counts
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *counts.entry(rules.to_string()).or_insert_with(|| {
        worker::book::Book::builtin(rules)
            .ok()
            .map(|b| b.positions.len() as u64)
    })
}

/// A warning when a study has played more games per rule-set than its built-in books have
/// openings. One engine playing itself at a fixed node count plays the same game from the same
/// position every time, so games past the book's size repeat earlier ones: the figures then
/// rest on fewer distinct games than they count, and their intervals are too narrow.
pub fn repeated_openings(config: &crate::config::RunConfig, study: &Study) -> Option<String> {
    let mut short = Vec::new();
    for v in &config.variants {
        if !v.book.is_empty() || !config.book.is_empty() {
            continue;
        }
        let Some(rules) = crate::facts::rules_of(&v.variant, &v.ruleset) else {
            continue;
        };
        let Some(openings) = builtin_openings(rules) else {
            continue;
        };
        let row = config.row_of(v);
        let games = study
            .rulesets
            .iter()
            .find(|r| r.ruleset == row)
            .map_or(0, |r| r.games);
        if games > openings {
            short.push(format!("{row} ({games} games, {openings} openings)"));
        }
    }
    (!short.is_empty()).then(|| {
        format!(
            "Warning: more games than openings under {}. One engine playing itself replays \
             the same game from the same opening, so these figures rest on at most as many \
             distinct games per rule-set as its book has openings, and their intervals are \
             too narrow. Give the study a larger book (`worker book`) or fewer games.",
            short.join(", ")
        )
    })
}

/// The interval half-width, in percentage points, that sizing aims at when the study sets
/// none (`[study] stop_half_width`).
pub const DEFAULT_TARGET_HALF_WIDTH: f64 = 1.0;

/// How fast a machine played a run's games: the basis of time projections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Games per core per minute, measured.
    pub games_per_core_minute: f64,
    /// Cores that played them.
    pub cores: usize,
}

/// A fleet size the projection is also given for: what a cloud fleet would take.
pub const FLEET_CORES: usize = 100;

/// How many games each comparison needs for an interval of ±`target` percentage points, and
/// how long the missing ones take at `pace` (on the cores measured, and on a
/// [`FLEET_CORES`]-core fleet).
///
/// Large-sample intervals shrink as 1/sqrt(games), so a comparison whose interval is ±h
/// with n games per rule-set needs about n·(h/target)² games per rule-set.
pub fn sizing(study: &Study, target: f64, pace: Option<Pace>) -> Option<StudyTable> {
    let games_of = |ruleset: &str| {
        study
            .rulesets
            .iter()
            .find(|r| r.ruleset == ruleset)
            .map_or(0, |r| r.games)
    };
    let mut rows = Vec::new();
    let mut most_more = 0u64;
    for c in &study.comparisons {
        let n = games_of(&c.ruleset).min(games_of(&c.baseline));
        if n == 0 {
            continue;
        }
        for (measure, pick) in measures() {
            let Some(d) = pick(c) else { continue };
            let half = 100.0 * (d.ci[1] - d.ci[0]) / 2.0;
            let needed = (n as f64 * (half / target).powi(2)).ceil() as u64;
            let more = needed.saturating_sub(n);
            most_more = most_more.max(more);
            rows.push(vec![
                format!("{} vs {}", c.ruleset, c.baseline),
                measure.to_string(),
                format!("±{half:.2} pts with {n}"),
                needed.to_string(),
                more.to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let total_more = most_more * study.rulesets.len() as u64;
    let time = |cores: usize, p: &Pace| {
        let minutes = total_more as f64 / (p.games_per_core_minute * cores as f64);
        hours(minutes)
    };
    let projection = match pace {
        Some(p) => format!(
            " At this run's pace ({:.1} games per core-minute), those {total_more} more games \
             take {} on the {} cores measured, {} on {FLEET_CORES} cores.",
            p.games_per_core_minute,
            time(p.cores, &p),
            p.cores,
            time(FLEET_CORES, &p)
        ),
        None => String::new(),
    };
    Some(StudyTable {
        title: format!("Sizing: games for intervals of ±{target} points"),
        note: format!(
            "Games per rule-set each comparison needs for a 95% interval of ±{target} \
             percentage points (intervals shrink as 1/sqrt(games)). Every comparison there \
             needs {most_more} more games per rule-set, {total_more} in all.{projection}"
        ),
        headers: [
            "comparison",
            "figure",
            "now",
            "games per rule-set needed",
            "more per rule-set",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

/// [`decisions`] under the run's own `[study.decide]`, when it has one.
pub fn decisions_for(
    study: &Study,
    config: Option<&crate::config::RunConfig>,
) -> Option<StudyTable> {
    let rule = config?.study.as_ref()?.decide.as_ref()?.rule().ok()?;
    decisions(study, &rule)
}

/// The sequential test of every comparison (`[study.decide]`): what each says now, with its
/// two log-likelihood ratios against their bounds, so a reader sees how far an open test is
/// from a decision.
pub fn decisions(study: &Study, rule: &stats::sequential::DecisionRule) -> Option<StudyTable> {
    use stats::sequential::Decision;
    let tested = crate::study_stop::tests(study, rule);
    if tested.is_empty() {
        return None;
    }
    let effect = rule.effect * 100.0;
    let baseline = baseline_of(study).unwrap_or("the baseline");
    let rows: Vec<Vec<String>> = tested
        .iter()
        .map(|t| {
            let j = &t.judgement;
            let decision = match j.decision {
                Decision::Higher => format!("higher than {baseline}"),
                Decision::Lower => format!("lower than {baseline}"),
                Decision::NoDifference => format!("within ±{effect} pts of {baseline}"),
                Decision::Open => "open".to_string(),
            };
            vec![
                t.ruleset.clone(),
                t.measure.to_string(),
                difference(&t.difference),
                format!("{:.2}", j.llr_higher),
                format!("{:.2}", j.llr_lower),
                decision,
            ]
        })
        .collect();
    let (lower, upper) = rule.bounds();
    let open = tested
        .iter()
        .filter(|t| !t.judgement.decision.is_decided())
        .count();
    Some(StudyTable {
        title: "Sequential decisions".into(),
        note: format!(
            "Each comparison has its own sequential test (α {}, β {}, smallest difference \
             worth finding {effect} points): a difference is declared when a log-likelihood \
             ratio reaches {upper:.2}, \"within ±{effect}\" when both are at or below \
             {lower:.2}. The study may stop once every test is decided; {open} of {} are \
             open. The error rates hold per test, so among {} tests about α·{} false \
             findings are to be expected where nothing differs; estimates at a decision stop \
             lean away from zero.",
            rule.alpha,
            rule.beta,
            tested.len(),
            tested.len(),
            tested.len()
        ),
        headers: [
            "rule-set",
            "figure",
            "difference",
            "LLR higher",
            "LLR lower",
            "decision",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

/// `3 h 20 min`, `45 min`, `12 days`.
fn hours(minutes: f64) -> String {
    if !minutes.is_finite() {
        return "an unknown time".into();
    }
    let m = minutes.round() as u64;
    match m {
        0..=59 => format!("{m} min"),
        60..=2879 => format!("{} h {} min", m / 60, m % 60),
        _ => format!("{:.1} days", minutes / 1440.0),
    }
}

/// Several studies side by side: [`across`] (the comparisons of the studies that have them)
/// and [`across_baseline`] (the baseline as every study played it).
pub fn side_by_side(studies: &[(String, Study)]) -> Vec<StudyTable> {
    let compared: Vec<(String, Study)> = studies
        .iter()
        .filter(|(_, s)| !s.comparisons.is_empty())
        .cloned()
        .collect();
    across(&compared)
        .into_iter()
        .chain(across_baseline(studies))
        .collect()
}

/// A measure's value on one rule-set's figures (the names of [`measures`]).
fn value_of(r: &RulesetFigures, measure: &str) -> Option<String> {
    let side = |s: Side| r.sides.iter().find(|x| x.side == s);
    match measure {
        "White castled" => side(Side::White).map(|x| rate(&x.castled)),
        "Black castled" => side(Side::Black).map(|x| rate(&x.castled)),
        "White lost the right uncastled" => side(Side::White).map(|x| rate(&x.rights_lost)),
        "Black lost the right uncastled" => side(Side::Black).map(|x| rate(&x.rights_lost)),
        "White's score" => Some(format!(
            "{:.1}% [{:.1}, {:.1}]",
            100.0 * r.white_score,
            100.0 * r.white_score_ci[0],
            100.0 * r.white_score_ci[1]
        )),
        "draw rate" => Some(rate(&r.draw_rate)),
        _ => None,
    }
}

/// The baseline rule-set as each study played it, against the first study's: the check that
/// the baseline itself is not one engine's (or one strength's) peculiarity. Studies by other
/// engines that play only the baseline rule-set (Stockfish and Fairy-Stockfish play Latte
/// `normal` as chess from its set-up position) count here, though they have no comparison of
/// their own.
///
/// The baseline is the first study's; studies without that rule-set are left out. None with
/// fewer than two studies holding it.
pub fn across_baseline(studies: &[(String, Study)]) -> Option<StudyTable> {
    let reference_study = studies.iter().find(|(_, s)| baseline_of(s).is_some())?;
    let baseline = baseline_of(&reference_study.1)?.to_string();
    let holding: Vec<(&String, &RulesetFigures)> = studies
        .iter()
        .filter_map(|(label, s)| Some((label, s.rulesets.iter().find(|r| r.ruleset == baseline)?)))
        .collect();
    let (reference_label, reference) = *holding.first()?;
    if holding.len() < 2 {
        return None;
    }
    let others = &holding[1..];
    let compared: Vec<stats::study::Comparison> = others
        .iter()
        .map(|(_, r)| stats::study::compare_pair(r, reference))
        .collect();
    let mut rows = Vec::new();
    for (measure, pick) in measures() {
        let Some(value) = value_of(reference, measure) else {
            continue;
        };
        let diffs: Vec<Option<Difference>> = compared.iter().map(pick).collect();
        if diffs.iter().any(Option::is_none) {
            continue;
        }
        let diffs: Vec<Difference> = diffs.into_iter().flatten().collect();
        let mut row = vec![measure.to_string(), value];
        for ((_, r), d) in others.iter().zip(&diffs) {
            row.push(format!(
                "{}; {}",
                value_of(r, measure).unwrap_or_default(),
                difference(d)
            ));
        }
        let differing: Vec<&str> = others
            .iter()
            .zip(&diffs)
            .filter(|(_, d)| d.p_value < ALPHA)
            .map(|((label, _), _)| label.as_str())
            .collect();
        row.push(if differing.is_empty() {
            "no difference found".to_string()
        } else {
            format!("differs in {}", differing.join(", "))
        });
        rows.push(row);
    }
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["figure".to_string(), reference_label.clone()];
    headers.extend(
        others
            .iter()
            .map(|(l, _)| format!("{l} (vs {reference_label})")),
    );
    headers.push("verdict".into());
    Some(StudyTable {
        title: format!("The baseline ({baseline}) in every study"),
        note: format!(
            "The baseline rule-set as each study played it (its rate, then the difference \
             from {reference_label}, percentage points, 95% interval, two-sided p). A baseline \
             that another engine or strength plays alike is not this engine's peculiarity; \
             where it differs (p < {ALPHA}), the rule-set comparisons rest on how this \
             engine plays, and should be read with that in mind."
        ),
        headers,
        rows,
    })
}

/// The significance level at which [`across`] calls a difference found.
pub const ALPHA: f64 = 0.05;

/// Each difference from the baseline, side by side across several studies of the same
/// rule-sets (played at different strengths, or by different engines), with a verdict: a
/// finding worth reporting is one that holds in every study, with the same sign.
///
/// `studies` are (label, study) pairs; only comparisons present in every study are shown.
/// None with fewer than two studies or no comparison in common.
pub fn across(studies: &[(String, Study)]) -> Option<StudyTable> {
    if studies.len() < 2 {
        return None;
    }
    let first = &studies[0].1;
    let mut rows = Vec::new();
    for c in &first.comparisons {
        for (measure, pick) in measures() {
            let found: Vec<Option<Difference>> = studies
                .iter()
                .map(|(_, s)| comparison(s, &c.ruleset).and_then(pick))
                .collect();
            if found.iter().any(Option::is_none) {
                continue;
            }
            let diffs: Vec<Difference> = found.into_iter().flatten().collect();
            let mut row = vec![
                format!("{} vs {}", c.ruleset, c.baseline),
                measure.to_string(),
            ];
            row.extend(diffs.iter().map(difference));
            row.push(verdict(&diffs).to_string());
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["comparison".to_string(), "figure".to_string()];
    headers.extend(studies.iter().map(|(label, _)| label.clone()));
    headers.push("verdict".into());
    Some(StudyTable {
        title: "Across strengths".into(),
        note: format!(
            "Each difference from the baseline in every study of the plan (percentage points, \
             95% interval, two-sided p). 'Holds at every strength': p < {ALPHA} in each, with \
             the same sign; 'no difference found': p >= {ALPHA} in each; otherwise the \
             studies disagree and the finding should not be reported without more games."
        ),
        headers,
        rows,
    })
}

/// Picks one difference out of a comparison (None when the comparison lacks it).
pub type Pick = fn(&stats::study::Comparison) -> Option<Difference>;

/// The differences a study reports against its baseline, castling first: what [`across`]
/// lines up, [`sizing`] sizes and the width stopping rule waits for.
pub fn measures() -> [(&'static str, Pick); 6] {
    fn side(c: &stats::study::Comparison, s: Side) -> Option<&stats::study::SideComparison> {
        c.sides.iter().find(|x| x.side == s)
    }
    [
        ("White castled", |c| side(c, Side::White).map(|x| x.castled)),
        ("Black castled", |c| side(c, Side::Black).map(|x| x.castled)),
        ("White lost the right uncastled", |c| {
            side(c, Side::White).map(|x| x.rights_lost)
        }),
        ("Black lost the right uncastled", |c| {
            side(c, Side::Black).map(|x| x.rights_lost)
        }),
        ("White's score", |c| Some(c.white_score)),
        ("draw rate", |c| Some(c.draw_rate)),
    ]
}

/// Whether a difference holds in every study.
fn verdict(diffs: &[Difference]) -> &'static str {
    let found = |d: &Difference| d.p_value < ALPHA;
    if diffs.iter().all(found) {
        let up = diffs.iter().filter(|d| d.estimate > 0.0).count();
        if up == diffs.len() || up == 0 {
            "holds at every strength"
        } else {
            "found at every strength, with opposite signs"
        }
    } else if diffs.iter().any(found) {
        "not at every strength"
    } else {
        "no difference found"
    }
}

/// The tables as plain text, for a terminal: one aligned block per table.
pub fn text(tables: &[StudyTable]) -> String {
    let mut out = String::new();
    for t in tables {
        out.push_str(&format!("{}\n", t.title));
        let mut widths: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
        for r in &t.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("  {}\n", padded.join("  ").trim_end())
        };
        out.push_str(&line(&t.headers));
        for r in &t.rows {
            out.push_str(&line(r));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::study::{study, CastlingEvent, GameRecord, Outcome};

    fn game(ruleset: &str, result: Outcome, castle: Option<(&str, u32)>) -> GameRecord {
        GameRecord {
            ruleset: ruleset.into(),
            result,
            plies: 80,
            termination: "checkmate".into(),
            castlings: castle
                .map(|(kind, move_number)| CastlingEvent {
                    side: Side::White,
                    kind: kind.into(),
                    move_number,
                })
                .into_iter()
                .collect(),
            milestones: Vec::new(),
        }
    }

    fn sample() -> Study {
        let mut games = Vec::new();
        for i in 0..40u32 {
            let result = [Outcome::WhiteWin, Outcome::Draw, Outcome::BlackWin][(i % 3) as usize];
            games.push(game(
                "normal",
                result,
                (i % 2 == 0).then_some(("king", 8 + i % 5)),
            ));
            games.push(game(
                "luft",
                result,
                (i % 4 == 0).then_some(("luft-king", 6)),
            ));
        }
        study(&games, Some("normal")).unwrap()
    }

    #[test]
    fn the_baseline_is_checked_in_every_study_that_plays_it() {
        // Another engine that plays only `normal`: it never castles, where this engine's White
        // castles in half the games; a third study plays `normal` as the first does.
        let other: Vec<GameRecord> = (0..200u32)
            .map(|i| {
                let result =
                    [Outcome::WhiteWin, Outcome::Draw, Outcome::BlackWin][(i % 3) as usize];
                game("normal", result, None)
            })
            .collect();
        let other = study(&other, Some("normal")).unwrap();
        let studies = vec![
            ("ours".to_string(), sample()),
            ("other engine".to_string(), other),
            ("ours again".to_string(), sample()),
        ];
        let t = across_baseline(&studies).expect("two studies hold normal");
        assert_eq!(t.title, "The baseline (normal) in every study");
        assert_eq!(t.headers.len(), 5, "{:?}", t.headers);
        let row = |m: &str| t.rows.iter().find(|r| r[0] == m).expect(m).clone();
        assert_eq!(row("White castled")[4], "differs in other engine");
        assert_eq!(row("White's score")[4], "no difference found");
        // The strengths table takes only the studies with comparisons; both tables together.
        let all = side_by_side(&studies);
        let titles: Vec<&str> = all.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Across strengths", "The baseline (normal) in every study"]
        );
        assert_eq!(
            all[0].headers.len(),
            5,
            "ours and ours again: {:?}",
            all[0].headers
        );
        // One study alone has nothing to line up.
        assert!(side_by_side(&studies[..1]).is_empty());
    }

    #[test]
    fn a_run_with_decide_shows_its_tests_after_the_figures() {
        let base = "name = \"s\"\nkind = \"study\"\ngames = 80\n[limits]\nnodes = 10\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"luft\"\n\
                    [first]\nengine = \"builtin\"\n[study]\nbaseline = \"normal\"\n";
        let plain = crate::config::RunConfig::parse(base).unwrap();
        let with = crate::config::RunConfig::parse(&format!(
            "{base}[study.decide]\nalpha = 0.05\neffect = 5\n"
        ))
        .unwrap();
        let titles = |c: &crate::config::RunConfig| -> Vec<String> {
            run_tables(&sample(), Some(c), None)
                .into_iter()
                .map(|t| t.title)
                .collect()
        };
        assert!(!titles(&plain).iter().any(|t| t == "Sequential decisions"));
        let t = titles(&with);
        let at = t
            .iter()
            .position(|t| t == "Sequential decisions")
            .expect("shown");
        assert!(t[..at].iter().any(|t| t == "Balance"), "{t:?}");
        let table = run_tables(&sample(), Some(&with), None).remove(at);
        // luft against normal: the six measures, each with both LLRs and a decision; White
        // castled half as often under luft (10 of 40 against 20), but 40 games cannot decide
        // a margin of 5 points for every measure.
        assert_eq!(table.rows.len(), 6, "{table:?}");
        assert!(table.rows.iter().any(|r| r[5] == "open"), "{table:?}");
        assert!(table.note.contains("α 0.05"), "{}", table.note);
    }

    #[test]
    fn castling_comes_before_balance_and_every_rate_has_its_interval() {
        let t = tables(&sample());
        let titles: Vec<&str> = t.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Did each side castle?",
                "Castling by kind",
                "Balance",
                "Score by castling choice (an association, not an effect)"
            ]
        );
        let sides = &t[0];
        // Two rule-sets, two sides each; luft's White castled in 10 of 40 games, against 20.
        assert_eq!(sides.rows.len(), 4);
        let luft_white = sides
            .rows
            .iter()
            .find(|r| r[0] == "luft" && r[1] == "White")
            .unwrap();
        assert!(luft_white[3].starts_with("25.0% ["), "{luft_white:?}");
        assert!(luft_white[4].starts_with("-25.0 pts"), "{luft_white:?}");
        let kinds = &t[1];
        assert!(kinds.rows.iter().all(|r| r[3].contains('[')), "{kinds:?}");
        let balance = &t[2];
        let luft = balance.rows.iter().find(|r| r[0] == "luft").unwrap();
        assert!(luft[4].contains(", p "), "{luft:?}");
        let normal = balance.rows.iter().find(|r| r[0] == "normal").unwrap();
        assert_eq!(normal[4], "baseline");
    }

    #[test]
    fn across_strengths_a_finding_must_hold_in_every_study() {
        let d = |estimate: f64, p_value: f64| Difference {
            estimate,
            ci: [estimate - 0.01, estimate + 0.01],
            p_value,
            se: 0.005,
        };
        assert_eq!(
            verdict(&[d(-0.1, 0.001), d(-0.08, 0.01)]),
            "holds at every strength"
        );
        assert_eq!(
            verdict(&[d(-0.1, 0.001), d(-0.01, 0.6)]),
            "not at every strength"
        );
        assert_eq!(
            verdict(&[d(0.01, 0.5), d(-0.01, 0.6)]),
            "no difference found"
        );
        assert_eq!(
            verdict(&[d(0.1, 0.001), d(-0.1, 0.001)]),
            "found at every strength, with opposite signs"
        );
        let a = sample();
        let t = across(&[("weak".into(), a.clone()), ("strong".into(), a.clone())]).unwrap();
        assert_eq!(t.headers.len(), 5);
        // luft against normal: six figures (castled and rights lost per side, score, draws).
        assert_eq!(t.rows.len(), 6);
        assert!(across(&[("only".into(), a)]).is_none());
    }

    #[test]
    fn text_tables_align_their_columns() {
        let out = text(&tables(&sample()));
        assert!(out.contains("Did each side castle?"));
        let block: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("Balance"))
            .skip(1)
            .take(3)
            .collect();
        let at = |l: &str| l.find("games").or_else(|| l.find(char::is_numeric));
        assert!(at(block[0]).is_some(), "{out}");
    }

    #[test]
    fn sizing_scales_games_with_the_square_of_the_width_ratio() {
        let st = sample();
        let pace = Pace {
            games_per_core_minute: 10.0,
            cores: 2,
        };
        let t = sizing(&st, 1.0, Some(pace)).unwrap();
        let wide = sizing(&st, 2.0, None).unwrap();
        // Half the precision: a quarter of the games (rounding up aside).
        for (a, b) in t.rows.iter().zip(&wide.rows) {
            let (na, nb): (f64, f64) = (a[3].parse().unwrap(), b[3].parse().unwrap());
            assert!((na / nb - 4.0).abs() < 0.01, "{a:?} {b:?}");
        }
        assert!(t.note.contains("on the 2 cores measured"), "{}", t.note);
        assert!(t.note.contains("on 100 cores"), "{}", t.note);
        assert!(!wide.note.contains("pace"), "{}", wide.note);
        assert_eq!(hours(45.0), "45 min");
        assert_eq!(hours(200.0), "3 h 20 min");
        assert_eq!(hours(14_400.0), "10.0 days");
    }

    #[test]
    fn more_games_than_book_openings_is_flagged() {
        let config = crate::config::RunConfig::parse(
            "name = \"s\"\nkind = \"study\"\ngames = 80\n[limits]\nnodes = 10\n\
             [[variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
             [[variants]]\nvariant = \"latte\"\nruleset = \"luft\"\n\
             [first]\nengine = \"builtin\"\n[study]\nbaseline = \"normal\"\n",
        )
        .unwrap();
        let mut st = sample();
        assert_eq!(repeated_openings(&config, &st), None);
        let openings =
            worker::book::Book::builtin(engine::Rules::parse("latte", Some("luft")).unwrap())
                .unwrap()
                .positions
                .len() as u64;
        for r in &mut st.rulesets {
            if r.ruleset == "luft" {
                r.games = openings + 1;
            }
        }
        let w = repeated_openings(&config, &st).expect("flagged");
        assert!(w.contains("luft") && !w.contains("normal ("), "{w}");
    }

    #[test]
    fn tiny_p_values_are_not_printed_as_zero() {
        assert_eq!(p_value(1e-9), "< 0.001");
        assert_eq!(p_value(0.0234), "0.023");
    }
}
