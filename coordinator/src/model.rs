//! The coordinator's domain vocabulary: run states, what workers declare, what they report,
//! and the figures a run shows. Plain data: no storage, no scheduling.

use crate::config::RunKind;
use crate::ledger::{LeaseRecord, RunId};
use crate::residual;
use serde::{Deserialize, Serialize};
use stats::study::{CastlingEvent, Milestone, Outcome};
use std::collections::BTreeMap;
use thiserror::Error;

/// Timing settings.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Lease lifetime without a heartbeat, ms.
    pub lease_timeout_ms: u64,
    /// Heartbeat interval suggested to workers, ms.
    pub heartbeat_interval_ms: u64,
    /// How long an idle worker waits before asking again, ms.
    pub idle_retry_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            lease_timeout_ms: 45_000,
            heartbeat_interval_ms: 15_000,
            idle_retry_ms: 5_000,
        }
    }
}

/// Run lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Handing out pairs.
    Active,
    /// Paused by an operator (or by itself after repeated lease failures).
    Paused,
    /// Stopped by an operator.
    Stopped,
    /// Done.
    Finished,
}

/// A stored run status that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown run status {0:?} in the database")]
pub struct UnknownStatus(pub String);

impl RunStatus {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Paused => "paused",
            Self::Stopped => "stopped",
            Self::Finished => "finished",
        }
    }

    /// Inverse of [`RunStatus::as_str`]; anything else is an error, never a default (a
    /// corrupt row must not bring a stopped run back to life).
    pub fn parse(s: &str) -> Result<Self, UnknownStatus> {
        match s {
            "active" => Ok(Self::Active),
            "paused" => Ok(Self::Paused),
            "stopped" => Ok(Self::Stopped),
            "finished" => Ok(Self::Finished),
            other => Err(UnknownStatus(other.to_string())),
        }
    }

    /// Whether the run is over.
    pub fn is_over(self) -> bool {
        matches!(self, Self::Stopped | Self::Finished)
    }
}

/// An external engine a worker declares (`worker --engine NAME=PATH`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineDecl {
    /// Name runs refer to.
    pub name: String,
    /// SHA-256 of the executable, lower-case hex.
    pub sha256: String,
    /// `bench` node count (0: unknown).
    #[serde(default)]
    pub bench_signature: u64,
    /// When the file is a network file of the worker's own engine, the game its network
    /// evaluates (a variant id, checked at registration); empty for a program.
    #[serde(default)]
    pub network_variant: String,
}

impl EngineDecl {
    /// Whether this engine can play every game of `variants`: a program can be asked to, a
    /// network only its own game.
    pub fn plays<'a>(&self, mut variants: impl Iterator<Item = &'a str>) -> bool {
        self.network_variant.is_empty() || variants.all(|v| v == self.network_variant)
    }
}

/// What a worker said about itself at registration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// Machine label (not an identity: the token is).
    pub name: String,
    /// Cores.
    pub cores: u32,
    /// Memory, MiB.
    pub memory_mb: u64,
    /// Software version.
    pub version: String,
    /// Engine bench signature.
    pub bench_signature: u64,
    /// Variants it plays (empty: all).
    pub variants: Vec<String>,
    /// External engines it declared.
    #[serde(default)]
    pub engines: Vec<EngineDecl>,
    /// Features beyond the first release of the API it implements (`proto::features`).
    #[serde(default)]
    pub features: Vec<String>,
}

/// One game as reported (what studies and statistics need).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameFacts {
    /// Result from White's view.
    pub outcome: Outcome,
    /// Whether `first` had White.
    pub first_is_white: bool,
    /// Why the game ended.
    pub termination: String,
    /// Plies.
    pub plies: u32,
    /// Castling moves.
    pub castlings: Vec<CastlingEvent>,
    /// Rule-set.
    pub ruleset: String,
    /// Variant (checked against the pair's; not stored twice).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub variant: String,
    /// What happened to each side's king that castling studies ask about. Stored facts are
    /// JSON: rows written before milestones were reported have none and still load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub milestones: Vec<Milestone>,
}

