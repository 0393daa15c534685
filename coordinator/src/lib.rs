//! Coordinator: runs, scheduling, storage, statistics and dashboard (later issues).
//!
//! For now it offers the statistics calculator (`coordinator stats elo`) and the checker of
//! fishtest reference vectors (`coordinator stats check`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
pub mod stats_cli;
pub mod report;
