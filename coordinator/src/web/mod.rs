//! The dashboard: HTML pages, JSON endpoints, live updates (server-sent events), admin
//! actions and Prometheus metrics over HTTP, on the gRPC server's tokio runtime.
//!
//! Every page and endpoint costs the same whatever a run's length: figures come from the
//! core's running totals and charts from the run's stored history (a few hundred points).
//! Pages are rendered on the server with the same chart code as `report.html`; the embedded
//! script only swaps in fresh fragments when the server says something changed, sorts and
//! filters tables, and sends admin actions.

mod api;
mod assets;
mod auth;
mod pages;
mod reader;

use crate::actor::CoreHandle;
use crate::auth::TokenBook;
use crate::metrics::Metrics;
use crate::pgn_export::Exporter;
use axum::routing::{get, post};
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

pub use reader::Reader;

/// Connections the dashboard holds open at most by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// Dashboard settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebConfig {
    /// Require a valid token (any role) to read pages and JSON, not only to act.
    pub read_requires_token: bool,
    /// Open HTTP connections at most (each open page holds one for its live events);
    /// further ones wait in the accept backlog.
    pub max_connections: usize,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            read_requires_token: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct WebState {
    core: CoreHandle,
    metrics: Metrics,
    exporter: Exporter,
    tokens: TokenBook,
    reader: Reader,
    config: WebConfig,
}

impl WebState {
    /// Over a running core and its database.
    pub fn new(
        core: CoreHandle,
        metrics: Metrics,
        exporter: Exporter,
        tokens: TokenBook,
        config: WebConfig,
    ) -> Self {
        let reader = Reader::new(exporter.db());
        Self {
            core,
            metrics,
            exporter,
            tokens,
            reader,
            config,
        }
    }
}

/// Every route.
pub fn router(state: WebState) -> Router {
    let state = Arc::new(state);
    Router::new()
        .route("/", get(pages::runs))
        .route("/runs/{id}", get(pages::run))
        .route("/runs/{id}/pgn", get(api::pgn))
        .route("/workers", get(pages::workers))
        .route("/compare", get(pages::compare))
        .route("/api/runs", get(api::runs))
        .route("/api/runs/{id}", get(api::run))
        .route("/api/runs/{id}/history", get(api::history))
        .route("/api/runs/{id}/leases", get(api::leases))
        .route("/api/runs/{id}/{action}", post(api::act))
        .route("/api/workers", get(api::workers))
        .route("/api/events", get(api::events))
        .route("/metrics", get(api::metrics))
        .route("/assets/{file}", get(assets::serve))
        .fallback(api::not_found)
        .with_state(state)
}

/// Serve `router` on `listener`, at most `max_connections` at once, until `shutdown`
/// resolves.
pub async fn serve(
    listener: TcpListener,
    max_connections: usize,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = crate::limits::LimitedListener::new(listener, max_connections);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}