/// One pair as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairReport {
    /// Pair index.
    pub index: u64,
    /// Its two games.
    pub games: Vec<GameFacts>,
    /// gzip PGN (may be empty).
    pub pgn_gz: Vec<u8>,
}

/// A lease as handed to a worker.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The lease.
    pub lease: LeaseRecord,
    /// The run's config.
    pub config: crate::config::RunConfig,
    /// Per-pair work.
    pub pairs: Vec<PairWork>,
}

/// One pair of a grant.
#[derive(Debug, Clone)]
pub struct PairWork {
    /// Pair index.
    pub index: u64,
    /// Variant.
    pub variant: String,
    /// Rule-set.
    pub ruleset: String,
    /// Book.
    pub book: String,
    /// Seed.
    pub seed: u64,
    /// Options of `first` for this pair.
    pub first_options: BTreeMap<String, String>,
    /// Options of `second` for this pair.
    pub second_options: BTreeMap<String, String>,
}

/// Answer to a submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmitOutcome {
    /// Already committed before.
    pub duplicate: bool,
    /// Newly counted pairs.
    pub accepted: u32,
    /// Pairs of the lease counted so far.
    pub reported: u32,
    /// Whether to go on with the lease.
    pub continue_lease: bool,
}

/// Answer to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseOutcome {
    /// Pairs that went back to the queue.
    pub returned: u32,
    /// How long the worker should wait before asking again (after a failure), ms.
    pub retry_after_ms: u64,
}

/// A run's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Id.
    pub id: RunId,
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: RunKind,
    /// Status.
    pub status: RunStatus,
    /// Priority.
    pub priority: i32,
    /// Pairs planned.
    pub pairs_total: u64,
    /// Pairs reported.
    pub pairs_done: u64,
    /// Pairs leased.
    pub pairs_leased: u64,
    /// Created, ms.
    pub created_ms: u64,
    /// Why it ended, or why it paused itself.
    pub finish_reason: String,
}

/// One worker's (token's) share of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerShare {
    /// Token name.
    pub name: String,
    /// Machine labels seen under the token.
    pub labels: Vec<String>,
    /// Pentanomial.
    pub pentanomial: [u64; 5],
    /// Residual test.
    pub residual: residual::Residual,
    /// Excluded.
    pub excluded: bool,
}

/// The state of a run's SPRT.
#[derive(Debug, Clone, PartialEq)]
pub struct SprtFigures {
    /// Log-likelihood ratio over the counted prefix.
    pub llr: f64,
    /// Lower (reject) bound.
    pub lower: f64,
    /// Upper (accept) bound.
    pub upper: f64,
    /// Continue, accepted or rejected.
    pub state: stats::SprtState,
    /// The test's design.
    pub params: stats::SprtParams,
    /// Pairs counted by the test.
    pub counted_pairs: u64,
}

/// One SPSA parameter's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct SpsaRow {
    /// Option name.
    pub name: String,
    /// Current value.
    pub value: f64,
    /// Start value.
    pub start: f64,
    /// Lower limit.
    pub min: f64,
    /// Upper limit.
    pub max: f64,
    /// Pairs applied so far.
    pub iterations: u64,
}

/// A run's figures.
#[derive(Debug, Clone)]
pub struct Detail {
    /// Summary.
    pub summary: Summary,
    /// Config text.
    pub config_toml: String,
    /// Pentanomial of the counted pairs.
    pub pentanomial: [u64; 5],
    /// W, D, L of `first`.
    pub wdl: [u64; 3],
    /// Elo (none before the first pair).
    pub elo: Option<stats::EloEstimate>,
    /// nElo.
    pub nelo: Option<stats::NeloEstimate>,
    /// SPRT runs.
    pub sprt: Option<SprtFigures>,
    /// SPSA runs.
    pub spsa: Vec<SpsaRow>,
    /// Study.
    pub study: Option<stats::study::Study>,
    /// Workers.
    pub workers: Vec<WorkerShare>,
    /// `first`'s results per study row, when the run has more than one (empty otherwise).
    pub by_row: Vec<RowFigures>,
}

