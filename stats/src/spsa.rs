//! SPSA tuning as fishtest runs it, with the fixes its users asked for.
//!
//! fishtest's scheme (`spsa_handler.py`, `spsa_workflow.py`): a parameter is
//! `name, start, min, max, c_end, r_end`; the run has `N` game pairs (iterations),
//! `A` (default N/10), `alpha` 0.602 and `gamma` 0.101. With `k` pairs already credited,
//!
//! ```text
//! c   = c_end · N^gamma              c_k = c / (k + 1)^gamma
//! a   = r_end · c_end² · (A + N)^alpha   a_k = a / (A + k + 1)^alpha
//! ```
//!
//! the two engines of a pair play `θ + c_k·δ` and `θ − c_k·δ` (δ a random sign per
//! parameter), and the pair's result `W − L` (of the `+` side) moves
//! `θ ← clip(θ + (a_k / c_k²)·c_k·(W − L)·δ, min, max)`.
//!
//! fishtest gives one perturbation to a whole batch of pairs; here every pair gets its own
//! (each pair is an independent gradient sample), and all pairs handed out together use the
//! schedule of the `k` they were handed out at, as in fishtest. Since the update is linear in
//! the pair results, a batch gives the same expected update as fishtest's.
//!
//! Beyond fishtest:
//! * integer parameters are rounded with one random draw shared by both sides, so the `+`
//!   side is never below the `−` side, and if both round to the same integer they are pushed
//!   one unit apart (official-stockfish/Stockfish#4776);
//! * `c_end = 0` freezes a parameter (no perturbation, no update);
//! * float parameters are tuned without rounding;
//! * every update is described (θ after it, c_k, a_k, the pair's perturbation and result), so
//!   a run can be plotted and replayed ([`SpsaReplay`], [`Spsa::verify_updates`]); the state
//!   keeps them in memory unless told not to ([`Spsa::set_keep_history`]), for a caller that
//!   stores each update [`Spsa::report`] returns and must not grow with the run;
//! * the state, including the seeded random stream (xoshiro256++), is one serialisable
//!   value: save it, load it, and the run continues bit for bit.

use crate::results::PairScore;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Why an SPSA run could not be set up or updated.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpsaError {
    /// A parameter line could not be read.
    #[error("parameter line {line}: {problem}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// A parameter is inconsistent.
    #[error("parameter '{name}': {problem}")]
    BadParam {
        /// The parameter's name.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Two parameters share a name.
    #[error("parameter '{0}' is listed twice")]
    DuplicateName(String),
    /// No parameters.
    #[error("no parameters to tune")]
    NoParams,
    /// A run-level setting is out of range.
    #[error("{0}")]
    BadConfig(String),
    /// A report for a pair that was never handed out or was already reported.
    #[error("pair {0} is not outstanding (never assigned, or already reported)")]
    UnknownPair(u64),
    /// A recorded history does not fit the configuration it is replayed against.
    #[error("history does not match the configuration: {0}")]
    BadHistory(String),
}

/// Whether a parameter takes integer or real values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// Engine option takes integers; values are rounded stochastically.
    Int,
    /// Engine option takes real numbers.
    Float,
}

impl FromStr for ParamKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "int" => Ok(Self::Int),
            "float" => Ok(Self::Float),
            other => Err(format!("unknown kind '{other}' (expected int or float)")),
        }
    }
}

/// One tuned parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaParam {
    /// Engine option name.
    pub name: String,
    /// Integer or real.
    pub kind: ParamKind,
    /// Initial value.
    pub start: f64,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Perturbation size at the end of the run (0 freezes the parameter).
    pub c_end: f64,
    /// Learning rate `a_k / c_k²` at the end of the run.
    pub r_end: f64,
}

impl SpsaParam {
    /// Whether the parameter is frozen (`c_end = 0`).
    pub fn is_frozen(&self) -> bool {
        self.c_end == 0.0
    }

