//! Checking fishtest reference vectors (the format of `stats/tests/data/fishtest_vectors.json`).
//!
//! A pure function over the file's text: the caller reads the file. Every number in a vector is
//! recomputed and compared (counts, Elo and its intermediates, nElo and its intermediates, SPRT
//! bounds, every LLR and its state, and the optional SPRT Elo); descriptive strings (function
//! names, notes) are not checked.

use crate::elo::logistic_elo;
use crate::error::StatsError;
use crate::llr::EloModel;
use crate::nelo::normalized_elo;
use crate::results::{Pentanomial, Results, Trinomial};
use crate::sprt::SprtParams;
use crate::sprt_elo::sprt_elo;
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use thiserror::Error;

/// Allowed deviation: `|got − want| ≤ abs + rel·|want|`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// Absolute part (matters near zero, where fishtest's exact zeros show up as ±1e-13).
    pub abs: f64,
    /// Relative part.
    pub rel: f64,
}

impl Tolerance {
    /// Whether `got` is close enough to `want`.
    pub fn accepts(&self, got: f64, want: f64) -> bool {
        (got - want).abs() <= self.abs + self.rel * want.abs()
    }

    /// The same bound for absolute and relative error.
    pub fn both(t: f64) -> Self {
        Self { abs: t, rel: t }
    }
}

/// Tolerances per kind of figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerances {
    /// Elo, nElo, intervals, LOS, intermediates, bounds.
    pub general: Tolerance,
    /// Log-likelihood ratios (found by iterative fits).
    pub llr: Tolerance,
    /// The SPRT Elo estimate (nested root searches on a Brownian approximation).
    pub sprt_elo: Tolerance,
}

impl Default for Tolerances {
    /// The tolerances the vectors' README suggests: 1e-9 (+1e-9 relative), 1e-8 for LLRs,
    /// 1e-6 for the SPRT Elo.
    fn default() -> Self {
        Self {
            general: Tolerance::both(1e-9),
            llr: Tolerance::both(1e-8),
            sprt_elo: Tolerance::both(1e-6),
        }
    }
}

impl Tolerances {
    /// One tolerance for every figure.
    pub fn uniform(t: f64) -> Self {
        let t = Tolerance::both(t);
        Self {
            general: t,
            llr: t,
            sprt_elo: t,
        }
    }
}

/// One figure that differs from the reference (or could not be checked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Path of the field in the file, e.g. `vectors[3].elo.ci[0]`.
    pub field: String,
    /// What went wrong.
    pub problem: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

/// The outcome for one vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VectorOutcome {
    /// The vector's `id`.
    pub id: String,
    /// Figures compared.
    pub checked: usize,
    /// Figures that differ.
    pub mismatches: Vec<Mismatch>,
    /// The largest `|got − want| / allowed` over the compared figures (below 1 means every
    /// figure is within tolerance; the smaller, the more margin).
    pub worst_ratio: f64,
}

impl VectorOutcome {
    /// Whether every figure matched.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// The outcome for one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    /// One entry per vector, in file order.
    pub vectors: Vec<VectorOutcome>,
    /// Problems with the file's header (e.g. a wrong `count`).
    pub file_mismatches: Vec<Mismatch>,
}

/// The file is not in the vectors format at all.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum VectorFileError {
    /// Not valid JSON.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// Valid JSON, wrong layout.
    #[error("not a vectors file: {0}")]
    Layout(String),
}

/// Check every vector of a vectors file.
pub fn check_vectors(json: &str, tol: &Tolerances) -> Result<FileReport, VectorFileError> {
    let root: Value =
        serde_json::from_str(json).map_err(|e| VectorFileError::Json(e.to_string()))?;
    let obj = root
        .as_object()
        .ok_or_else(|| VectorFileError::Layout("the top level is not an object".into()))?;
    let vectors = obj
        .get("vectors")
        .and_then(Value::as_array)
        .ok_or_else(|| VectorFileError::Layout("no \"vectors\" array".into()))?;
    let mut file_mismatches = Vec::new();
    if let Some(count) = obj.get("count") {
        if count.as_u64() != Some(vectors.len() as u64) {
            file_mismatches.push(Mismatch {
                field: "count".into(),
                problem: format!("says {count}, the file holds {} vectors", vectors.len()),
            });
        }
    }
    let bounds = match obj.get("sprt_bounds_per_vector") {
        None => Vec::new(),
        Some(v) => parse_bound_list(v)
            .map_err(|e| VectorFileError::Layout(format!("sprt_bounds_per_vector: {e}")))?,
    };
    let outcomes = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| check_one(i, v, &bounds, tol))
        .collect();
    Ok(FileReport {
        vectors: outcomes,
        file_mismatches,
    })
}