/// `first`'s results and Elo under one study row.
#[derive(Debug, Clone)]
pub struct RowFigures {
    /// The row (`variant/rule-set` in runs that mix variants).
    pub row: String,
    /// Pentanomial of the row's pairs.
    pub pentanomial: [u64; 5],
    /// W, D, L of `first`.
    pub wdl: [u64; 3],
    /// Elo (none when the row's results cannot give one, e.g. before its first pair).
    pub elo: Option<stats::EloEstimate>,
}

/// Counters for metrics.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Games counted since start.
    pub games: u64,
    /// Leases expired since start.
    pub leases_expired: u64,
    /// Commits.
    pub commits: u64,
    /// Sum of commit latencies, seconds.
    pub commit_seconds: f64,
    /// Reports refused (malformed, hostile, over a limit) since start.
    pub reports_refused: u64,
    /// Lease failures reported by workers since start.
    pub lease_failures: u64,
    /// Operations run on the core thread since start.
    pub calls: u64,
    /// Group commits (each made several operations durable at once).
    pub batches: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_status_round_trips_and_refuses_unknown_names() {
        for s in [
            RunStatus::Active,
            RunStatus::Paused,
            RunStatus::Stopped,
            RunStatus::Finished,
        ] {
            assert_eq!(RunStatus::parse(s.as_str()), Ok(s));
        }
        // A corrupt row must not read as `active`.
        assert!(RunStatus::parse("stoped").is_err());
        assert!(RunStatus::parse("").is_err());
    }

    #[test]
    fn stored_facts_without_milestones_still_load() {
        // A row as written before milestones were kept.
        let old = r#"{"outcome":"draw","first_is_white":true,"termination":"threefold","plies":80,"castlings":[{"side":"white","kind":"king","move_number":9}],"ruleset":"normal"}"#;
        let g: GameFacts = serde_json::from_str(old).expect("old row loads");
        assert!(g.milestones.is_empty());
        assert_eq!(g.castlings.len(), 1);
        // Facts without milestones are stored as before, so old readers read new rows.
        assert!(!serde_json::to_string(&g)
            .expect("json")
            .contains("milestones"));
    }

    #[test]
    fn milestones_are_stored_under_their_ids() {
        use stats::study::{MilestoneKind, Side};
        let g = GameFacts {
            outcome: Outcome::WhiteWin,
            first_is_white: false,
            termination: "checkmate".into(),
            plies: 61,
            castlings: Vec::new(),
            ruleset: "normal".into(),
            variant: String::new(),
            milestones: vec![Milestone {
                side: Side::Black,
                kind: MilestoneKind::RightsLostRookCaptured,
                move_number: 12,
            }],
        };
        let json = serde_json::to_string(&g).expect("json");
        assert!(
            json.contains(r#""kind":"rights-lost-rook-captured""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<GameFacts>(&json).expect("loads"), g);
    }
}

/// A registered worker as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerView {
    /// Registration id.
    pub id: u64,
    /// Its token's name: the identity figures go by.
    pub token: String,
    /// Machine label.
    pub label: String,
    /// Cores declared.
    pub cores: u32,
    /// Software version.
    pub version: String,
    /// Variants it plays (empty: all).
    pub variants: Vec<String>,
    /// External engines declared (a network file with its game: `cand (latte network)`).
    pub engines: Vec<String>,
    /// Last call, Unix ms (none since the coordinator started).
    pub last_seen_ms: Option<u64>,
    /// Games reported in about the last minute.
    pub games_per_minute: f64,
    /// Active leases held.
    pub leases: u32,
    /// Game slots of those leases.
    pub slots: u64,
    /// Runs in which its token's residual is flagged.
    pub flagged_runs: Vec<u64>,
}

/// An active lease as a run page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseView {
    /// Lease id.
    pub id: u64,
    /// Worker's machine label.
    pub worker: String,
    /// Worker's token name.
    pub token: String,
    /// Pairs handed out.
    pub pairs: u64,
    /// Pairs reported.
    pub reported: u64,
    /// Issued, Unix ms.
    pub started_ms: u64,
    /// Deadline, Unix ms.
    pub deadline_ms: u64,
}
