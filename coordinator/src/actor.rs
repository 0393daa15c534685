//! The [`Core`] on its own thread, and a cheap cloneable async handle to it.
//!
//! SQLite calls block, so they never run on the async runtime: requests are closures sent to
//! one thread that owns the core; each answers through a oneshot channel.

use crate::core::Core;
use crate::error::CoreError;
use std::sync::mpsc;
use tokio::sync::{oneshot, watch};

type Job = Box<dyn FnOnce(&mut Core) + Send>;

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
            while let Ok(job) = rx.recv() {
                core.counters.calls += 1;
                job(&mut core);
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
    /// Run `f` on the core thread and wait for its answer.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Core) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Box::new(move |core| {
                let _ = tx.send(f(core));
            }))
            .map_err(|_| CoreError::ShuttingDown)?;
        rx.await.map_err(|_| CoreError::ShuttingDown)?
    }

    /// A receiver that changes after every committed change (for streaming progress).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }
}