fn parse_bound_list(v: &Value) -> Result<Vec<(EloModel, f64, f64)>, String> {
    let list = v.as_array().ok_or("not an array")?;
    list.iter()
        .map(|b| {
            let model = b
                .get("elo_model")
                .and_then(Value::as_str)
                .ok_or("entry without elo_model")?
                .parse::<EloModel>()?;
            let e0 = b
                .get("elo0")
                .and_then(Value::as_f64)
                .ok_or("entry without elo0")?;
            let e1 = b
                .get("elo1")
                .and_then(Value::as_f64)
                .ok_or("entry without elo1")?;
            Ok((model, e0, e1))
        })
        .collect()
}

/// Collects comparisons for one vector.
struct Checker<'a> {
    tol: &'a Tolerances,
    checked: usize,
    mismatches: Vec<Mismatch>,
    worst_ratio: f64,
}

/// A missing or ill-typed field; ends the check of the block it was found in.
struct Missing;

impl Checker<'_> {
    fn fail(&mut self, field: &str, problem: impl Into<String>) {
        self.mismatches.push(Mismatch {
            field: field.to_string(),
            problem: problem.into(),
        });
    }

    fn get<'v>(&mut self, obj: &'v Value, path: &str, key: &str) -> Result<&'v Value, Missing> {
        match obj.get(key) {
            Some(v) => Ok(v),
            None => {
                self.fail(&format!("{path}.{key}"), "missing");
                Err(Missing)
            }
        }
    }

    fn number(&mut self, obj: &Value, path: &str, key: &str) -> Result<f64, Missing> {
        let v = self.get(obj, path, key)?;
        match v.as_f64() {
            Some(x) => Ok(x),
            None => {
                self.fail(&format!("{path}.{key}"), format!("not a number: {v}"));
                Err(Missing)
            }
        }
    }

    fn compare(&mut self, field: String, got: f64, want: f64, tol: Tolerance) {
        self.checked += 1;
        let allowed = tol.abs + tol.rel * want.abs();
        let ratio = if got.is_finite() {
            (got - want).abs() / allowed
        } else {
            f64::INFINITY
        };
        self.worst_ratio = self.worst_ratio.max(ratio);
        if !got.is_finite() || !tol.accepts(got, want) {
            self.mismatches.push(Mismatch {
                field,
                problem: format!(
                    "got {got:e}, want {want:e} (|diff| = {:.3e}, allowed {:.3e})",
                    (got - want).abs(),
                    tol.abs + tol.rel * want.abs()
                ),
            });
        }
    }

    /// Compare a field that holds a number.
    fn field(
        &mut self,
        obj: &Value,
        path: &str,
        key: &str,
        got: f64,
        tol: Tolerance,
    ) -> Result<(), Missing> {
        let want = self.number(obj, path, key)?;
        self.compare(format!("{path}.{key}"), got, want, tol);
        Ok(())
    }

    /// Compare a field that holds an array of numbers.
    fn array(
        &mut self,
        obj: &Value,
        path: &str,
        key: &str,
        got: &[f64],
        tol: Tolerance,
    ) -> Result<(), Missing> {
        let v = self.get(obj, path, key)?;
        self.numbers(format!("{path}.{key}"), v, got, tol)
    }

    /// Compare a value that must be an array of numbers.
    fn numbers(
        &mut self,
        field: String,
        v: &Value,
        got: &[f64],
        tol: Tolerance,
    ) -> Result<(), Missing> {
        let want: Option<Vec<f64>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>());
        match want {
            Some(w) if w.len() == got.len() => {
                for (i, (&g, &w)) in got.iter().zip(&w).enumerate() {
                    self.compare(format!("{field}[{i}]"), g, w, tol);
                }
                Ok(())
            }
            _ => {
                self.fail(
                    &field,
                    format!("expected an array of {} numbers, found {v}", got.len()),
                );
                Err(Missing)
            }
        }
    }

    /// Compare a field that must equal an exact value (counts, confidence levels, names).
    fn exact(&mut self, field: String, got: &Value, want: &Value) {
        self.checked += 1;
        if got != want {
            self.fail(&field, format!("got {got}, want {want}"));
        }
    }

    fn stats_error(&mut self, field: &str, e: StatsError) {
        self.checked += 1;
        self.fail(field, format!("could not compute: {e}"));
    }
}