    fn validate(&self) -> Result<(), SpsaError> {
        let bad = |problem: String| SpsaError::BadParam {
            name: self.name.clone(),
            problem,
        };
        if self.name.trim().is_empty() {
            return Err(SpsaError::BadParam {
                name: String::new(),
                problem: "empty name".into(),
            });
        }
        for (what, v) in [
            ("start", self.start),
            ("min", self.min),
            ("max", self.max),
            ("c_end", self.c_end),
            ("r_end", self.r_end),
        ] {
            if !v.is_finite() {
                return Err(bad(format!("{what} must be a finite number (got {v})")));
            }
        }
        if self.min >= self.max {
            return Err(bad(format!(
                "min ({}) must be below max ({})",
                self.min, self.max
            )));
        }
        if self.start < self.min || self.start > self.max {
            return Err(bad(format!(
                "start ({}) must lie in [min, max] = [{}, {}]",
                self.start, self.min, self.max
            )));
        }
        if self.c_end < 0.0 {
            return Err(bad(format!("c_end must be ≥ 0 (got {})", self.c_end)));
        }
        if self.r_end < 0.0 {
            return Err(bad(format!("r_end must be ≥ 0 (got {})", self.r_end)));
        }
        if self.kind == ParamKind::Int && self.max.floor() - self.min.ceil() < 1.0 {
            return Err(bad(
                "an integer parameter needs at least two integers in [min, max]".into(),
            ));
        }
        Ok(())
    }
}

/// Read parameter lines: fishtest's `name,start,min,max,c_end,r_end` (integer parameters) or
/// OpenBench's `name,int|float,start,min,max,c_end,r_end`. Blank lines are ignored.
pub fn parse_params(text: &str) -> Result<Vec<SpsaParam>, SpsaError> {
    let mut params = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |problem: String| SpsaError::BadLine {
            line: i + 1,
            problem,
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let (name, kind, numbers) = match fields.len() {
            6 => (fields[0], ParamKind::Int, &fields[1..]),
            7 => (fields[0], fields[1].parse::<ParamKind>().map_err(bad)?, &fields[2..]),
            n => {
                return Err(bad(format!(
                    "expected 6 fields (name,start,min,max,c_end,r_end) or 7 (name,int|float,start,min,max,c_end,r_end), got {n}"
                )))
            }
        };
        let mut v = [0.0; 5];
        for (slot, text) in v.iter_mut().zip(numbers) {
            *slot = text
                .parse::<f64>()
                .map_err(|_| bad(format!("'{text}' is not a number")))?;
        }
        params.push(SpsaParam {
            name: name.to_string(),
            kind,
            start: v[0],
            min: v[1],
            max: v[2],
            c_end: v[3],
            r_end: v[4],
        });
    }
    Ok(params)
}

/// Run-level settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaConfig {
    /// The tuned parameters.
    pub params: Vec<SpsaParam>,
    /// Number of game pairs (iterations) of the run, `N`.
    pub pairs: u64,
    /// Stability constant `A` of the step schedule.
    pub big_a: f64,
    /// Decay exponent of the step size.
    pub alpha: f64,
    /// Decay exponent of the perturbation size.
    pub gamma: f64,
    /// Seed of the random stream (perturbation signs and rounding draws).
    pub seed: u64,
}

impl SpsaConfig {
    /// fishtest's defaults: `A` = a tenth of the pairs (rounded down), alpha 0.602,
    /// gamma 0.101.
    pub fn new(params: Vec<SpsaParam>, pairs: u64, seed: u64) -> Self {
        Self {
            params,
            pairs,
            big_a: (pairs / 10) as f64,
            alpha: 0.602,
            gamma: 0.101,
            seed,
        }
    }

