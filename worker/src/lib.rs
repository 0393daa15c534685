//! The worker core: plays engine-vs-engine games in `chess`, `latte` and `secutor`.
//!
//! * [`runner`] plays one game between two [`player::Player`]s from a start position under a
//!   [`limits::TimeControl`], ending it by the rules, by [`adjudication`], or by a player's
//!   failure (crash, hang, illegal move, flag fall), and records every move in a
//!   [`record::GameRecord`];
//! * [`player`] has our engine in process ([`player::internal`]) and any UCI engine process
//!   ([`player::uci`]), both built from a [`player::PlayerSpec`];
//! * [`pair`] plays one opening twice with colours reversed and returns a serialisable
//!   [`record::PairResult`]: the unit of work of the cluster;
//! * [`matches`](mod@matches) runs many pairs concurrently on blocking threads and streams their results;
//! * [`book`] reads and generates opening books, [`pgn`] writes and reads PGN;
//! * [`label`] relabels positions by an engine's evaluation, for tuning;
//! * [`cli`] is the `worker` command line.
//!
//! ```no_run
//! use worker::{limits::TimeControl, pair, player::PlayerSpec, runner::GameConfig};
//! let rules = engine::Rules::parse("latte", Some("both")).expect("known rules");
//! let spec = pair::PairSpec {
//!     rules,
//!     opening_fen: rules.start_fen().to_string(),
//!     players: [PlayerSpec::internal("a"), PlayerSpec::internal("b")],
//!     game: GameConfig::new(TimeControl::Nodes(1000)),
//!     pair_index: 0,
//!     seed: 1,
//!     pgn: None,
//! };
//! let result = pair::play_pair(&spec).expect("valid opening");
//! println!("{}", serde_json::to_string(&result).expect("serialisable"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod adjudication;
pub mod bench;
pub mod book;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod label;
pub mod limits;
pub mod matches;
pub mod pair;
pub mod pgn;
pub mod player;
pub mod positions;
pub mod record;
pub mod runner;
pub mod usage;

pub use error::WorkerError;