fn parse_counts(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(Value::as_u64).collect()
}

fn check_one(
    index: usize,
    v: &Value,
    bounds: &[(EloModel, f64, f64)],
    tol: &Tolerances,
) -> VectorOutcome {
    let path = format!("vectors[{index}]");
    let id = v
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| path.clone(), str::to_string);
    let mut c = Checker {
        tol,
        checked: 0,
        mismatches: Vec::new(),
        worst_ratio: 0.0,
    };
    // Without valid results nothing else can be checked.
    if let Ok(results) = vector_results(&mut c, v, &path) {
        let raw: Value = results.counts().into();
        let _ = check_counts(&mut c, v, &path, &results);
        let _ = check_elo(&mut c, v, &path, &results, &raw);
        let _ = check_nelo(&mut c, v, &path, &results, &raw);
        let _ = check_sprt(&mut c, v, &path, &results, &raw, bounds);
        if v.get("sprt_elo").is_some() {
            let _ = check_sprt_elo(&mut c, v, &path);
        }
    }
    VectorOutcome {
        id,
        checked: c.checked,
        mismatches: c.mismatches,
        worst_ratio: c.worst_ratio,
    }
}

fn vector_results(c: &mut Checker<'_>, v: &Value, path: &str) -> Result<Results, Missing> {
    let kind = c
        .get(v, path, "kind")?
        .as_str()
        .unwrap_or_default()
        .to_string();
    let raw = c.get(v, path, "results")?;
    let Some(counts) = parse_counts(raw) else {
        c.fail(
            &format!("{path}.results"),
            format!("not a list of non-negative whole numbers: {raw}"),
        );
        return Err(Missing);
    };
    let expected_len = match kind.as_str() {
        "trinomial" => 3,
        "pentanomial" => 5,
        other => {
            c.fail(&format!("{path}.kind"), format!("unknown kind '{other}'"));
            return Err(Missing);
        }
    };
    if counts.len() != expected_len {
        c.fail(
            &format!("{path}.results"),
            format!(
                "a {kind} vector needs {expected_len} counts, found {}",
                counts.len()
            ),
        );
        return Err(Missing);
    }
    Results::from_counts(&counts).map_err(|e| {
        c.fail(&format!("{path}.results"), e.to_string());
        Missing
    })
}

fn check_counts(
    c: &mut Checker<'_>,
    v: &Value,
    path: &str,
    results: &Results,
) -> Result<(), Missing> {
    let counts = c.get(v, path, "counts")?;
    let Some(map) = counts.as_object() else {
        c.fail(&format!("{path}.counts"), "not an object");
        return Err(Missing);
    };
    let expected: Vec<(&str, u64)> = match results {
        Results::Trinomial(t) => vec![
            ("losses", t.losses),
            ("draws", t.draws),
            ("wins", t.wins),
            ("games", t.games()),
        ],
        Results::Pentanomial(p) => {
            let [ll, ld, dd_wl, wd, ww] = p.counts();
            vec![
                ("LL", ll),
                ("LD", ld),
                ("DD_WL", dd_wl),
                ("WD", wd),
                ("WW", ww),
                ("pairs", p.pairs()),
                ("games", p.games()),
            ]
        }
    };
    for (key, value) in map {
        let field = format!("{path}.counts.{key}");
        match expected.iter().find(|(k, _)| k == key) {
            Some(&(_, want)) => c.exact(field, value, &Value::from(want)),
            None => c.fail(&field, "unknown count name"),
        }
    }
    Ok(())
}

fn check_args_results(c: &mut Checker<'_>, block: &Value, path: &str, raw: &Value) {
    if let Some(args) = block.get("args") {
        if let Some(r) = args.get("results") {
            c.exact(format!("{path}.args.results"), r, raw);
        }
    }
}

fn check_confidence(c: &mut Checker<'_>, block: &Value, path: &str) {
    if let Some(conf) = block.get("confidence") {
        c.exact(format!("{path}.confidence"), conf, &Value::from(0.95));
    }
}

