//! Run configs: TOML files with variant, rule-set(s), limits, book, adjudication, game budget
//! and priority, plus a section per run kind. Every error names the field it is about.
//!
//! ```toml
//! name = "latte luft study"
//! kind = "study"            # spsa | sprt | match | study
//! games = 400               # game budget (pairs = games / 2)
//! priority = 0
//! seed = 1
//!
//! [limits]
//! nodes = 500               # or depth, movetime_ms, or a clock: tc = "10+0.1"
//! max_plies = 300
//!
//! [[variants]]
//! variant = "latte"
//! ruleset = "normal"
//!
//! [[variants]]
//! variant = "latte"
//! ruleset = "luft"
//!
//! [first]
//! engine = "builtin"
//!
//! [study]
//! baseline = "normal"
//! stop_half_width = 1.5       # optional: stop once every interval is within ±1.5 points
//!
//! [study.decide]              # optional: stop once every comparison is decided
//! alpha = 0.05                # chance of finding a difference that is not there, per test
//! beta = 0.05                 # chance of missing one of `effect` or more (default: alpha)
//! effect = 3.0                # the smallest difference worth finding, percentage points
//! ```

mod schedule;

use schedule::PairSchedule;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// A config error: the field (dotted path, `variants[1].ruleset`) and the problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the field, or `(toml)` for a syntax error.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The four kinds of run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// SPSA tuning.
    Spsa,
    /// Sequential test of `first` against `second`.
    Sprt,
    /// A fixed number of games.
    Match,
    /// One engine under several rule-sets.
    Study,
}

impl RunKind {
    /// Name as in configs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Spsa => "spsa",
            Self::Sprt => "sprt",
            Self::Match => "match",
            Self::Study => "study",
        }
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A run config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Display name.
    pub name: String,
    /// Kind of run.
    pub kind: RunKind,
    /// Game budget; must be even (games are played in pairs). For SPRT runs, the most games
    /// played before the test decides.
    pub games: u64,
    /// Scheduling priority: higher first.
    #[serde(default)]
    pub priority: i32,
    /// Relative share of workers among runs of equal priority (fishtest's throughput, %).
    #[serde(default = "default_throughput")]
    pub throughput: u32,
    /// Seed of the run (per-pair seeds, SPSA perturbations).
    #[serde(default)]
    pub seed: u64,
    /// Upload PGNs of finished pairs (default: on, except for SPSA runs).
    #[serde(default)]
    pub pgn: Option<bool>,
    /// Target wall time of one lease, seconds.
    #[serde(default = "default_batch_seconds")]
    pub batch_seconds: u32,
    /// Search limits.
    #[serde(default)]
    pub limits: Limits,
    /// Default opening book (a file name the workers know); empty: start position.
    #[serde(default)]
    pub book: String,
    /// Adjudication.
    #[serde(default)]
    pub adjudication: Adjudication,
    /// Variants and rule-sets the games are spread over, with weights.
    pub variants: Vec<VariantEntry>,
    /// The engine under test.
    pub first: PlayerConfig,
    /// Its opponent (default: the same as `first`).
    #[serde(default)]
    pub second: Option<PlayerConfig>,
    /// SPRT settings (kind `sprt`).
    #[serde(default)]
    pub sprt: Option<SprtSection>,
    /// SPSA settings (kind `spsa`).
    #[serde(default)]
    pub spsa: Option<SpsaSection>,
    /// Study settings (kind `study`).
    #[serde(default)]
    pub study: Option<StudySection>,
    /// Which entry each pair plays, laid out on first use (derived from `variants`).
    #[serde(skip)]
    schedule: PairSchedule,
}

fn default_throughput() -> u32 {
    100
}

fn default_batch_seconds() -> u32 {
    180
}

/// Search limits per move.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Nodes per move.
    #[serde(default)]
    pub nodes: u64,
    /// Depth per move.
    #[serde(default)]
    pub depth: u32,
    /// Time per move, milliseconds.
    #[serde(default)]
    pub movetime_ms: u64,
    /// A game clock per side, in fishtest's notation: `tc = "10+0.1"` is 10 s at the start
    /// and 0.1 s added after each move. The only limit of its games when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<Clock>,
    /// Draw after this many plies (0: none).
    #[serde(default)]
    pub max_plies: u32,
}

/// `limits.tc`: a game clock in whole milliseconds, as leases carry it
/// (`GameSettings.clock_base_ms`, `clock_inc_ms`). Written and read as `BASE+INC` in seconds
/// (`"10+0.1"`, `"60"` without an increment), the syntax of the worker's `--tc`, whose parser
/// this reuses so that a run and a `worker match` read a clock alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Clock {
    /// Each side's time at the start, ms (1 to [`proto::limits::CLOCK_BASE_MS`]).
    pub base_ms: u64,
    /// Added to the mover's clock after each move, ms (at most
    /// [`proto::limits::CLOCK_INC_MS`]).
    pub inc_ms: u64,
}

impl Clock {
    /// The clock as the worker's runner takes it.
    pub fn time_control(self) -> worker::limits::TimeControl {
        worker::limits::TimeControl::Clock {
            base: std::time::Duration::from_millis(self.base_ms),
            inc: std::time::Duration::from_millis(self.inc_ms),
        }
    }
}

/// Whole milliseconds, to the nearest: `0.3` s parses to 299,999,999 ns, which truncating
/// would make 299 ms.
fn nearest_ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos().saturating_add(500_000) / 1_000_000).unwrap_or(u64::MAX)
}

