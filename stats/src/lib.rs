//! Statistics for distributed engine testing, numerically equal to fishtest's.
//!
//! * [`elo`]: logistic Elo, its 95% interval and LOS (`stat_util.get_elo`);
//! * [`nelo`]: normalised Elo and its interval (fishtest's result pages);
//! * [`llr`](mod@llr): the generalised SPRT log-likelihood ratio in the normalised, logistic and
//!   BayesElo models (`LLRcalc.py`);
//! * [`sprt`]: bounds, decisions and the dynamic overshoot correction (`update_SPRT`);
//!   [`ordered`] feeds it in pair-index order so that early-finishing games cannot bias a stop;
//! * [`sprt_elo`](mod@sprt_elo): the median-unbiased Elo of an SPRT run (`sprt.py`, `brownian.py`);
//! * [`spsa`]: SPSA tuning as fishtest does it, plus fixes its users asked for;
//! * [`study`]: per-rule-set figures for variant studies;
//! * [`sequential`]: per-comparison sequential decisions that let a study stop early;
//! * [`vectors`]: checking the shared fishtest reference vectors.
//!
//! The crate does no I/O: callers pass counts, records or file contents.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod brent;
mod brownian;
pub mod elo;
pub mod error;
pub mod llr;
pub mod nelo;
pub mod normal;
pub mod ordered;
mod pdf;
pub mod results;
pub mod sequential;
pub mod sprt;
pub mod sprt_elo;
pub mod spsa;
pub mod study;
pub mod vectors;

pub use elo::{elo_from_score, logistic_elo, score_from_elo, EloEstimate};
pub use error::StatsError;
pub use llr::{llr, EloModel};
pub use nelo::{normalized_elo, NeloEstimate};
pub use ordered::{OrderedSprt, OrderedSprtError};
pub use results::{GameResult, PairScore, Pentanomial, Results, Trinomial};
pub use sprt::{Sprt, SprtParams, SprtState};
pub use sprt_elo::{sprt_elo, SprtElo};