fn check_elo(
    c: &mut Checker<'_>,
    v: &Value,
    path: &str,
    results: &Results,
    raw: &Value,
) -> Result<(), Missing> {
    let block = c.get(v, path, "elo")?;
    let path = format!("{path}.elo");
    let g = c.tol.general;
    check_args_results(c, block, &path, raw);
    check_confidence(c, block, &path);
    let e = match logistic_elo(results) {
        Ok(e) => e,
        Err(err) => {
            c.stats_error(&path, err);
            return Err(Missing);
        }
    };
    c.field(block, &path, "elo", e.elo, g)?;
    c.field(block, &path, "elo95", e.elo95, g)?;
    c.array(block, &path, "ci", &e.ci, g)?;
    c.field(block, &path, "los", e.los, g)?;
    if let Some(inter) = block.get("intermediate") {
        let ipath = format!("{path}.intermediate");
        c.field(inter, &ipath, "games", e.games, g)?;
        c.field(inter, &ipath, "score_per_game", e.score, g)?;
        c.field(inter, &ipath, "variance_per_game", e.variance, g)?;
    }
    Ok(())
}

fn check_nelo(
    c: &mut Checker<'_>,
    v: &Value,
    path: &str,
    results: &Results,
    raw: &Value,
) -> Result<(), Missing> {
    let block = c.get(v, path, "nelo")?;
    let path = format!("{path}.nelo");
    let g = c.tol.general;
    check_args_results(c, block, &path, raw);
    check_confidence(c, block, &path);
    let e = match normalized_elo(results) {
        Ok(e) => e,
        Err(err) => {
            c.stats_error(&path, err);
            return Err(Missing);
        }
    };
    c.field(block, &path, "nelo", e.nelo, g)?;
    c.array(block, &path, "ci", &e.ci, g)?;
    if let Some(inter) = block.get("intermediate") {
        let ipath = format!("{path}.intermediate");
        c.field(inter, &ipath, "n", e.n, g)?;
        let pdf = c.get(inter, &ipath, "pdf")?;
        let rows = pdf.as_array().map(Vec::as_slice).unwrap_or_default();
        if rows.len() != e.pdf.len() {
            c.fail(
                &format!("{ipath}.pdf"),
                format!("expected {} rows, found {pdf}", e.pdf.len()),
            );
        } else {
            for (i, (row, &(a, p))) in rows.iter().zip(&e.pdf).enumerate() {
                c.numbers(format!("{ipath}.pdf[{i}]"), row, &[a, p], g)?;
            }
        }
        c.field(inter, &ipath, "mean", e.mean, g)?;
        c.field(inter, &ipath, "variance", e.variance, g)?;
        c.field(inter, &ipath, "skewness", e.skewness, g)?;
        c.field(inter, &ipath, "excess_kurtosis", e.excess_kurtosis, g)?;
        c.field(inter, &ipath, "t", e.t, g)?;
        c.field(inter, &ipath, "var_t", e.var_t, g)?;
        c.field(inter, &ipath, "z975", e.z975, g)?;
        c.field(inter, &ipath, "nelo_per_t", e.nelo_per_t, g)?;
    }
    Ok(())
}