impl std::str::FromStr for Clock {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let expected = format!(
            "expected BASE+INC in seconds, as \"10+0.1\" (a base above 0 and at most {}, an \
             increment of at most {})",
            proto::limits::CLOCK_BASE_MS / 1000,
            proto::limits::CLOCK_INC_MS / 1000
        );
        let tc = text
            .parse::<worker::limits::TimeControl>()
            .map_err(|_| format!("{text:?} is not a clock: {expected}"))?;
        let worker::limits::TimeControl::Clock { base, inc } = tc else {
            return Err(format!(
                "{text:?} is not a clock: {expected} (a per-move limit goes in limits.nodes, \
                 limits.depth or limits.movetime_ms)"
            ));
        };
        let (base_ms, inc_ms) = (nearest_ms(base), nearest_ms(inc));
        if base_ms == 0 {
            return Err(format!("{text:?}: the base must be at least 0.001 seconds"));
        }
        if base_ms > proto::limits::CLOCK_BASE_MS {
            return Err(format!(
                "{text:?}: the base must be at most {} seconds",
                proto::limits::CLOCK_BASE_MS / 1000
            ));
        }
        if inc_ms > proto::limits::CLOCK_INC_MS {
            return Err(format!(
                "{text:?}: the increment must be at most {} seconds",
                proto::limits::CLOCK_INC_MS / 1000
            ));
        }
        Ok(Self { base_ms, inc_ms })
    }
}

impl TryFrom<String> for Clock {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<Clock> for String {
    fn from(c: Clock) -> Self {
        c.to_string()
    }
}

impl fmt::Display for Clock {
    /// `BASE+INC` in seconds, as configs write it and as the PGN `TimeControl` tag has it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.time_control(), f)
    }
}

/// fishtest-style adjudication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adjudication {
    /// On or off.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Resign score, centipawns.
    #[serde(default = "d600")]
    pub resign_score: i32,
    /// Consecutive moves at the resign score.
    #[serde(default = "d3")]
    pub resign_moves: u32,
    /// Earliest full move of a draw adjudication.
    #[serde(default = "d34")]
    pub draw_after_move: u32,
    /// Consecutive moves within the draw score.
    #[serde(default = "d8")]
    pub draw_moves: u32,
    /// Draw score, centipawns.
    #[serde(default = "d20")]
    pub draw_score: i32,
}

fn yes() -> bool {
    true
}
fn d600() -> i32 {
    600
}
fn d3() -> u32 {
    3
}
fn d34() -> u32 {
    34
}
fn d8() -> u32 {
    8
}
fn d20() -> i32 {
    20
}

impl Default for Adjudication {
    fn default() -> Self {
        Self {
            enabled: true,
            resign_score: 600,
            resign_moves: 3,
            draw_after_move: 34,
            draw_moves: 8,
            draw_score: 20,
        }
    }
}

/// One variant and rule-set with its share of the games.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantEntry {
    /// `chess`, `latte` or `secutor`.
    pub variant: String,
    /// Rule-set (`normal`, `luft`, `tworooks`, `both` for Latte; `extended`, `orthodox` for
    /// Secutor; empty or `normal` for chess).
    #[serde(default)]
    pub ruleset: String,
    /// Relative weight (whole number ≥ 1).
    #[serde(default = "one")]
    pub weight: u32,
    /// Opening book of this entry (default: the run's `book`).
    #[serde(default)]
    pub book: String,
}

fn one() -> u32 {
    1
}

/// An engine and its options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerConfig {
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// `builtin` or the name of an external engine the workers have.
    #[serde(default = "builtin")]
    pub engine: String,
    /// UCI options.
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
    /// SHA-256 an external engine must have (lower-case hex); empty: any build of that name.
    #[serde(default)]
    pub sha256: String,
}

impl PlayerConfig {
    /// Whether this is the worker's own engine.
    pub fn is_builtin(&self) -> bool {
        self.engine == "builtin"
    }
}

fn builtin() -> String {
    "builtin".into()
}

/// SPRT settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtSection {
    /// H0 Elo.
    pub elo0: f64,
    /// H1 Elo.
    pub elo1: f64,
    /// False-positive rate.
    #[serde(default = "five_percent")]
    pub alpha: f64,
    /// False-negative rate.
    #[serde(default = "five_percent")]
    pub beta: f64,
    /// `normalized` (default), `logistic` or `bayeselo`.
    #[serde(default = "normalized")]
    pub model: stats::EloModel,
    /// Pairs per SPRT update (fishtest's batch).
    #[serde(default = "one_u64")]
    pub batch_pairs: u64,
}

fn five_percent() -> f64 {
    0.05
}
fn normalized() -> stats::EloModel {
    stats::EloModel::Normalized
}
fn one_u64() -> u64 {
    1
}

/// SPSA settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpsaSection {
    /// Parameters, one per line: fishtest's `name,start,min,max,c_end,r_end` or OpenBench's
    /// `name,int|float,start,min,max,c_end,r_end`.
    pub params: String,
    /// Step decay exponent.
    #[serde(default = "alpha")]
    pub alpha: f64,
    /// Perturbation decay exponent.
    #[serde(default = "gamma")]
    pub gamma: f64,
    /// `A` as a fraction of the pairs.
    #[serde(default = "a_ratio")]
    pub a_ratio: f64,
}

fn alpha() -> f64 {
    0.602
}
fn gamma() -> f64 {
    0.101
}
fn a_ratio() -> f64 {
    0.1
}

