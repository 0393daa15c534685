//! PGN export: streamed from the database on a blocking thread of its own, never on the core
//! thread, in bounded memory.
//!
//! PGNs are stored gzip-compressed as workers sent them (at most
//! [`proto::limits::PGN_GZ_BYTES`] each). A compressed blob can inflate enormously, so each is
//! inflated through a reader capped at [`proto::limits::PGN_TEXT_BYTES`]; one that exceeds
//! it, does not inflate or is not UTF-8 is skipped and named in a PGN comment line (`;`). Rows
//! are read a page at a time by pair index and sent through a bounded channel, so a slow
//! client holds one page in memory, and a client that goes away stops the export. At most
//! [`MAX_CONCURRENT_EXPORTS`] exports run at once.

use proto::limits;
use rusqlite::{params, Connection, OpenFlags};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;
use tokio::sync::{mpsc, Semaphore};
use tokio_stream::wrappers::ReceiverStream;

/// Exports running at once; more wait their turn.
pub const MAX_CONCURRENT_EXPORTS: usize = 2;

/// Rows read per query.
const PAGE: i64 = 32;

/// Largest text chunk sent in one message (a client's default message limit is 4 MiB).
pub const CHUNK_BYTES: usize = 256 * 1024;

/// Why an export stopped.
#[derive(Debug, Error)]
pub enum ExportError {
    /// The database could not be read.
    #[error("storage: {0}")]
    Storage(#[from] rusqlite::Error),
}

/// What inflating one stored PGN gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Inflated {
    /// The text.
    Text(String),
    /// Skipped, with the reason.
    Skipped(String),
}

/// Inflate one stored PGN within the cap.
pub fn inflate(gz: &[u8]) -> Inflated {
    let mut out = Vec::new();
    let cap = limits::PGN_TEXT_BYTES as u64;
    match flate2::read::GzDecoder::new(gz)
        .take(cap + 1)
        .read_to_end(&mut out)
    {
        Err(e) => Inflated::Skipped(format!("does not inflate ({e})")),
        Ok(_) if out.len() as u64 > cap => {
            Inflated::Skipped(format!("inflates beyond {} bytes", limits::PGN_TEXT_BYTES))
        }
        Ok(_) => match String::from_utf8(out) {
            Ok(text) => Inflated::Text(text),
            Err(_) => Inflated::Skipped("is not UTF-8 text".into()),
        },
    }
}

/// Shares the export slots among callers.
#[derive(Debug, Clone)]
pub struct Exporter {
    db: PathBuf,
    slots: Arc<Semaphore>,
}

impl Exporter {
    /// Exports from `db`.
    pub fn new(db: impl Into<PathBuf>) -> Self {
        Self {
            db: db.into(),
            slots: Arc::new(Semaphore::new(MAX_CONCURRENT_EXPORTS)),
        }
    }

    /// The database file.
    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Run `run`'s PGN text as a stream of chunks, exported on a task of its own (both the
    /// gRPC export and the dashboard's download serve it; `to_err` makes a storage error the
    /// stream's last item in their own error type).
    pub fn spawn<E: Send + 'static>(
        &self,
        run: u64,
        to_err: impl Fn(ExportError) -> E + Send + 'static,
    ) -> ReceiverStream<Result<String, E>> {
        let (tx, rx) = mpsc::channel(4);
        let exporter = self.clone();
        tokio::spawn(async move { exporter.export(run, tx, to_err).await });
        ReceiverStream::new(rx)
    }

    /// Stream run `run`'s PGN text into `tx`, chunk by chunk; returns when done, when the
    /// receiver is gone, or on a storage error (also sent as the last item).
    async fn export<E: Send + 'static>(
        &self,
        run: u64,
        tx: mpsc::Sender<Result<String, E>>,
        to_err: impl Fn(ExportError) -> E + Send + 'static,
    ) {
        let Ok(permit) = self.slots.clone().acquire_owned().await else {
            return;
        };
        let db = self.db.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            if let Err(e) = stream(&db, run, &tx) {
                tracing::warn!(run, error = %e, "pgn export failed");
                let _ = tx.blocking_send(Err(to_err(e)));
            }
        })
        .await;
    }
}

/// The blocking half: page through the rows, inflate, chunk, send.
fn stream<E>(db: &Path, run: u64, tx: &mpsc::Sender<Result<String, E>>) -> Result<(), ExportError> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let mut q = conn.prepare(
        "SELECT pair_index, pgn FROM pair_results
         WHERE run_id = ?1 AND pair_index > ?2 AND pgn IS NOT NULL
         ORDER BY pair_index LIMIT ?3",
    )?;
    let mut after: i64 = -1;
    let mut buf = String::new();
    loop {
        let rows: Vec<(i64, Vec<u8>)> = q
            .query_map(params![run as i64, after, PAGE], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        let Some(&(last, _)) = rows.last() else { break };
        after = last;
        for (index, gz) in rows {
            match inflate(&gz) {
                Inflated::Text(text) => {
                    buf.push_str(&text);
                    if !text.ends_with('\n') {
                        buf.push('\n');
                    }
                }
                Inflated::Skipped(why) => {
                    tracing::warn!(run, pair = index, why = %why, "pgn skipped in export");
                    buf.push_str(&format!("; pair {index}: PGN skipped: it {why}\n\n"));
                }
            }
            while buf.len() >= CHUNK_BYTES {
                let mut cut = CHUNK_BYTES;
                while !buf.is_char_boundary(cut) {
                    cut -= 1;
                }
                let rest = buf.split_off(cut);
                if tx
                    .blocking_send(Ok(std::mem::replace(&mut buf, rest)))
                    .is_err()
                {
                    return Ok(());
                }
            }
        }
    }
    if !buf.is_empty() {
        let _ = tx.blocking_send(Ok(buf));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_bomb_is_skipped_without_inflating_it_whole() {
        let bomb = gz(&vec![b'a'; limits::PGN_TEXT_BYTES * 4]);
        assert!(bomb.len() < limits::PGN_GZ_BYTES);
        assert!(matches!(inflate(&bomb), Inflated::Skipped(w) if w.contains("beyond")));
        assert!(matches!(inflate(b"not gzip"), Inflated::Skipped(_)));
        assert!(matches!(inflate(&gz(&[0xff, 0xfe])), Inflated::Skipped(w) if w.contains("UTF-8")));
        assert_eq!(
            inflate(&gz(b"1. e4 *\n")),
            Inflated::Text("1. e4 *\n".into())
        );
    }
}
