//! The [`Core`] on its own thread, and a cheap cloneable async handle to it.
//!
//! SQLite calls block, so they never run on the async runtime: requests are closures sent to
//! one thread that owns the core. The thread takes every request waiting (up to
//! [`MAX_BATCH`]) and runs them in one group commit: each in a savepoint of one transaction,
//! then a single commit (one fsync) makes all of them durable. Only then are the callers
//! answered, so an acknowledged report is always on disk; if the commit fails, every caller of
//! the batch gets the error and the core reloads from the database.

use crate::core::Core;
use crate::error::CoreError;
use std::sync::mpsc;
use tokio::sync::{oneshot, watch};

/// Most operations in one group commit.
pub const MAX_BATCH: usize = 256;

/// What answers a caller once the batch is committed (or failed).
type Reply = Box<dyn FnOnce(Result<(), String>) + Send>;
type Job = Box<dyn FnOnce(&mut Core) -> Reply + Send>;

/// Handle to the core thread.
#[derive(Clone, Debug)]
pub struct CoreHandle {
    tx: mpsc::Sender<Job>,
    changes: watch::Receiver<u64>,
}

/// Start the core thread. It ends when every handle is dropped.
pub fn spawn(core: Core) -> std::io::Result<(CoreHandle, std::thread::JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<Job>();
    let (changed_tx, changes) = watch::channel(0u64);
    let thread = std::thread::Builder::new()
        .name("coordinator-core".into())
        .spawn(move || {
            let mut core = core;
            while let Ok(first) = rx.recv() {
                let mut jobs = vec![first];
                while jobs.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(job) => jobs.push(job),
                        Err(_) => break,
                    }
                }
                let committed = match core.begin_batch() {
                    Ok(()) => {
                        let replies: Vec<Reply> = jobs
                            .into_iter()
                            .map(|job| {
                                core.counters.calls += 1;
                                job(&mut core)
                            })
                            .collect();
                        let committed = core.end_batch().map_err(|e| e.to_string());
                        for reply in replies {
                            reply(committed.clone());
                        }
                        committed
                    }
                    Err(e) => {
                        // No group transaction: each operation commits on its own.
                        tracing::warn!(error = %e, "group commit unavailable, committing one by one");
                        for job in jobs {
                            core.counters.calls += 1;
                            job(&mut core)(Ok(()));
                        }
                        Ok(())
                    }
                };
                if let Err(e) = committed {
                    tracing::error!(error = %e, "batch not committed");
                }
                // Only commits count as changes: a watcher's own reads must not wake it.
                let generation = core.generation();
                changed_tx.send_if_modified(|v| {
                    let changed = *v != generation;
                    *v = generation;
                    changed
                });
            }
        })?;
    Ok((CoreHandle { tx, changes }, thread))
}

impl CoreHandle {
    /// Run `f` on the core thread and wait for its answer, which comes once what it changed
    /// is committed.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Core) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Box::new(move |core| {
                let out = f(core);
                Box::new(move |committed: Result<(), String>| {
                    let answer = match committed {
                        Ok(()) => out,
                        Err(e) => Err(CoreError::Internal(format!("commit failed: {e}"))),
                    };
                    let _ = tx.send(answer);
                })
            }))
            .map_err(|_| CoreError::ShuttingDown)?;
        rx.await.map_err(|_| CoreError::ShuttingDown)?
    }

    /// A receiver that changes after every committed change (for streaming progress).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }
}