    fn validate(&self) -> Result<(), SpsaError> {
        if self.params.is_empty() {
            return Err(SpsaError::NoParams);
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &self.params {
            p.validate()?;
            if !seen.insert(p.name.as_str()) {
                return Err(SpsaError::DuplicateName(p.name.clone()));
            }
        }
        if self.pairs == 0 {
            return Err(SpsaError::BadConfig(
                "the run needs at least one pair".into(),
            ));
        }
        if !(self.big_a.is_finite() && self.big_a >= 0.0) {
            return Err(SpsaError::BadConfig(format!(
                "A must be ≥ 0 (got {})",
                self.big_a
            )));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(SpsaError::BadConfig(format!(
                "alpha must be > 0 (got {})",
                self.alpha
            )));
        }
        if !(self.gamma.is_finite() && self.gamma >= 0.0) {
            return Err(SpsaError::BadConfig(format!(
                "gamma must be ≥ 0 (got {})",
                self.gamma
            )));
        }
        Ok(())
    }
}

/// Per-parameter constants of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ParamSchedule {
    /// `c = c_end · N^gamma`.
    pub c: f64,
    /// `a = r_end · c_end² · (A + N)^alpha`.
    pub a: f64,
}

/// What one pair plays with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairAssignment {
    /// Identifier to report the result under.
    pub pair_id: u64,
    /// Pairs credited when the pair was handed out (the schedule's `k`).
    pub iteration: u64,
    /// Perturbation sign per parameter (0 for frozen parameters).
    pub flips: Vec<i8>,
    /// Perturbation size per parameter.
    pub c_k: Vec<f64>,
    /// Step size per parameter.
    pub a_k: Vec<f64>,
    /// Values for the engine that plays `θ + c_k·δ` (integers for integer parameters).
    pub plus: Vec<f64>,
    /// Values for the engine that plays `θ − c_k·δ`.
    pub minus: Vec<f64>,
}

/// One applied update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaUpdate {
    /// The pair.
    pub pair_id: u64,
    /// The schedule's `k` the pair was played at.
    pub iteration: u64,
    /// Perturbation signs.
    pub flips: Vec<i8>,
    /// Perturbation sizes.
    pub c_k: Vec<f64>,
    /// Step sizes.
    pub a_k: Vec<f64>,
    /// `W − L` of the `+` side over the pair (−2..=2).
    pub result: i8,
    /// θ after the update.
    pub theta: Vec<f64>,
}

/// The state of an SPSA run: a plain value to store and reload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spsa {
    config: SpsaConfig,
    schedule: Vec<ParamSchedule>,
    theta: Vec<f64>,
    /// Pairs whose result has been applied.
    credited: u64,
    next_pair_id: u64,
    rng: Xoshiro256PlusPlus,
    /// Absent from [`Spsa::without_outstanding`]'s form, which reloads with none.
    #[serde(default)]
    outstanding: BTreeMap<u64, PairAssignment>,
    /// Whether `history` is kept; snapshots from before the switch existed always kept it.
    #[serde(default = "keep_history_by_default")]
    keep_history: bool,
    #[serde(default)]
    history: Vec<SpsaUpdate>,
}

fn keep_history_by_default() -> bool {
    true
}

/// An [`Spsa`] without its outstanding assignments (and without its history), as
/// [`Spsa::without_outstanding`] lends it for storage. It deserialises as an [`Spsa`].
#[derive(Debug, Serialize)]
pub struct SpsaStateRef<'a> {
    config: &'a SpsaConfig,
    schedule: &'a [ParamSchedule],
    theta: &'a [f64],
    credited: u64,
    next_pair_id: u64,
    rng: &'a Xoshiro256PlusPlus,
    keep_history: bool,
}

