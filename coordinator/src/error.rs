//! The one error table: every service error and the gRPC code it maps to.
//!
//! Handlers return [`CoreError`]; the conversion to [`tonic::Status`] below is the only place
//! that picks codes. Internal details (SQLite messages) go to the log; the client gets a plain
//! message.

use crate::config::ConfigError;
use crate::extend::ExtendError;
use crate::ledger::LeaseError;
use thiserror::Error;
use tonic::{Code, Status};

/// Why a coordinator operation failed.
#[derive(Debug, Error)]
pub enum CoreError {
    /// A run config is malformed; names the field.
    #[error("invalid run config: {0}")]
    Config(#[from] ConfigError),
    /// A lease operation was refused.
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// A run's budget cannot be raised as asked.
    #[error(transparent)]
    Extend(#[from] ExtendError),
    /// No such run.
    #[error("unknown run {0}")]
    UnknownRun(u64),
    /// No such worker.
    #[error("unknown worker {0} (register first)")]
    UnknownWorker(u64),
    /// The worker id belongs to another token.
    #[error("worker {0} is registered with another token")]
    NotYourWorker(u64),
    /// A report is malformed.
    #[error("invalid report: {0}")]
    BadReport(String),
    /// A request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// A request is over one of the API's size limits (`proto::limits`).
    #[error("over a limit: {0}")]
    TooLarge(String),
    /// A quota is used up (registrations per token).
    #[error("{0}")]
    Exhausted(String),
    /// The operation does not fit the run's state.
    #[error("{0}")]
    BadState(String),
    /// No or unknown token.
    #[error("{0}")]
    Unauthenticated(String),
    /// The token's role may not call this.
    #[error("{0}")]
    PermissionDenied(String),
    /// The coordinator is shutting down.
    #[error("coordinator is shutting down")]
    ShuttingDown,
    /// Storage failed.
    #[error("storage: {0}")]
    Storage(#[from] rusqlite::Error),
    /// A bug or corrupt state.
    #[error("internal: {0}")]
    Internal(String),
}

impl CoreError {
    /// The gRPC code of this error.
    pub fn code(&self) -> Code {
        match self {
            Self::Config(_) | Self::BadReport(_) | Self::BadRequest(_) | Self::TooLarge(_) => {
                Code::InvalidArgument
            }
            Self::Exhausted(_) => Code::ResourceExhausted,
            Self::Lease(e) => match e {
                LeaseError::UnknownLease(_) | LeaseError::UnknownRun(_) => Code::NotFound,
                LeaseError::NotHolder(_) => Code::PermissionDenied,
                LeaseError::NotValid { .. } | LeaseError::SeqGap { .. } => Code::FailedPrecondition,
                LeaseError::PairNotInLease { .. }
                | LeaseError::AlreadyReported { .. }
                | LeaseError::ZeroSeq => Code::InvalidArgument,
            },
            Self::UnknownRun(_) | Self::UnknownWorker(_) => Code::NotFound,
            Self::NotYourWorker(_) | Self::PermissionDenied(_) => Code::PermissionDenied,
            Self::BadState(_) => Code::FailedPrecondition,
            Self::Extend(e) => match e {
                ExtendError::NotMore { .. } | ExtendError::Invalid(_) => Code::InvalidArgument,
                ExtendError::Spsa { .. }
                | ExtendError::Stopped { .. }
                | ExtendError::Decided { .. } => Code::FailedPrecondition,
                ExtendError::Stored { .. } => Code::Internal,
            },
            Self::Unauthenticated(_) => Code::Unauthenticated,
            Self::ShuttingDown => Code::Unavailable,
            Self::Storage(_) | Self::Internal(_) => Code::Internal,
        }
    }
}

impl From<CoreError> for Status {
    fn from(e: CoreError) -> Self {
        let code = e.code();
        if code == Code::Internal {
            tracing::error!(error = %e, "internal error");
            Status::new(code, "internal error (see the coordinator's log)")
        } else {
            Status::new(code, e.to_string())
        }
    }
}