/// Study settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudySection {
    /// The study row the others are compared with: a rule-set id (`luft`), or
    /// `variant/rule-set` (`latte/normal`) when the run mixes variants (see
    /// [`RunConfig::study_row`]).
    #[serde(default)]
    pub baseline: Option<String>,
    /// Stop the study early once every comparison with the baseline (White's score, draw
    /// rate, and per side the castled and rights-lost rates) has a 95% interval no wider than
    /// plus or minus this many percentage points; without it the study plays all its games.
    /// Interval widths depend on the counts, hardly on the estimates, so stopping on them
    /// does not bias the estimates the way stopping on a p-value would.
    #[serde(default)]
    pub stop_half_width: Option<f64>,
    /// Stop the study early once every comparison with the baseline is decided by its
    /// sequential test: higher, lower, or within `effect` of the baseline (see
    /// [`stats::sequential`]). With `stop_half_width` too, whichever comes first stops it.
    #[serde(default)]
    pub decide: Option<DecideSection>,
}

/// `[study.decide]`: the error rates and margin of the per-comparison sequential tests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideSection {
    /// Chance, per comparison, of declaring a difference that is not there.
    pub alpha: f64,
    /// Chance, per comparison, of declaring "no difference" where it is `effect` or more;
    /// `alpha` when not given.
    #[serde(default)]
    pub beta: Option<f64>,
    /// The smallest difference worth finding, in percentage points.
    pub effect: f64,
}

impl DecideSection {
    /// The checked rule, the effect turned from points into a fraction.
    pub fn rule(&self) -> Result<stats::sequential::DecisionRule, ConfigError> {
        stats::sequential::DecisionRule::new(
            self.alpha,
            self.beta.unwrap_or(self.alpha),
            self.effect / 100.0,
        )
        .map_err(|e| {
            let field = match e {
                stats::sequential::DecisionRuleError::ErrorRate { name, .. } => name,
                stats::sequential::DecisionRuleError::Effect(_) => "effect",
            };
            let message = match e {
                stats::sequential::DecisionRuleError::Effect(_) => format!(
                    "{} is not a difference in percentage points (more than 0, less than 100)",
                    self.effect
                ),
                other => other.to_string(),
            };
            ConfigError::new(format!("study.decide.{field}"), message)
        })
    }
}

/// Games each rule-set must have before a study may stop on interval width: below it the
/// large-sample intervals are not to be trusted.
pub const STUDY_STOP_MIN_GAMES: u64 = 200;

/// Known variants and their rule-sets.
pub const VARIANTS: &[(&str, &[&str])] = &[
    ("chess", &["", "normal"]),
    ("latte", &["normal", "luft", "tworooks", "both"]),
    ("secutor", &["extended", "orthodox"]),
];

impl RunConfig {
    /// Parse and validate a TOML config.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let de = toml::Deserializer::parse(text)
            .map_err(|e| ConfigError::new("(toml)", e.to_string().trim().to_string()))?;
        let config: Self = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.message().to_string();
            let field = if path == "." {
                "(top level)".into()
            } else {
                path
            };
            ConfigError::new(field, message)
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Pairs of the run.
    pub fn pairs(&self) -> u64 {
        self.games / 2
    }

    /// Whether PGNs are uploaded.
    pub fn upload_pgn(&self) -> bool {
        self.pgn.unwrap_or(self.kind != RunKind::Spsa)
    }

    /// The opponent.
    pub fn second(&self) -> &PlayerConfig {
        self.second.as_ref().unwrap_or(&self.first)
    }

    /// The SPSA parameters (kind `spsa`; validated by [`RunConfig::parse`]).
    pub fn spsa_config(&self) -> Result<Option<stats::spsa::SpsaConfig>, ConfigError> {
        let Some(s) = &self.spsa else { return Ok(None) };
        let params = stats::spsa::parse_params(&s.params)
            .map_err(|e| ConfigError::new("spsa.params", e.to_string()))?;
        let mut c = stats::spsa::SpsaConfig::new(params, self.pairs(), self.seed);
        c.alpha = s.alpha;
        c.gamma = s.gamma;
        c.big_a = (s.a_ratio * self.pairs() as f64).floor();
        stats::spsa::Spsa::new(c.clone())
            .map_err(|e| ConfigError::new("spsa.params", e.to_string()))?;
        Ok(Some(c))
    }