impl Spsa {
    /// Start a run.
    pub fn new(config: SpsaConfig) -> Result<Self, SpsaError> {
        config.validate()?;
        let n = config.pairs as f64;
        let schedule = config
            .params
            .iter()
            .map(|p| ParamSchedule {
                c: p.c_end * n.powf(config.gamma),
                a: p.r_end * p.c_end.powi(2) * (config.big_a + n).powf(config.alpha),
            })
            .collect();
        Ok(Self {
            theta: config.params.iter().map(|p| p.start).collect(),
            rng: Xoshiro256PlusPlus::seed_from_u64(config.seed),
            config,
            schedule,
            credited: 0,
            next_pair_id: 0,
            outstanding: BTreeMap::new(),
            keep_history: true,
            history: Vec::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SpsaConfig {
        &self.config
    }

    /// Current parameter values.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Pairs whose result has been applied.
    pub fn credited(&self) -> u64 {
        self.credited
    }

    /// Whether the planned number of pairs has been credited.
    pub fn is_finished(&self) -> bool {
        self.credited >= self.config.pairs
    }

    /// Every update so far, in the order applied, while the history is kept (the default).
    ///
    /// Empty while it is not kept; after [`set_keep_history(true)`](Self::set_keep_history) on
    /// a run that did not keep it, only the updates since.
    pub fn history(&self) -> &[SpsaUpdate] {
        &self.history
    }

    /// Whether [`history`](Self::history) records the updates.
    pub fn keeps_history(&self) -> bool {
        self.keep_history
    }

    /// Keep the updates in memory or not. Turning it off drops those kept so far; nothing
    /// else changes (θ, the credited count, the schedule, the random stream and the
    /// outstanding pairs evolve the same either way). A caller that turns it off stores the
    /// updates [`report`](Self::report) returns, if it wants them.
    pub fn set_keep_history(&mut self, keep: bool) {
        self.keep_history = keep;
        if !keep {
            self.history = Vec::new();
        }
    }

    /// Pairs handed out and not yet reported.
    pub fn outstanding(&self) -> impl Iterator<Item = &PairAssignment> {
        self.outstanding.values()
    }

    /// Per-parameter constants `c` and `a`.
    pub fn schedule(&self) -> &[ParamSchedule] {
        &self.schedule
    }

    /// `(c_k, a_k)` per parameter at iteration `k`.
    pub fn schedule_at(&self, k: u64) -> (Vec<f64>, Vec<f64>) {
        let k1 = (k + 1) as f64;
        self.schedule
            .iter()
            .map(|s| {
                (
                    s.c / k1.powf(self.config.gamma),
                    s.a / (self.config.big_a + k1).powf(self.config.alpha),
                )
            })
            .unzip()
    }

    /// Hand out `pairs` pairs, each with its own perturbation, all at the current schedule.
    pub fn assign(&mut self, pairs: u32) -> Vec<PairAssignment> {
        let k = self.credited;
        let (c_k, a_k) = self.schedule_at(k);
        let mut out = Vec::with_capacity(pairs as usize);
        for _ in 0..pairs {
            let n = self.config.params.len();
            let mut flips = Vec::with_capacity(n);
            let mut plus = Vec::with_capacity(n);
            let mut minus = Vec::with_capacity(n);
            for (i, p) in self.config.params.iter().enumerate() {
                let (flip, hi, lo) = perturb(p, self.theta[i], c_k[i], &mut self.rng);
                flips.push(flip);
                plus.push(hi);
                minus.push(lo);
            }
            let a = PairAssignment {
                pair_id: self.next_pair_id,
                iteration: k,
                flips,
                c_k: c_k.clone(),
                a_k: a_k.clone(),
                plus,
                minus,
            };
            self.next_pair_id += 1;
            self.outstanding.insert(a.pair_id, a.clone());
            out.push(a);
        }
        out
    }

    /// Apply the result of a pair: `score` is the pair score of the engine that played
    /// `θ + c_k·δ`. Returns the update; it is the [`credited`](Self::credited)-th (1-based).
    pub fn report(&mut self, pair_id: u64, score: PairScore) -> Result<SpsaUpdate, SpsaError> {
        let a = self
            .outstanding
            .remove(&pair_id)
            .ok_or(SpsaError::UnknownPair(pair_id))?;
        let result = score.wins_minus_losses();
        apply_step(
            &self.config.params,
            &mut self.theta,
            &a.flips,
            &a.c_k,
            &a.a_k,
            result,
        );
        self.credited += 1;
        let update = SpsaUpdate {
            pair_id,
            iteration: a.iteration,
            flips: a.flips,
            c_k: a.c_k,
            a_k: a.a_k,
            result,
            theta: self.theta.clone(),
        };
        if self.keep_history {
            self.history.push(update.clone());
        }
        Ok(update)
    }

    /// The state to store when the caller keeps each outstanding assignment itself (say,
    /// beside the lease that carries the pair): its size then stays the same however many
    /// pairs are in flight, where the full value grows with them. Reload it as an [`Spsa`]
    /// (it comes back with no outstanding pair and no history) and give each assignment
    /// back with [`restore_outstanding`](Self::restore_outstanding).
    pub fn without_outstanding(&self) -> SpsaStateRef<'_> {
        SpsaStateRef {
            config: &self.config,
            schedule: &self.schedule,
            theta: &self.theta,
            credited: self.credited,
            next_pair_id: self.next_pair_id,
            rng: &self.rng,
            keep_history: self.keep_history,
        }
    }

    /// Take back an assignment handed out by this run and stored outside it (see
    /// [`without_outstanding`](Self::without_outstanding)). Refused for a pair never handed
    /// out, and for one outstanding already with a different assignment; giving back the
    /// same assignment twice changes nothing.
    pub fn restore_outstanding(&mut self, a: PairAssignment) -> Result<(), SpsaError> {
        if a.pair_id >= self.next_pair_id {
            return Err(SpsaError::UnknownPair(a.pair_id));
        }
        let n = self.config.params.len();
        if [
            a.flips.len(),
            a.c_k.len(),
            a.a_k.len(),
            a.plus.len(),
            a.minus.len(),
        ]
        .iter()
        .any(|&len| len != n)
        {
            return Err(SpsaError::BadHistory(format!(
                "assignment of pair {} does not have one value per parameter ({n})",
                a.pair_id
            )));
        }
        match self.outstanding.get(&a.pair_id) {
            Some(held) if *held != a => Err(SpsaError::BadHistory(format!(
                "pair {} is outstanding with another assignment",
                a.pair_id
            ))),
            Some(_) => Ok(()),
            None => {
                self.outstanding.insert(a.pair_id, a);
                Ok(())
            }
        }
    }

    /// Forget an assignment whose pair will never be played (e.g. a lost worker).
    pub fn abandon(&mut self, pair_id: u64) -> Result<(), SpsaError> {
        self.outstanding
            .remove(&pair_id)
            .map(|_| ())
            .ok_or(SpsaError::UnknownPair(pair_id))
    }

    /// Recompute θ from the start values and a recorded history, checking each recorded θ.
    /// Returns the θ after every update (for plots); [`SpsaReplay`] does the same one update
    /// at a time, in constant memory.
    pub fn replay(config: &SpsaConfig, history: &[SpsaUpdate]) -> Result<Vec<Vec<f64>>, SpsaError> {
        let mut replay = SpsaReplay::new(config)?;
        history
            .iter()
            .map(|u| replay.apply(u).map(<[f64]>::to_vec))
            .collect()
    }

    /// Check this state against the updates stored for it (in the order applied, from the
    /// first): each replays to the θ it records, their number is the credited count, the
    /// last θ is the current one, and no update is for a pair still outstanding or never
    /// handed out. Takes updates one at a time, so a caller can stream them from storage.
    pub fn verify_updates<I>(&self, updates: I) -> Result<(), SpsaError>
    where
        I: IntoIterator,
        I::Item: Borrow<SpsaUpdate>,
    {
        let mut replay = SpsaReplay::new(&self.config)?;
        for u in updates {
            let u = u.borrow();
            if u.pair_id >= self.next_pair_id || self.outstanding.contains_key(&u.pair_id) {
                return Err(SpsaError::BadHistory(format!(
                    "update {} is for pair {}, which was {}",
                    replay.applied(),
                    u.pair_id,
                    if u.pair_id >= self.next_pair_id {
                        "never handed out"
                    } else {
                        "not reported yet"
                    }
                )));
            }
            replay.apply(u)?;
        }
        if replay.applied() != self.credited {
            return Err(SpsaError::BadHistory(format!(
                "{} updates for {} credited pairs",
                replay.applied(),
                self.credited
            )));
        }
        if replay.theta() != self.theta.as_slice() {
            return Err(SpsaError::BadHistory(format!(
                "the updates end at θ {:?}, the state is at {:?}",
                replay.theta(),
                self.theta
            )));
        }
        Ok(())
    }
}

/// θ recomputed from a configuration's start values, one recorded update at a time.
///
/// Memory does not depend on the number of updates: a store of updates can be checked by
/// streaming its rows through [`apply`](Self::apply).
#[derive(Debug, Clone, PartialEq)]
pub struct SpsaReplay {
    params: Vec<SpsaParam>,
    theta: Vec<f64>,
    applied: u64,
}

impl SpsaReplay {
    /// Start from the configuration's start values.
    pub fn new(config: &SpsaConfig) -> Result<Self, SpsaError> {
        config.validate()?;
        Ok(Self {
            theta: config.params.iter().map(|p| p.start).collect(),
            params: config.params.clone(),
            applied: 0,
        })
    }

    /// Apply the next update and check the θ it records; returns θ after it. On an error
    /// nothing changes.
    pub fn apply(&mut self, u: &SpsaUpdate) -> Result<&[f64], SpsaError> {
        let (n, j) = (self.params.len(), self.applied);
        if u.flips.len() != n || u.c_k.len() != n || u.a_k.len() != n || u.theta.len() != n {
            return Err(SpsaError::BadHistory(format!(
                "update {j} does not have {n} parameters"
            )));
        }
        let mut theta = self.theta.clone();
        apply_step(&self.params, &mut theta, &u.flips, &u.c_k, &u.a_k, u.result);
        if theta != u.theta {
            return Err(SpsaError::BadHistory(format!(
                "update {j} (pair {}) recorded θ {:?}, replay gives {:?}",
                u.pair_id, u.theta, theta
            )));
        }
        self.theta = theta;
        self.applied += 1;
        Ok(&self.theta)
    }

    /// θ after the updates applied so far.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Updates applied so far.
    pub fn applied(&self) -> u64 {
        self.applied
    }
}

/// θ ← clip(θ + R_k·c_k·result·δ), R_k = a_k / c_k² (fishtest's form); frozen parameters and
/// parameters without a perturbation stay put.
fn apply_step(
    params: &[SpsaParam],
    theta: &mut [f64],
    flips: &[i8],
    c_k: &[f64],
    a_k: &[f64],
    result: i8,
) {
    for (i, p) in params.iter().enumerate() {
        if flips[i] == 0 || c_k[i] == 0.0 {
            continue;
        }
        let r_k = a_k[i] / c_k[i].powi(2);
        let step = r_k * c_k[i] * f64::from(result) * f64::from(flips[i]);
        theta[i] = (theta[i] + step).clamp(p.min, p.max);
    }
}

/// Draw the sign and compute both sides' values of one parameter.
fn perturb(p: &SpsaParam, theta: f64, c_k: f64, rng: &mut Xoshiro256PlusPlus) -> (i8, f64, f64) {
    if p.is_frozen() {
        let v = match p.kind {
            ParamKind::Int => theta.round().clamp(p.min.ceil(), p.max.floor()),
            ParamKind::Float => theta,
        };
        return (0, v, v);
    }
    let flip: i8 = if rng.gen::<bool>() { 1 } else { -1 };
    let d = c_k * f64::from(flip);
    let hi = (theta + d).clamp(p.min, p.max);
    let lo = (theta - d).clamp(p.min, p.max);
    match p.kind {
        ParamKind::Float => (flip, hi, lo),
        ParamKind::Int => {
            // One draw for both sides keeps their order (floor is monotone).
            let u: f64 = rng.gen();
            let (imin, imax) = (p.min.ceil(), p.max.floor());
            let mut hi = (hi + u).floor().clamp(imin, imax);
            let mut lo = (lo + u).floor().clamp(imin, imax);
            if hi == lo {
                // Push the sides one unit apart, in the direction of the perturbation.
                let step = f64::from(flip);
                if (imin..=imax).contains(&(hi + step)) {
                    hi += step;
                } else {
                    lo -= step;
                }
            }
            (flip, hi, lo)
        }
    }
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Int => "int",
            Self::Float => "float",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(kind: ParamKind, c_end: f64) -> SpsaParam {
        SpsaParam {
            name: "x".into(),
            kind,
            start: 50.0,
            min: 0.0,
            max: 100.0,
            c_end,
            r_end: 0.002,
        }
    }

    #[test]
    fn schedule_reaches_end_values() {
        let s = Spsa::new(SpsaConfig::new(vec![param(ParamKind::Int, 4.0)], 30000, 1)).unwrap();
        let (c, a) = s.schedule_at(29999);
        assert!((c[0] - 4.0).abs() < 1e-12);
        assert!((a[0] / c[0].powi(2) - 0.002).abs() < 1e-15);
        // fishtest's worked example: c_0 ≈ 2.83·c_end.
        let (c0, _) = s.schedule_at(0);
        assert!((c0[0] / 4.0 - 2.83).abs() < 0.01);
    }

    #[test]
    fn frozen_parameter_never_moves() {
        let mut s = Spsa::new(SpsaConfig::new(vec![param(ParamKind::Float, 0.0)], 100, 1)).unwrap();
        for a in s.assign(10) {
            assert_eq!(a.plus[0], a.minus[0]);
            s.report(a.pair_id, PairScore::from_half_points(4).unwrap())
                .unwrap();
        }
        assert_eq!(s.theta()[0], 50.0);
    }

    #[test]
    fn small_c_integer_sides_differ_and_keep_order() {
        let mut p = param(ParamKind::Int, 0.1);
        p.start = 0.0; // at the lower edge, to exercise the push-apart rule there too
        let mut s = Spsa::new(SpsaConfig::new(vec![p], 1000, 7)).unwrap();
        for a in s.assign(500) {
            assert_ne!(a.plus[0], a.minus[0]);
            assert!((a.plus[0] - a.minus[0]) * f64::from(a.flips[0]) > 0.0);
        }
    }

    #[test]
    fn unknown_and_repeated_reports_are_refused() {
        let mut s = Spsa::new(SpsaConfig::new(vec![param(ParamKind::Int, 2.0)], 10, 1)).unwrap();
        let a = s.assign(1).remove(0);
        let score = PairScore::from_half_points(2).unwrap();
        assert!(s.report(a.pair_id, score).is_ok());
        assert_eq!(
            s.report(a.pair_id, score).unwrap_err(),
            SpsaError::UnknownPair(a.pair_id)
        );
        assert_eq!(s.report(99, score).unwrap_err(), SpsaError::UnknownPair(99));
    }

    #[test]
    fn old_snapshots_keep_their_history_and_bad_update_lists_are_named() {
        let mut s = Spsa::new(SpsaConfig::new(vec![param(ParamKind::Int, 2.0)], 10, 1)).unwrap();
        let a = s.assign(2);
        let score = PairScore::from_half_points(3).unwrap();
        let u = s.report(a[0].pair_id, score).unwrap();
        // A snapshot written before `keep_history` existed.
        let mut v = serde_json::to_value(&s).unwrap();
        v.as_object_mut().unwrap().remove("keep_history");
        let old: Spsa = serde_json::from_value(v).unwrap();
        assert!(old.keeps_history());
        assert_eq!(old, s);
        assert_eq!(old.history(), std::slice::from_ref(&u));

        s.verify_updates([&u]).unwrap();
        let bad = |r: Result<(), SpsaError>| match r {
            Err(SpsaError::BadHistory(m)) => m,
            other => panic!("{other:?}"),
        };
        let mut outstanding = u.clone();
        outstanding.pair_id = a[1].pair_id;
        assert!(bad(s.verify_updates([&outstanding])).contains("not reported yet"));
        let mut unknown = u.clone();
        unknown.pair_id = 99;
        assert!(bad(s.verify_updates([&unknown])).contains("never handed out"));
        assert!(bad(s.verify_updates(Vec::<SpsaUpdate>::new())).contains("0 updates for 1"));
        let mut moved = u.clone();
        moved.theta[0] += 1.0;
        assert!(bad(s.verify_updates([moved])).contains("replay gives"));
    }

    #[test]
    fn state_without_outstanding_reloads_with_assignments_given_back() {
        let mut s = Spsa::new(SpsaConfig::new(vec![param(ParamKind::Int, 2.0)], 10, 1)).unwrap();
        s.set_keep_history(false);
        let a = s.assign(3);
        let score = PairScore::from_half_points(3).unwrap();
        s.report(a[0].pair_id, score).unwrap();
        let small = serde_json::to_string(&s.without_outstanding()).unwrap();
        assert!(small.len() < serde_json::to_string(&s).unwrap().len());
        let mut back: Spsa = serde_json::from_str(&small).unwrap();
        assert_eq!(back.outstanding().count(), 0);
        for x in &a[1..] {
            back.restore_outstanding(x.clone()).unwrap();
            back.restore_outstanding(x.clone()).unwrap();
        }
        assert_eq!(back, s);
        // Never handed out, or another assignment for a pair in flight: refused.
        let mut never = a[1].clone();
        never.pair_id = 3;
        assert_eq!(
            back.restore_outstanding(never),
            Err(SpsaError::UnknownPair(3))
        );
        let mut other = a[1].clone();
        other.plus[0] += 1.0;
        assert!(matches!(
            back.restore_outstanding(other),
            Err(SpsaError::BadHistory(_))
        ));
        let mut short = a[1].clone();
        short.flips.clear();
        assert!(matches!(
            back.restore_outstanding(short),
            Err(SpsaError::BadHistory(_))
        ));
        // The run goes on the same.
        assert_eq!(back.assign(2), s.assign(2));
    }

    #[test]
    fn parses_both_line_formats() {
        let ps = parse_params("A,10,0,20,2,0.002\n\n B , float, 0.5, 0, 1, 0.05, 0.01\n").unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].kind, ParamKind::Int);
        assert_eq!(ps[1].kind, ParamKind::Float);
        assert_eq!(ps[1].start, 0.5);
        assert!(matches!(
            parse_params("A,1,2"),
            Err(SpsaError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            parse_params("A,x,0,20,2,0.002"),
            Err(SpsaError::BadLine { .. })
        ));
    }

    #[test]
    fn bad_configs_are_refused() {
        let mut p = param(ParamKind::Int, 2.0);
        p.min = 10.0;
        p.max = 5.0;
        assert!(Spsa::new(SpsaConfig::new(vec![p], 10, 1)).is_err());
        assert_eq!(
            Spsa::new(SpsaConfig::new(vec![], 10, 1)).unwrap_err(),
            SpsaError::NoParams
        );
        let p = param(ParamKind::Int, 2.0);
        assert!(Spsa::new(SpsaConfig::new(vec![p.clone(), p], 10, 1)).is_err());
    }
}
