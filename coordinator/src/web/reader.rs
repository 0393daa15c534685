//! Reads of what the core does not keep in memory (a run's history), on a read-only
//! connection of their own off the async runtime: WAL readers never wait for the writer.

use crate::history::Point;
use crate::store;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// Opens a read-only connection per read.
#[derive(Debug, Clone)]
pub struct Reader {
    db: PathBuf,
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// SQLite refused.
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A stored history point did not parse.
    #[error("stored history point of run {run} at {pairs} pairs: {source}")]
    Point {
        /// Run.
        run: u64,
        /// Pairs.
        pairs: u64,
        /// Why.
        source: serde_json::Error,
    },
    /// The blocking task died.
    #[error("read task: {0}")]
    Task(String),
}

impl Reader {
    /// Over a database file.
    pub fn new(db: &Path) -> Self {
        Self {
            db: db.to_path_buf(),
        }
    }

    fn open(&self) -> Result<Connection, ReadError> {
        let conn = Connection::open_with_flags(
            &self.db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Ok(conn)
    }

    /// Games a second of each active run `(id, pairs done now)`, from the last history
    /// point at least a minute old (at least 10 s back): a burst of points a few ms apart
    /// does not read as thousands of games a second, and a stalled run decays towards 0.
    pub async fn rates(&self, runs: Vec<(u64, u64)>, now_ms: u64) -> Result<Vec<f64>, ReadError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let conn = me.open()?;
            runs.into_iter()
                .map(|(run, done)| {
                    let base = store::history_base(&conn, run, now_ms.saturating_sub(60_000))?;
                    Ok(base.map_or(0.0, |(pairs, at)| {
                        let seconds = (now_ms.saturating_sub(at) as f64 / 1000.0).max(10.0);
                        2.0 * done.saturating_sub(pairs) as f64 / seconds
                    }))
                })
                .collect()
        })
        .await
        .map_err(|e| ReadError::Task(e.to_string()))?
    }

    /// A run's history points, in order.
    pub async fn history(&self, run: u64) -> Result<Vec<Point>, ReadError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let conn = me.open()?;
            store::history(&conn, run)?
                .into_iter()
                .map(|row| {
                    let mut p: Point =
                        serde_json::from_str(&row.data).map_err(|source| ReadError::Point {
                            run,
                            pairs: row.pairs,
                            source,
                        })?;
                    p.pairs = row.pairs;
                    p.at_ms = row.at_ms;
                    Ok(p)
                })
                .collect()
        })
        .await
        .map_err(|e| ReadError::Task(e.to_string()))?
    }
}
