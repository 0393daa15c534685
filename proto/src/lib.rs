//! The cluster's gRPC API: package `cluster.v1` (see `proto/cluster/v1/cluster.proto`, which
//! documents every rpc and field).
//!
//! The code is generated at build time by `protox` and `tonic-prost-build`, so no system
//! `protoc` is needed.
//!
//! ```
//! use proto::v1::{worker_service_client::WorkerServiceClient, RegisterRequest};
//! let req = RegisterRequest { name: "box-1".into(), cores: 8, ..Default::default() };
//! assert_eq!(req.cores, 8);
//! # let _ = std::marker::PhantomData::<WorkerServiceClient<tonic::transport::Channel>>;
//! ```
#![forbid(unsafe_code)]

/// Version 1 of the API.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod v1 {
    tonic::include_proto!("cluster.v1");
}

/// The names a worker declares in `RegisterRequest.features`.
pub mod features {
    /// Game clocks: the worker plays `GameSettings.clock_base_ms`/`clock_inc_ms`.
    pub const CLOCK: &str = "clock";
    /// Every feature this build of the worker implements.
    pub const ALL: &[&str] = &[CLOCK];

    /// [`ALL`] as a registration carries it.
    pub fn declared() -> Vec<String> {
        ALL.iter().map(|f| f.to_string()).collect()
    }
}

/// Largest message either side accepts, in bytes (a lease report with PGNs stays far below).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The size limits of the API, as the proto's header documents them. The coordinator refuses
/// anything over them; the worker keeps its reports within them, and refuses a lease whose
/// clock is over the clock limits.
pub mod limits {
    /// Longest worker label (registration `name`), bytes.
    pub const NAME_BYTES: usize = 64;
    /// Longest worker version string, bytes.
    pub const VERSION_BYTES: usize = 32;
    /// Longest engine name, bytes.
    pub const ENGINE_NAME_BYTES: usize = 64;
    /// Longest variant or rule-set id in a report, bytes.
    pub const RULES_ID_BYTES: usize = 32;
    /// Longest termination id, bytes.
    pub const TERMINATION_BYTES: usize = 32;
    /// Longest castling kind id, bytes.
    pub const CASTLING_KIND_BYTES: usize = 16;
    /// Longest lease failure reason, bytes.
    pub const FAILURE_BYTES: usize = 512;
    /// Longest run config, bytes.
    pub const CONFIG_BYTES: usize = 64 * 1024;
    /// Most variants in a registration.
    pub const VARIANTS: usize = 8;
    /// Most engines in a registration.
    pub const ENGINES: usize = 16;
    /// Most features in a registration.
    pub const FEATURES: usize = 16;
    /// Longest feature name, bytes.
    pub const FEATURE_BYTES: usize = 32;
    /// Most live registrations per token.
    pub const REGISTRATIONS_PER_TOKEN: usize = 64;
    /// Most pairs in one report (and in one lease).
    pub const PAIRS_PER_REPORT: usize = 256;
    /// Most castling moves in one game.
    pub const CASTLINGS_PER_GAME: usize = 4;
    /// Most milestones one game may carry. An honest game has at most four (one rights-lost
    /// and one king-corner per side); the cap bounds what a hostile report makes the
    /// coordinator check and store per game.
    pub const MILESTONES_PER_GAME: usize = 8;
    /// Longest game, plies.
    pub const PLIES: u32 = 100_000;
    /// Largest compressed PGN of a pair, bytes.
    pub const PGN_GZ_BYTES: usize = 256 * 1024;
    /// Largest inflated PGN of a pair, bytes.
    pub const PGN_TEXT_BYTES: usize = 4 * 1024 * 1024;
    /// Largest report number.
    pub const MAX_SEQ: u64 = i64::MAX as u64;
    /// Largest base of a game clock (`GameSettings.clock_base_ms`), milliseconds: an hour.
    /// Run configs refuse more, and a worker refuses a lease over it, so no clock arithmetic
    /// (the runner's, an engine's time management) meets an absurd number.
    pub const CLOCK_BASE_MS: u64 = 3_600_000;
    /// Largest clock increment (`GameSettings.clock_inc_ms`), milliseconds: a minute.
    pub const CLOCK_INC_MS: u64 = 60_000;
}
