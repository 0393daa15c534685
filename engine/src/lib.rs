//! Rules, move generation and (later) search for `chess`, `latte` and `secutor`.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod bench;
pub mod board8;
pub mod dispatch;
pub mod epd;
pub mod error;
pub mod eval;
pub mod fen_fields;
pub mod game;
pub mod gustavian;
pub mod notation;
pub mod params;
pub mod params_file;
pub mod perft;
pub mod position;
pub mod san;
pub mod search;
pub mod suite;
pub mod tune;
pub mod types;
pub mod uci;
pub mod variant;

pub use error::{FenError, MoveError, RulesError};
pub use game::{Game, Outcome};
pub use position::{MoveInfo, MoveList, Position, SquareName, MAX_MOVES};
pub use types::{ByColor, Castle, CastleSide, CastleStyle, Color, Piece, Role};
pub use variant::{Geometry, Rules, Ruleset, Variant};
