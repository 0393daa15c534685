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

/// Largest message either side accepts, in bytes (a lease report with PGNs stays far below).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
