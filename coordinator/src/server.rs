//! `coordinator::serve`: the gRPC server (worker, admin and health services) over one
//! database file, until a shutdown future resolves.

use crate::actor;
use crate::auth::TokenBook;
use crate::core::{Core, Timing};
use crate::error::CoreError;
use crate::limits::{self, Limits};
use crate::metrics::Metrics;
use crate::service::{now_ms, AdminApi, WorkerApi};
use crate::store::Role;
use crate::web::{self, WebConfig, WebState};
use proto::v1::admin_service_server::AdminServiceServer;
use proto::v1::worker_service_server::WorkerServiceServer;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;
use tokio::net::TcpListener;
use tonic::transport::{Identity, Server, ServerTlsConfig};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Database file (created on first start).
    pub db: PathBuf,
    /// Lease and heartbeat timing.
    pub timing: Timing,
    /// PEM certificate and key for TLS; plain HTTP/2 when absent.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// How often overdue leases are swept.
    pub sweep_interval: Duration,
    /// Connections and calls taken at once.
    pub limits: Limits,
    /// Dashboard settings (when an HTTP listener is given).
    pub web: WebConfig,
}

impl ServeConfig {
    /// Defaults for a database file.
    pub fn new(db: impl Into<PathBuf>) -> Self {
        Self {
            db: db.into(),
            timing: Timing::default(),
            tls: None,
            sweep_interval: Duration::from_secs(1),
            limits: Limits::default(),
            web: WebConfig::default(),
        }
    }
}

/// Why the server could not run.
#[derive(Debug, Error)]
pub enum ServeError {
    /// Opening or loading the database failed.
    #[error("database {path}: {source}")]
    Database {
        /// The file.
        path: String,
        /// The error.
        source: CoreError,
    },
    /// TLS files could not be read.
    #[error("tls: {0}")]
    Tls(String),
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A thread or task could not start or ended badly.
    #[error("runtime: {0}")]
    Runtime(String),
}

/// How often the WAL is copied back into the database file (off the core thread).
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Serve gRPC on `listener` (and the dashboard, JSON and metrics on `http_listener`) until
/// `shutdown` resolves; in-flight gRPC calls are drained, then the core thread stops after
/// its last commit.
pub async fn serve(
    config: ServeConfig,
    listener: TcpListener,
    http_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let db = config.db.clone();
    let timing = config.timing;
    let db_err = |source| ServeError::Database {
        path: config.db.display().to_string(),
        source,
    };
    let core = tokio::task::spawn_blocking(move || Core::open(&db, timing, now_ms()))
        .await
        .map_err(|e| ServeError::Runtime(e.to_string()))?
        .map_err(db_err)?;
    let checkpointer = core
        .checkpoint_in_background(&config.db, CHECKPOINT_EVERY)
        .map_err(db_err)?;
    let tokens = TokenBook::open(&config.db).map_err(db_err)?;
    let (handle, thread) = actor::spawn(core).map_err(|e| ServeError::Runtime(e.to_string()))?;
    let metrics = Metrics::default();

    let sweeper = {
        let handle = handle.clone();
        let every = config.sweep_interval;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = handle.call(|c| c.expire(now_ms())).await {
                    tracing::warn!(error = %e, "lease sweep failed");
                }
            }
        })
    };
    // The dashboard's connections (live event streams among them) never end by themselves:
    // its task is aborted once the gRPC server has drained, not waited for.
    let http_task = http_listener.map(|l| {
        let state = WebState::new(
            handle.clone(),
            metrics.clone(),
            crate::pgn_export::Exporter::new(&config.db),
            tokens.clone(),
            config.web,
        );
        let max = config.web.max_connections;
        tokio::spawn(web::serve(
            l,
            max,
            web::router(state),
            std::future::pending(),
        ))
    });

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<WorkerServiceServer<WorkerApi>>().await;
    health.set_serving::<AdminServiceServer<AdminApi>>().await;

    let worker = tonic::service::interceptor::InterceptedService::new(
        WorkerServiceServer::new(WorkerApi::new(handle.clone()))
            .max_decoding_message_size(proto::MAX_MESSAGE_BYTES),
        tokens.interceptor(Role::Worker),
    );
    let admin = tonic::service::interceptor::InterceptedService::new(
        AdminServiceServer::new(AdminApi::new(
            handle.clone(),
            metrics,
            crate::pgn_export::Exporter::new(&config.db),
        ))
        .max_decoding_message_size(proto::MAX_MESSAGE_BYTES),
        tokens.interceptor(Role::Admin),
    );
    let mut builder = Server::builder()
        .initial_connection_window_size(limits::CONNECTION_WINDOW)
        .initial_stream_window_size(limits::CONNECTION_WINDOW)
        .max_concurrent_streams(limits::MAX_STREAMS_PER_CONNECTION)
        .http2_keepalive_interval(Some(limits::KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(limits::KEEPALIVE_TIMEOUT));
    if let Some((cert, key)) = &config.tls {
        let read = |p: &PathBuf| {
            std::fs::read(p).map_err(|e| ServeError::Tls(format!("{}: {e}", p.display())))
        };
        let identity = Identity::from_pem(read(cert)?, read(key)?);
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(identity))
            .map_err(|e| ServeError::Tls(e.to_string()))?;
    }
    let addr = listener.local_addr().ok();
    tracing::info!(addr = ?addr, db = %config.db.display(), tls = config.tls.is_some(), "coordinator serving");
    let (incoming, acceptor) = limits::incoming(listener, config.limits.max_connections);
    let result = builder
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
            config.limits.max_calls.max(1),
        ))
        .add_service(health_service)
        .add_service(worker)
        .add_service(admin)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await;
    acceptor.abort();
    sweeper.abort();
    if let Some(t) = http_task {
        t.abort();
        let _ = t.await;
    }
    let _ = sweeper.await;
    drop(handle);
    drop(health);
    // The core thread ends once the last handle (held by tasks just aborted) is gone.
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| ServeError::Runtime(e.to_string()))?
        .map_err(|_| ServeError::Runtime("core thread panicked".into()))?;
    // After the last commit: the final checkpoint leaves an empty log.
    drop(checkpointer);
    tracing::info!("coordinator stopped");
    result.map_err(Into::into)
}