fn check_sprt(
    c: &mut Checker<'_>,
    v: &Value,
    path: &str,
    results: &Results,
    raw: &Value,
    bounds: &[(EloModel, f64, f64)],
) -> Result<(), Missing> {
    let block = c.get(v, path, "sprt")?;
    let path = format!("{path}.sprt");
    let g = c.tol.general;
    let alpha = c.number(block, &path, "alpha")?;
    let beta = c.number(block, &path, "beta")?;
    let entries = c.get(block, &path, "llr")?;
    let Some(entries) = entries.as_array() else {
        c.fail(&format!("{path}.llr"), "not an array");
        return Err(Missing);
    };
    let mut seen = Vec::new();
    let mut bounds_checked = false;
    for (i, entry) in entries.iter().enumerate() {
        let epath = format!("{path}.llr[{i}]");
        let Some(model) = entry.get("elo_model").and_then(Value::as_str) else {
            c.fail(&format!("{epath}.elo_model"), "missing");
            continue;
        };
        let model = match model.parse::<EloModel>() {
            Ok(m) => m,
            Err(e) => {
                c.fail(&format!("{epath}.elo_model"), e);
                continue;
            }
        };
        let Ok(elo0) = c.number(entry, &epath, "elo0") else {
            continue;
        };
        let Ok(elo1) = c.number(entry, &epath, "elo1") else {
            continue;
        };
        seen.push((model, elo0, elo1));
        if let Some(args) = entry.get("args") {
            if let Some(r) = args.get("results") {
                c.exact(format!("{epath}.args.results"), r, raw);
            }
            let (k0, k1) = if model == EloModel::Normalized {
                ("nelo0", "nelo1")
            } else {
                ("elo0", "elo1")
            };
            for (k, want) in [(k0, elo0), (k1, elo1)] {
                if let Some(x) = args.get(k) {
                    c.exact(format!("{epath}.args.{k}"), x, &Value::from(want));
                }
            }
        }
        let params = match SprtParams::new(alpha, beta, elo0, elo1, model) {
            Ok(p) => p,
            Err(e) => {
                c.stats_error(&epath, e);
                continue;
            }
        };
        if !bounds_checked {
            bounds_checked = true;
            c.field(block, &path, "lower_bound", params.lower_bound(), g)?;
            c.field(block, &path, "upper_bound", params.upper_bound(), g)?;
        }
        let llr = match params.llr(results) {
            Ok(x) => x,
            Err(e) => {
                c.stats_error(&format!("{epath}.llr"), e);
                continue;
            }
        };
        let _ = c.field(entry, &epath, "llr", llr, c.tol.llr);
        if let Some(state) = entry.get("state") {
            let got = params.decide(llr).to_string();
            c.exact(format!("{epath}.state"), &Value::from(got), state);
        }
    }
    for &(m, e0, e1) in bounds {
        if !seen
            .iter()
            .any(|&(sm, s0, s1)| sm == m && s0 == e0 && s1 == e1)
        {
            c.fail(
                &format!("{path}.llr"),
                format!("no entry for {m} [{e0}, {e1}] listed in sprt_bounds_per_vector"),
            );
        }
    }
    Ok(())
}

fn check_sprt_elo(c: &mut Checker<'_>, v: &Value, path: &str) -> Result<(), Missing> {
    let block = c.get(v, path, "sprt_elo")?;
    let path = format!("{path}.sprt_elo");
    let t = c.tol.sprt_elo;
    let args = c.get(block, &path, "args")?;
    let apath = format!("{path}.args");
    let r = c.get(args, &apath, "R")?;
    let results = if let Some(p) = r.get("pentanomial") {
        match parse_counts(p).as_deref() {
            Some(&[a, b, cc, d, e]) => Results::Pentanomial(Pentanomial([a, b, cc, d, e])),
            _ => {
                c.fail(
                    &format!("{apath}.R.pentanomial"),
                    "expected 5 non-negative whole numbers",
                );
                return Err(Missing);
            }
        }
    } else {
        let get = |k: &str| r.get(k).map_or(Some(0), Value::as_u64);
        match (get("wins"), get("draws"), get("losses")) {
            (Some(wins), Some(draws), Some(losses)) => Results::Trinomial(Trinomial {
                wins,
                draws,
                losses,
            }),
            _ => {
                c.fail(
                    &format!("{apath}.R"),
                    "wins/draws/losses must be non-negative whole numbers",
                );
                return Err(Missing);
            }
        }
    };
    let alpha = c.number(args, &apath, "alpha")?;
    let beta = c.number(args, &apath, "beta")?;
    let p = c.number(args, &apath, "p")?;
    let elo0 = c.number(args, &apath, "elo0")?;
    let elo1 = c.number(args, &apath, "elo1")?;
    let model_raw = c.get(args, &apath, "elo_model")?;
    let model = match model_raw.as_str().map(str::parse::<EloModel>) {
        Some(Ok(m)) => m,
        _ => {
            c.fail(
                &format!("{apath}.elo_model"),
                format!("unknown model {model_raw}"),
            );
            return Err(Missing);
        }
    };
    let got = SprtParams::new(alpha, beta, elo0, elo1, model)
        .and_then(|params| sprt_elo(&results, &params, p));
    let e = match got {
        Ok(e) => e,
        Err(err) => {
            c.stats_error(&path, err);
            return Err(Missing);
        }
    };
    c.field(block, &path, "elo", e.elo, t)?;
    c.array(block, &path, "ci", &e.ci, t)?;
    c.field(block, &path, "los", e.los, t)?;
    c.field(block, &path, "llr", e.llr, c.tol.llr)?;
    Ok(())
}
