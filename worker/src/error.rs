//! Errors of the worker library. Each message names the bad input (the file, the line, the
//! token) so that a user can find it; the binary prints them and exits with status 2.

use std::path::PathBuf;

use engine::error::{FenError, RulesError};
use engine::params::ParamError;
use thiserror::Error;

/// Why a worker operation could not start or go on.
#[derive(Debug, Error)]
pub enum WorkerError {
    /// Unknown variant or rule-set, or one that does not fit the other.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// A FEN that does not describe a legal position of the variant.
    #[error("{context}: {source}")]
    Fen {
        /// Where the FEN came from.
        context: String,
        /// What is wrong with it.
        source: FenError,
    },
    /// A book file that does not exist or cannot be read.
    #[error("cannot read book {path}: {source}")]
    BookUnreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No book is shipped for these rules and none was given.
    #[error("no opening book for {0}; give one with --book FILE")]
    MissingBook(String),
    /// A book line that is not a position of the variant.
    #[error("book {path}, line {line}: {detail}")]
    BookLine {
        /// The file (or built-in book name).
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A book without a single position.
    #[error("book {0} has no positions")]
    EmptyBook(String),
    /// A parameters file that cannot be read.
    #[error("cannot read parameters file {path}: {source}")]
    ParamsUnreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A malformed or out-of-range entry of a parameters file.
    #[error("parameters file {path}{}: {detail}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    ParamsFile {
        /// The file.
        path: PathBuf,
        /// 1-based line number, when the file is a list of lines.
        line: Option<usize>,
        /// What is wrong.
        detail: String,
    },
    /// A parameter assignment refused by the engine.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A network file (`net=FILE`) that cannot be read or does not fit the game.
    #[error("player {player:?}: {source}")]
    Network {
        /// The player's name.
        player: String,
        /// Why.
        source: engine::board8::net_file::NetFileError,
    },
    /// A malformed engine spec (`cmd=...,option.Hash=16`).
    #[error("bad engine spec {spec:?}: {detail}")]
    EngineSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        detail: String,
    },
    /// An engine process that does not start or does not speak UCI.
    #[error("engine {name:?} failed to start: {detail}")]
    EngineStart {
        /// The player's name.
        name: String,
        /// What happened.
        detail: String,
    },
    /// A malformed time control or limit.
    #[error("bad time control {0:?}: expected nodes=N, depth=N, movetime=SECONDS or BASE+INC in seconds")]
    TimeControl(String),
    /// Any other invalid option value.
    #[error("{0}")]
    Invalid(String),
    /// Writing an output file failed.
    #[error("cannot write {path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The async runtime could not be built.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}
