//! Coordinator: runs, scheduling, storage, statistics and the gRPC services of the cluster.
//!
//! * [`serve`] runs the worker, admin and health services over one SQLite file;
//! * [`ledger`] is the pure exactly-once bookkeeping of pair indices and leases;
//! * [`core`] applies every operation whole and commits it before answering; [`model`] is its
//!   vocabulary, [`scheduler`] picks runs and sizes leases, [`facts`] checks reports against
//!   their assignment, [`figures`] computes what a run shows;
//! * [`config`] reads run configs (TOML) with errors that name the field;
//! * [`cli`] is the `coordinator` command line (`serve`, `run ...`, `token add`, `stats ...`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), coordinator::server::ServeError> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let config = coordinator::ServeConfig::new("cluster.db");
//! coordinator::serve(config, listener, None, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod activity;
pub mod actor;
pub mod auth;
pub mod bench_load;
pub mod checkpoint;
pub mod cli;
pub mod cli_cluster;
pub mod client;
pub mod config;
pub mod core;
pub mod error;
pub mod extend;
pub mod facts;
pub mod figures;
pub mod history;
pub mod ledger;
pub mod limits;
pub mod local;
pub mod metrics;
pub mod model;
pub mod options_file;
pub mod pgn_export;
pub mod report;
pub mod residual;
pub mod run;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod stats_cli;
pub mod store;
pub mod study_stop;
pub mod totals;
pub mod verify;
pub mod web;

pub use server::{serve, ServeConfig};
