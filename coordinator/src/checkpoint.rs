//! WAL checkpoints on a thread of their own.
//!
//! By default SQLite copies the write-ahead log back into the database file inside whichever
//! commit pushes the log past 1,000 pages: under a fleet that is the core thread, and the
//! reports waiting behind that commit see its latency (6% of the core's time went to it with
//! 1,000 simulated workers). The server turns the automatic checkpoint off on the core's
//! connection and lets this thread checkpoint every interval instead, in PASSIVE mode, which
//! never blocks the writer; on stop it checkpoints once more and truncates the log.

use crate::error::CoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// A running checkpointer; dropping it stops the thread after a final checkpoint.
#[derive(Debug)]
pub struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Start checkpointing `db` every `every`.
pub fn spawn(db: &Path, every: Duration) -> Result<Checkpointer, CoreError> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let (stop, stopped) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("wal-checkpoint".into())
        .spawn(move || loop {
            let last = !matches!(
                stopped.recv_timeout(every),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            let mode = if last { "TRUNCATE" } else { "PASSIVE" };
            if let Err(e) = checkpoint(&conn, mode) {
                tracing::warn!(error = %e, mode, "WAL checkpoint failed");
            }
            if last {
                break;
            }
        })
        .map_err(|e| CoreError::Internal(format!("checkpoint thread: {e}")))?;
    Ok(Checkpointer {
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// One checkpoint; returns (log frames, frames copied back).
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((r.get(1)?, r.get(2)?))
    })
}

/// Let a connection's commits leave checkpoints to a [`Checkpointer`].
pub fn hand_over(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "wal_autocheckpoint", 0)
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal_len(db: &Path) -> u64 {
        let wal = db.with_extension("db-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len())
    }

    #[test]
    fn the_log_is_copied_back_by_the_thread_not_by_commits() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("c.db");
        let conn = crate::store::open(&db).expect("db");
        hand_over(&conn).expect("pragma");
        // An hour between checkpoints: only the final one runs.
        let cp = spawn(&db, Duration::from_secs(3600)).expect("spawn");
        conn.execute_batch("CREATE TABLE t (x BLOB)")
            .expect("table");
        for _ in 0..2_000 {
            conn.execute("INSERT INTO t VALUES (zeroblob(512))", [])
                .expect("insert");
        }
        // 2,000 commits, past the automatic threshold of 1,000 pages: no commit reset the log.
        assert!(wal_len(&db) > 1_000 * 1_024, "{}", wal_len(&db));
        drop(cp);
        assert_eq!(wal_len(&db), 0, "the last checkpoint truncates the log");
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 2_000);
    }
}