    /// The SPRT design (kind `sprt`).
    pub fn sprt_params(&self) -> Result<Option<stats::SprtParams>, ConfigError> {
        let Some(s) = &self.sprt else { return Ok(None) };
        stats::SprtParams::new(s.alpha, s.beta, s.elo0, s.elo1, s.model)
            .map(Some)
            .map_err(|e| ConfigError::new("sprt", e.to_string()))
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.name.trim().is_empty() {
            return Err(ConfigError::new("name", "must not be empty"));
        }
        if self.name.len() > 200 {
            return Err(ConfigError::new("name", "is longer than 200 bytes"));
        }
        if self.games > MAX_GAMES {
            return Err(ConfigError::new(
                "games",
                format!("must be at most {MAX_GAMES}, got {}", self.games),
            ));
        }
        if self.games == 0 || !self.games.is_multiple_of(2) {
            return Err(ConfigError::new(
                "games",
                format!(
                    "must be a positive even number (games come in pairs), got {}",
                    self.games
                ),
            ));
        }
        if self.throughput == 0 {
            return Err(ConfigError::new("throughput", "must be at least 1"));
        }
        if self.batch_seconds == 0 {
            return Err(ConfigError::new("batch_seconds", "must be at least 1"));
        }
        let per_move = [
            ("nodes", self.limits.nodes > 0),
            ("depth", self.limits.depth > 0),
            ("movetime_ms", self.limits.movetime_ms > 0),
        ];
        if self.limits.tc.is_some() {
            // A clock and a per-move limit would leave each worker to choose which one holds.
            // (nodes, depth and movetime_ms together stay allowed: stored runs have them, and
            // the worker has always taken the first of them that is set.)
            if let Some((name, _)) = per_move.iter().find(|(_, set)| *set) {
                return Err(ConfigError::new(
                    "limits.tc",
                    format!("a clock is the only limit of its games: remove limits.{name}"),
                ));
            }
        } else if !per_move.iter().any(|(_, set)| *set) {
            return Err(ConfigError::new(
                "limits",
                "set at least one of nodes, depth, movetime_ms, or a clock tc",
            ));
        }
        if self.variants.is_empty() {
            return Err(ConfigError::new("variants", "list at least one variant"));
        }
        for (i, v) in self.variants.iter().enumerate() {
            let Some((_, rulesets)) = VARIANTS.iter().find(|(name, _)| *name == v.variant) else {
                return Err(ConfigError::new(
                    format!("variants[{i}].variant"),
                    format!(
                        "unknown variant '{}' (expected chess, latte or secutor)",
                        v.variant
                    ),
                ));
            };
            if !rulesets.contains(&v.ruleset.as_str()) {
                let expected = rulesets
                    .iter()
                    .filter(|r| !r.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ");
                if v.ruleset.is_empty() {
                    return Err(ConfigError::new(
                        format!("variants[{i}].ruleset"),
                        format!(
                            "missing: {} needs a rule-set (one of: {expected})",
                            v.variant
                        ),
                    ));
                }
                return Err(ConfigError::new(
                    format!("variants[{i}].ruleset"),
                    format!(
                        "unknown rule-set '{}' for {} (expected one of: {expected})",
                        v.ruleset, v.variant,
                    ),
                ));
            }
            if v.weight == 0 || v.weight > MAX_WEIGHT {
                return Err(ConfigError::new(
                    format!("variants[{i}].weight"),
                    format!("must be between 1 and {MAX_WEIGHT}"),
                ));
            }
            check_book_name(&format!("variants[{i}].book"), &v.book)?;
        }
        if self.variants.len() > MAX_VARIANT_ENTRIES {
            return Err(ConfigError::new(
                "variants",
                format!("list at most {MAX_VARIANT_ENTRIES} entries"),
            ));
        }
        check_book_name("book", &self.book)?;
        check_player("first", &self.first)?;
        if let Some(second) = &self.second {
            check_player("second", second)?;
        }
        let need = |present: bool, section: &str| {
            if present {
                Ok(())
            } else {
                Err(ConfigError::new(
                    section,
                    format!(
                        "section [{section}] is required for kind = \"{}\"",
                        self.kind
                    ),
                ))
            }
        };
        match self.kind {
            RunKind::Sprt => {
                need(self.sprt.is_some(), "sprt")?;
                if let Some(s) = &self.sprt {
                    if s.batch_pairs == 0 {
                        return Err(ConfigError::new("sprt.batch_pairs", "must be at least 1"));
                    }
                    check_sprt(s)?;
                }
                self.sprt_params()?;
            }
            RunKind::Spsa => {
                need(self.spsa.is_some(), "spsa")?;
                if let Some(c) = self.spsa_config()? {
                    for (field, p) in [("first", &self.first), ("second", self.second())] {
                        if p.is_builtin() {
                            check_spsa_against_builtin(field, &c.params)?;
                        }
                    }
                }
            }
            RunKind::Study => {
                if self.second.is_some() {
                    return Err(ConfigError::new(
                        "second",
                        "a study plays one engine against itself; remove [second]",
                    ));
                }
                if let Some(Some(b)) = self.study.as_ref().map(|s| s.baseline.as_ref()) {
                    let rows = self.study_rows();
                    if !rows.contains(b) {
                        return Err(ConfigError::new(
                            "study.baseline",
                            format!(
                                "'{b}' is not one of this study's rule-sets (expected one of: {})",
                                rows.join(", ")
                            ),
                        ));
                    }
                }
                if let Some(study) = &self.study {
                    if let Some(decide) = &study.decide {
                        decide.rule()?;
                        if study.baseline.is_none() {
                            return Err(ConfigError::new(
                                "study.decide",
                                "deciding comparisons needs a baseline to compare with \
                                 (study.baseline)",
                            ));
                        }
                    }
                    if let Some(w) = study.stop_half_width {
                        if !(w > 0.0 && w <= 50.0) {
                            return Err(ConfigError::new(
                                "study.stop_half_width",
                                format!(
                                    "{w} is not a half-width in percentage points \
                                     (more than 0, at most 50)"
                                ),
                            ));
                        }
                        if study.baseline.is_none() {
                            return Err(ConfigError::new(
                                "study.stop_half_width",
                                "stopping on interval width needs a baseline to compare with \
                                 (study.baseline)",
                            ));
                        }
                    }
                }
            }
            RunKind::Match => {}
        }
        for (kind, present) in [
            (RunKind::Sprt, self.sprt.is_some()),
            (RunKind::Spsa, self.spsa.is_some()),
            (RunKind::Study, self.study.is_some()),
        ] {
            if present && self.kind != kind {
                return Err(ConfigError::new(
                    kind.as_str(),
                    format!(
                        "section [{kind}] does not apply to kind = \"{}\"",
                        self.kind
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The name of the study row (per rule-set figures, the baseline, comparisons) that pair
    /// `index` is counted under. It comes from the assignment, never from what a worker
    /// reports, and is canonical (chess's empty rule-set is `normal`): see [`Self::row_of`].
    pub fn study_row(&self, index: u64) -> String {
        self.row_of(self.entry_for_pair(index))
    }

    /// The study row of a variant entry: its rule-set id when the run plays one variant, and
    /// `variant/rule-set` when it mixes variants, whose rule-set ids can coincide (chess and
    /// Latte both have `normal`) and must not be counted as one game.
    pub fn row_of(&self, entry: &VariantEntry) -> String {
        // validate() refuses unplayable entries; for one, the raw names are what it was called.
        let (variant, ruleset) = match crate::facts::rules_of(&entry.variant, &entry.ruleset) {
            Some(rules) => (rules.variant().id(), rules.ruleset().id()),
            None => (entry.variant.as_str(), entry.ruleset.as_str()),
        };
        if self.mixes_variants() {
            format!("{variant}/{ruleset}")
        } else {
            ruleset.to_string()
        }
    }

    /// The run's study rows, each once, in the order of its variant entries.
    pub fn study_rows(&self) -> Vec<String> {
        let mut rows: Vec<String> = Vec::new();
        for row in self.variants.iter().map(|v| self.row_of(v)) {
            if !rows.contains(&row) {
                rows.push(row);
            }
        }
        rows
    }

    /// Whether the run's entries play more than one variant.
    pub fn mixes_variants(&self) -> bool {
        self.variants
            .iter()
            .any(|v| v.variant != self.variants[0].variant)
    }

    /// Which variant entry pair `index` plays: a smooth weighted round robin, so the entries
    /// are interleaved in proportion to their weights.
    pub fn entry_for_pair(&self, index: u64) -> &VariantEntry {
        &self.variants[self.slot_for_pair(index).0]
    }

    /// The opening a pair plays. Pairs are dealt to the variant entries in periods of
    /// `sum of weights` pairs; within period k an entry's j-th pair plays opening
    /// `k * max_weight + j`. So entries of equal weight (a study's rule-sets) play the same
    /// openings, and a difference between rule-sets is not a difference between books'
    /// positions.
    pub fn opening_for_pair(&self, index: u64) -> u64 {
        let total: u64 = self
            .variants
            .iter()
            .map(|v| u64::from(v.weight))
            .sum::<u64>()
            .max(1);
        let max_weight = self
            .variants
            .iter()
            .map(|v| u64::from(v.weight))
            .max()
            .unwrap_or(1)
            .max(1);
        let (_, occurrence) = self.slot_for_pair(index);
        (index / total) * max_weight + occurrence
    }

    /// The openings of a pair's two games: the same one with colours reversed, except in a
    /// study, where one engine plays itself and the reversed game would replay the first
    /// move for move: there the two games take consecutive openings of their own (and the
    /// rule-sets still share them).
    pub fn openings_for_pair(&self, index: u64) -> (u64, Option<u64>) {
        let o = self.opening_for_pair(index);
        if self.kind == RunKind::Study {
            (2 * o, Some(2 * o + 1))
        } else {
            (o, None)
        }
    }

    /// The entry of a pair, and how many earlier pairs of its period went to the same entry.
    fn slot_for_pair(&self, index: u64) -> (usize, u64) {
        let weights: Vec<u32> = self.variants.iter().map(|v| v.weight).collect();
        let slot = self.schedule.slot(&weights, index);
        (slot.entry, slot.occurrence)
    }
}

/// Most variant entries a run may list.
pub const MAX_VARIANT_ENTRIES: usize = 16;

/// Largest weight of a variant entry. With [`MAX_VARIANT_ENTRIES`], it bounds the period of
/// the pair schedule (16,000 pairs), which is laid out in memory once per run.
pub const MAX_WEIGHT: u32 = 1000;

/// Most games a run may plan (pair indices stay far inside the database's integers).
pub const MAX_GAMES: u64 = 2_000_000_000;

/// Largest |Elo| an SPRT bound may have: beyond it the test is meaningless and its arithmetic
/// overflows.
pub const MAX_SPRT_ELO: f64 = 1000.0;

fn check_sprt(s: &SprtSection) -> Result<(), ConfigError> {
    if s.model == stats::EloModel::BayesElo {
        return Err(ConfigError::new(
            "sprt.model",
            "bayeselo needs win/draw/loss counts, and the cluster counts game pairs \
             (pentanomial): use normalized or logistic",
        ));
    }
    for (field, v) in [("sprt.elo0", s.elo0), ("sprt.elo1", s.elo1)] {
        if !v.is_finite() || v.abs() > MAX_SPRT_ELO {
            return Err(ConfigError::new(
                field,
                format!("must be a number between -{MAX_SPRT_ELO} and {MAX_SPRT_ELO}, got {v}"),
            ));
        }
    }
    for (field, v) in [("sprt.alpha", s.alpha), ("sprt.beta", s.beta)] {
        if !(v > 0.0 && v < 0.5) {
            return Err(ConfigError::new(
                field,
                format!("must be above 0 and below 0.5, got {v}"),
            ));
        }
    }
    if s.batch_pairs > 1000 {
        return Err(ConfigError::new("sprt.batch_pairs", "must be at most 1000"));
    }
    Ok(())
}

/// A book is a file name in the workers' book directory: a plain name, never a path.
fn check_book_name(field: &str, name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Ok(());
    }
    let plain = name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if plain {
        Ok(())
    } else {
        Err(ConfigError::new(
            field,
            format!(
                "book {name:?} must be a plain file name in the workers' book directory \
                 (letters, digits, '.', '-', '_'; not starting with '.')"
            ),
        ))
    }
}

/// Whether `name` can name an external engine declared by workers.
pub fn valid_engine_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= proto::limits::ENGINE_NAME_BYTES
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn check_player(field: &str, p: &PlayerConfig) -> Result<(), ConfigError> {
    if p.name.len() > 64 {
        return Err(ConfigError::new(
            format!("{field}.name"),
            "is longer than 64 bytes",
        ));
    }
    if p.is_builtin() {
        if !p.sha256.is_empty() {
            return Err(ConfigError::new(
                format!("{field}.sha256"),
                "applies to external engines only",
            ));
        }
        return check_builtin_options(field, p);
    }
    if !valid_engine_name(&p.engine) {
        return Err(ConfigError::new(
            format!("{field}.engine"),
            format!(
                "{:?} is neither \"builtin\" nor an engine name workers declare with \
                 --engine NAME=PATH (letters, digits, '.', '-', '_'; at most {} bytes)",
                p.engine,
                proto::limits::ENGINE_NAME_BYTES
            ),
        ));
    }
    let hex = p.sha256.len() == 64
        && p.sha256
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
    if !p.sha256.is_empty() && !hex {
        return Err(ConfigError::new(
            format!("{field}.sha256"),
            "must be 64 lower-case hex digits (sha256sum of the engine's executable)",
        ));
    }
    if p.options.len() > 64 {
        return Err(ConfigError::new(
            format!("{field}.options"),
            "at most 64 options",
        ));
    }
    for (name, value) in &p.options {
        if name.len() > 64 || option_string(value).len() > 256 {
            return Err(ConfigError::new(
                format!("{field}.options.{name}"),
                "option names are at most 64 bytes and values at most 256",
            ));
        }
    }
    Ok(())
}

/// The built-in engine takes `Hash` (MiB) and its declared parameters, as integers within
/// their ranges: anything else would fail on every worker.
/// Checks `p`'s options as the built-in engine's (its parameters and `Hash`): for a
/// `builtin` player at create, and for a declared network file, which the built-in engine
/// plays, before a local run (`local::pins`).
pub(crate) fn check_builtin_options(field: &str, p: &PlayerConfig) -> Result<(), ConfigError> {
    for (name, value) in &p.options {
        check_builtin_option(&format!("{field}.options.{name}"), name, value)?;
    }
    Ok(())
}

fn check_builtin_option(field: &str, name: &str, value: &toml::Value) -> Result<(), ConfigError> {
    let int = match value {
        toml::Value::Integer(i) => Some(*i),
        toml::Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    if name.eq_ignore_ascii_case("hash") {
        return match int {
            Some(mib) if (1..=65_536).contains(&mib) => Ok(()),
            _ => Err(ConfigError::new(
                field,
                format!("Hash must be a whole number of MiB from 1 to 65536, got {value}"),
            )),
        };
    }
    let Some((_, spec)) = engine::params::Params::spec(name) else {
        return Err(ConfigError::new(
            field,
            format!(
                "the built-in engine has no option {name:?} (see `engine params` for its \
                 parameters; Hash is the only other option)"
            ),
        ));
    };
    match int {
        Some(v) if v >= i64::from(spec.min) && v <= i64::from(spec.max) => Ok(()),
        Some(v) => Err(ConfigError::new(
            field,
            format!(
                "{v} is outside {}'s range [{}, {}]",
                spec.name, spec.min, spec.max
            ),
        )),
        None => Err(ConfigError::new(
            field,
            format!("{} takes a whole number, got {value}", spec.name),
        )),
    }
}

/// SPSA parameters tuned on the built-in engine must be its parameters, integers, within its
/// ranges.
fn check_spsa_against_builtin(
    player: &str,
    params: &[stats::spsa::SpsaParam],
) -> Result<(), ConfigError> {
    for p in params {
        let field = "spsa.params";
        let Some((_, spec)) = engine::params::Params::spec(&p.name) else {
            return Err(ConfigError::new(
                field,
                format!(
                    "{player} is the built-in engine, which has no parameter {:?} (see \
                     `engine params`)",
                    p.name
                ),
            ));
        };
        if p.kind != stats::spsa::ParamKind::Int {
            return Err(ConfigError::new(
                field,
                format!("{}: the built-in engine's parameters are integers", p.name),
            ));
        }
        if p.min < f64::from(spec.min) || p.max > f64::from(spec.max) {
            return Err(ConfigError::new(
                field,
                format!(
                    "{}: range [{}, {}] goes outside the engine's [{}, {}]",
                    p.name, p.min, p.max, spec.min, spec.max
                ),
            ));
        }
    }
    Ok(())
}

/// Option value as the engine receives it.
pub fn option_string(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MATCH: &str = r#"
name = "m"
kind = "match"
games = 20
[limits]
nodes = 500
[[variants]]
variant = "latte"
ruleset = "both"
weight = 2
[[variants]]
variant = "secutor"
ruleset = "extended"
[first]
options = { Hash = 16 }
"#;

    #[test]
    fn parses_and_interleaves_variants() {
        let c = RunConfig::parse(MATCH).unwrap();
        assert_eq!(c.pairs(), 10);
        let seq: Vec<&str> = (0..6)
            .map(|i| c.entry_for_pair(i).variant.as_str())
            .collect();
        assert_eq!(
            seq,
            ["latte", "secutor", "latte", "latte", "secutor", "latte"]
        );
        assert!(c.upload_pgn());
    }

    #[test]
    fn errors_name_the_field() {
        let bad = MATCH.replace("games = 20", "games = 21");
        assert_eq!(RunConfig::parse(&bad).unwrap_err().field, "games");
        let bad = MATCH.replace("weight = 2", "weight = \"x\"");
        assert_eq!(
            RunConfig::parse(&bad).unwrap_err().field,
            "variants[0].weight"
        );
        let bad = MATCH.replace("ruleset = \"both\"", "ruleset = \"castle\"");
        assert_eq!(
            RunConfig::parse(&bad).unwrap_err().field,
            "variants[0].ruleset"
        );
        let bad = MATCH.replace("kind = \"match\"", "kind = \"sprt\"");
        assert_eq!(RunConfig::parse(&bad).unwrap_err().field, "sprt");
        let bad = MATCH.replace("nodes = 500", "nodez = 500");
        assert_eq!(RunConfig::parse(&bad).unwrap_err().field, "limits.nodez");
        let bad = format!("{MATCH}\n[spsa]\nparams = \"A,1,2\"\n");
        assert_eq!(RunConfig::parse(&bad).unwrap_err().field, "spsa");
        let bad =
            MATCH.replace("kind = \"match\"", "kind = \"spsa\"") + "\n[spsa]\nparams = \"A,1,2\"\n";
        let e = RunConfig::parse(&bad).unwrap_err();
        assert_eq!(e.field, "spsa.params");
        assert!(e.message.contains("line 1"), "{e}");
    }

    fn with_limits(limits: &str) -> String {
        MATCH.replace("nodes = 500", limits)
    }

    #[test]
    fn limits_tc_is_a_clock_in_seconds() {
        for (tc, base_ms, inc_ms) in [
            ("10+0.1", 10_000, 100),
            ("60", 60_000, 0),
            ("0.2+0.01", 200, 10),
            // 0.3 is 0.29999... as a float: rounded to the nearest millisecond, not truncated.
            ("0.3+0.3", 300, 300),
            (" 1 + 0 ", 1_000, 0),
            ("3600+60", 3_600_000, 60_000),
        ] {
            let c = RunConfig::parse(&with_limits(&format!("tc = \"{tc}\"")))
                .unwrap_or_else(|e| panic!("{tc}: {e}"));
            assert_eq!(c.limits.tc, Some(Clock { base_ms, inc_ms }), "{tc}");
        }
        let c = RunConfig::parse(&with_limits("tc = \"10+0.1\"\nmax_plies = 200")).unwrap();
        let clock = c.limits.tc.expect("clock");
        assert_eq!(clock.to_string(), "10+0.1");
        assert_eq!(
            clock.time_control(),
            "10+0.1".parse::<worker::limits::TimeControl>().unwrap()
        );
        // Written back as configs have it (a plan's tuned run is written from its table).
        let again = RunConfig::parse(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(again, c);
        assert!(toml::to_string(&c).unwrap().contains("tc = \"10+0.1\""));
        // Without a clock nothing is written for it.
        let plain = RunConfig::parse(MATCH).unwrap();
        assert!(!toml::to_string(&plain).unwrap().contains("tc ="));
    }

    #[test]
    fn a_bad_limits_tc_is_named() {
        for (bad, hint) in [
            ("\"x\"", "not a clock"),
            ("\"\"", "not a clock"),
            ("\"0+1\"", "not a clock"),
            ("\"-5+1\"", "not a clock"),
            ("\"10+-1\"", "not a clock"),
            ("\"nan+0\"", "not a clock"),
            ("\"inf+0\"", "not a clock"),
            ("\"10+inf\"", "not a clock"),
            ("\"10+nan\"", "not a clock"),
            ("\"1e300+0\"", "not a clock"),
            ("\"10+0.1+1\"", "not a clock"),
            ("\"10s+0.1s\"", "not a clock"),
            ("\"nodes=500\"", "limits.nodes"),
            ("\"movetime=0.5\"", "limits.movetime_ms"),
            ("\"0.0004+0\"", "at least 0.001"),
            ("\"3600.5+0\"", "at most 3600"),
            ("\"86400+0\"", "at most 3600"),
            ("\"10+60.5\"", "at most 60"),
            ("10", "string"),
            ("{ base = 10 }", "string"),
        ] {
            let e = RunConfig::parse(&with_limits(&format!("tc = {bad}"))).unwrap_err();
            assert_eq!(e.field, "limits.tc", "{bad}: {e:?}");
            assert!(e.message.contains(hint), "{bad}: {e:?}");
        }
    }

    #[test]
    fn limits_tc_is_the_only_limit_when_set() {
        for other in ["nodes = 500", "depth = 8", "movetime_ms = 100"] {
            let e =
                RunConfig::parse(&with_limits(&format!("tc = \"10+0.1\"\n{other}"))).unwrap_err();
            assert_eq!(e.field, "limits.tc", "{other}: {e:?}");
            let name = other.split(' ').next().unwrap();
            assert!(e.message.contains(&format!("limits.{name}")), "{e:?}");
        }
        // No limit at all is still refused, naming the clock among the choices.
        let e = RunConfig::parse(&with_limits("max_plies = 100")).unwrap_err();
        assert_eq!(e.field, "limits");
        assert!(e.message.contains("tc"), "{e:?}");
        // The per-move limits together stay as they were (stored runs have them).
        assert!(RunConfig::parse(&with_limits("nodes = 500\ndepth = 8\nmovetime_ms = 50")).is_ok());
    }
}

#[cfg(test)]
mod opening_tests {
    use super::*;

    fn study(weights: &[u32]) -> RunConfig {
        let mut text =
            String::from("name = \"s\"\nkind = \"study\"\ngames = 40\n[limits]\nnodes = 10\n");
        for (i, w) in weights.iter().enumerate() {
            let r = ["normal", "luft", "tworooks", "both"][i];
            text.push_str(&format!(
                "[[variants]]\nvariant = \"latte\"\nruleset = \"{r}\"\nweight = {w}\n"
            ));
        }
        text.push_str("[first]\nengine = \"builtin\"\n");
        RunConfig::parse(&text).expect("valid")
    }

    #[test]
    fn a_missing_or_unknown_rule_set_is_named_as_such() {
        let text = |ruleset: &str| {
            format!(
                "name = \"s\"\nkind = \"match\"\ngames = 4\n[limits]\nnodes = 10\n\
                 [[variants]]\nvariant = \"secutor\"\n{ruleset}[first]\nengine = \"builtin\"\n\
                 [second]\nengine = \"builtin\"\n"
            )
        };
        let e = RunConfig::parse(&text("")).expect_err("no rule-set");
        assert_eq!(e.field, "variants[0].ruleset");
        assert_eq!(
            e.message,
            "missing: secutor needs a rule-set (one of: extended, orthodox)"
        );
        let e = RunConfig::parse(&text("ruleset = \"luft\"\n")).expect_err("Latte's");
        assert_eq!(
            e.message,
            "unknown rule-set 'luft' for secutor (expected one of: extended, orthodox)"
        );
        // Chess has one rule-set: it may be left out.
        let chess = text("").replace("secutor", "chess");
        RunConfig::parse(&chess).expect("chess without a rule-set");
    }

    #[test]
    fn equal_weights_play_the_same_openings_under_every_ruleset() {
        let c = study(&[1, 1, 1, 1]);
        let mut by_ruleset: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for i in 0..40 {
            by_ruleset
                .entry(c.entry_for_pair(i).ruleset.clone())
                .or_default()
                .push(c.opening_for_pair(i));
        }
        let lists: Vec<&Vec<u64>> = by_ruleset.values().collect();
        assert_eq!(lists.len(), 4);
        assert!(lists.iter().all(|l| *l == lists[0]), "{by_ruleset:?}");
        assert_eq!(*lists[0], (0..10).collect::<Vec<u64>>());
    }

    #[test]
    fn a_study_pair_plays_two_openings_and_the_rule_sets_share_them() {
        let c = study(&[1, 1]);
        let mut by_ruleset: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for i in 0..20 {
            let (a, b) = c.openings_for_pair(i);
            // One engine against itself from one opening with colours reversed replays the
            // game: the second game needs an opening of its own.
            assert_eq!(b, Some(a + 1));
            let list = by_ruleset
                .entry(c.entry_for_pair(i).ruleset.clone())
                .or_default();
            list.extend([a, a + 1]);
        }
        let lists: Vec<&Vec<u64>> = by_ruleset.values().collect();
        assert!(lists.iter().all(|l| *l == lists[0]), "{by_ruleset:?}");
        let mut all = lists[0].clone();
        all.dedup();
        assert_eq!(
            all.len(),
            lists[0].len(),
            "an opening played twice: {all:?}"
        );
        let mut m = c.clone();
        m.kind = RunKind::Match;
        assert_eq!(m.openings_for_pair(7), (m.opening_for_pair(7), None));
    }

    #[test]
    fn weighted_entries_get_distinct_openings() {
        let c = study(&[2, 1]);
        let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for i in 0..30 {
            seen.entry(c.entry_for_pair(i).ruleset.clone())
                .or_default()
                .push(c.opening_for_pair(i));
        }
        for list in seen.values() {
            let mut sorted = list.clone();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                list.len(),
                "an entry repeats an opening: {list:?}"
            );
        }
    }

    #[test]
    fn study_stop_half_width_is_checked_by_name() {
        let base = "name = \"s\"\nkind = \"study\"\ngames = 40\n[limits]\nnodes = 10\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"luft\"\n\
                    [first]\nengine = \"builtin\"\n";
        let ok = format!("{base}[study]\nbaseline = \"normal\"\nstop_half_width = 1.5\n");
        assert_eq!(
            RunConfig::parse(&ok)
                .unwrap()
                .study
                .unwrap()
                .stop_half_width,
            Some(1.5)
        );
        for bad in ["0", "-1", "75", "nan"] {
            let text = format!("{base}[study]\nbaseline = \"normal\"\nstop_half_width = {bad}\n");
            let e = RunConfig::parse(&text).unwrap_err();
            assert_eq!(e.field, "study.stop_half_width", "{bad}: {e:?}");
        }
        let no_baseline = format!("{base}[study]\nstop_half_width = 1.5\n");
        let e = RunConfig::parse(&no_baseline).unwrap_err();
        assert_eq!(e.field, "study.stop_half_width");
        assert!(e.message.contains("baseline"), "{e:?}");
    }

    #[test]
    fn study_decide_is_checked_by_name() {
        let base = "name = \"s\"\nkind = \"study\"\ngames = 40\n[limits]\nnodes = 10\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
                    [[variants]]\nvariant = \"latte\"\nruleset = \"luft\"\n\
                    [first]\nengine = \"builtin\"\n[study]\nbaseline = \"normal\"\n";
        let ok = format!("{base}[study.decide]\nalpha = 0.05\neffect = 3\n");
        let rule = RunConfig::parse(&ok)
            .unwrap()
            .study
            .unwrap()
            .decide
            .unwrap()
            .rule()
            .unwrap();
        assert_eq!((rule.alpha, rule.beta, rule.effect), (0.05, 0.05, 0.03));
        for (bad, field) in [
            ("alpha = 0\neffect = 3", "study.decide.alpha"),
            ("alpha = 0.05\nbeta = 0.9\neffect = 3", "study.decide.beta"),
            ("alpha = 0.05\neffect = 0", "study.decide.effect"),
            ("alpha = 0.05\neffect = 100", "study.decide.effect"),
            ("alpha = 0.05\neffect = nan", "study.decide.effect"),
            ("alpha = 0.05", "study.decide"),
            ("alpha = 0.05\neffect = 3\ngamma = 1", "study.decide.gamma"),
        ] {
            let e = RunConfig::parse(&format!("{base}[study.decide]\n{bad}\n")).unwrap_err();
            assert_eq!(e.field, field, "{bad}: {e:?}");
        }
        let e = RunConfig::parse(
            &format!("{base}[study.decide]\nalpha = 0.05\neffect = 3\n")
                .replace("baseline = \"normal\"\n", ""),
        )
        .unwrap_err();
        assert_eq!(e.field, "study.decide", "{e:?}");
    }
}
