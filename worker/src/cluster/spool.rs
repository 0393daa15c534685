//! The spool: the reports this worker made that the coordinator has not acknowledged yet, kept
//! in a file so that a worker that crashed resends them, in order, when it starts again.
//!
//! # Format
//!
//! One record a line, each line ending in the CRC-32 of the rest of it (8 hex digits):
//!
//! ```text
//! R <hex of the encoded SubmitRequest> <crc>   a report, fsynced before it is sent
//! A <lease> <seq> <crc>                        reports of <lease> up to <seq> acknowledged
//! ```
//!
//! A line counts only when it is whole: it ends in a newline and its checksum matches. A crash
//! in the middle of an append leaves a torn last line, which is skipped; so is anything else
//! damaged. [`Spool::open`] rewrites the file with the pending reports only, so nothing is
//! ever appended behind a torn line. Acknowledgements are written without an fsync: one lost
//! in a crash only makes the worker send a report again, which the coordinator answers as a
//! repeat (`duplicate`).
//!
//! # Size
//!
//! Reports are incremental, so each pair is written once. The file holds the pending reports
//! (live bytes) and the lines of acknowledged ones (dead bytes). It is compacted (the pending
//! reports written to a temporary file, fsynced, renamed over the spool, the directory
//! fsynced) when an acknowledgement leaves more dead bytes than live ones and at least
//! [`COMPACT_FLOOR`] of them, when it is opened, and on [`Spool::compact`] (the worker calls it
//! at the end of every lease). So the file stays below twice the pending reports plus the
//! floor plus one line, however long the worker runs.
//!
//! One process uses a spool file at a time: opening it rewrites it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use prost::Message;
use proto::v1::SubmitRequest;

/// Dead bytes tolerated before an acknowledgement compacts the file, whatever the live size:
/// without it a worker whose every report is acknowledged (nothing live) would rewrite the
/// file after every report.
pub const COMPACT_FLOOR: u64 = 1 << 20;

/// A pending report and the length of its line in the file.
#[derive(Debug)]
struct Entry {
    req: SubmitRequest,
    bytes: u64,
}

/// The spool file.
#[derive(Debug)]
pub struct Spool {
    path: PathBuf,
    file: File,
    /// Pending reports by lease, then report number: the order they are resent in.
    pending: BTreeMap<(u64, u64), Entry>,
    /// Length of the file as written.
    file_bytes: u64,
    /// Bytes of the lines of pending reports.
    live_bytes: u64,
    /// A write failed part-way: the file may end in a torn line, so it is rewritten before
    /// anything else is appended.
    torn: bool,
    compact_floor: u64,
}

/// What a whole line says.
#[derive(Debug, PartialEq)]
enum Record {
    Report(SubmitRequest),
    Ack { lease: u64, seq: u64 },
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn checksum(body: &str) -> String {
    let mut crc = flate2::Crc::new();
    crc.update(body.as_bytes());
    format!("{:08x}", crc.sum())
}

/// `body`, its checksum and the newline.
fn line(body: String) -> String {
    let sum = checksum(&body);
    let mut line = body;
    line.push(' ');
    line.push_str(&sum);
    line.push('\n');
    line
}

fn report_line(req: &SubmitRequest) -> String {
    line(format!("R {}", hex(&req.encode_to_vec())))
}

fn ack_line(lease: u64, seq: u64) -> String {
    line(format!("A {lease} {seq}"))
}

/// The record on a line (with its newline), or `None` if the line is torn or damaged.
fn parse(raw: &[u8]) -> Option<Record> {
    let text = std::str::from_utf8(raw.strip_suffix(b"\n")?).ok()?;
    let (body, sum) = text.rsplit_once(' ')?;
    if checksum(body) != sum {
        return None;
    }
    let mut parts = body.split(' ');
    match (parts.next()?, parts.next(), parts.next(), parts.next()) {
        ("R", Some(h), None, None) => {
            let req = SubmitRequest::decode(&unhex(h)?[..]).ok()?;
            (req.seq > 0).then_some(Record::Report(req))
        }
        ("A", Some(lease), Some(seq), None) => Some(Record::Ack {
            lease: lease.parse().ok()?,
            seq: seq.parse().ok()?,
        }),
        _ => None,
    }
}

/// `<path>.tmp`, beside the spool.
fn temp_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".tmp");
    PathBuf::from(name)
}

/// Make a rename in the directory of `path` durable.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Remove the pending reports of `lease` numbered up to `seq`; the bytes they took.
fn remove_acked(pending: &mut BTreeMap<(u64, u64), Entry>, lease: u64, seq: u64) -> Option<u64> {
    let keys: Vec<(u64, u64)> = pending
        .range((lease, 0)..=(lease, seq))
        .map(|(k, _)| *k)
        .collect();
    if keys.is_empty() {
        return None;
    }
    Some(
        keys.iter()
            .filter_map(|k| pending.remove(k))
            .map(|e| e.bytes)
            .sum(),
    )
}

impl Spool {
    /// Open (creating) a spool, read the reports it holds, and rewrite it with the pending
    /// ones only. Torn and damaged lines are skipped (with a warning).
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut pending = BTreeMap::new();
        let mut damaged = 0usize;
        match File::open(path) {
            Ok(f) => {
                let mut reader = BufReader::new(f);
                let mut raw = Vec::new();
                loop {
                    raw.clear();
                    if reader.read_until(b'\n', &mut raw)? == 0 {
                        break;
                    }
                    match parse(&raw) {
                        Some(Record::Report(req)) => {
                            let key = (req.lease_id, req.seq);
                            pending.insert(key, Entry { req, bytes: 0 });
                        }
                        Some(Record::Ack { lease, seq }) => {
                            remove_acked(&mut pending, lease, seq);
                        }
                        None => damaged += 1,
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if damaged > 0 {
            tracing::warn!(
                path = %path.display(),
                lines = damaged,
                "skipped torn or damaged spool lines"
            );
        }
        let (file, bytes) = Self::write_file(path, &mut pending)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            pending,
            file_bytes: bytes,
            live_bytes: bytes,
            torn: false,
            compact_floor: COMPACT_FLOOR,
        })
    }

    /// Record a report before sending it; on disk when this returns. A report with the
    /// number of a pending one replaces it.
    pub fn append(&mut self, req: &SubmitRequest) -> io::Result<()> {
        self.repair()?;
        let line = report_line(req);
        self.write(line.as_bytes())?;
        self.file.sync_data()?;
        let bytes = line.len() as u64;
        self.live_bytes += bytes;
        let entry = Entry {
            req: req.clone(),
            bytes,
        };
        if let Some(old) = self.pending.insert((req.lease_id, req.seq), entry) {
            self.live_bytes -= old.bytes;
        }
        Ok(())
    }

    /// Mark every report of `lease` numbered up to `seq` acknowledged (the coordinator
    /// commits a lease's reports in order), compacting the file when the acknowledged part
    /// dominates.
    pub fn ack(&mut self, lease: u64, seq: u64) -> io::Result<()> {
        let Some(freed) = remove_acked(&mut self.pending, lease, seq) else {
            return Ok(());
        };
        self.live_bytes -= freed;
        let dead = self.file_bytes - self.live_bytes;
        if dead > self.live_bytes && dead >= self.compact_floor {
            // The rewrite leaves out the acknowledged reports: no line needed.
            return self.rewrite();
        }
        self.repair()?;
        self.write(ack_line(lease, seq).as_bytes())
    }

    /// Drop every pending report of `lease` (the lease is gone, or the coordinator refused
    /// one of its reports, so the later ones cannot be committed either).
    pub fn forget(&mut self, lease: u64) -> io::Result<()> {
        self.ack(lease, u64::MAX)
    }

    /// The pending reports, by lease and then by report number.
    pub fn pending(&self) -> Vec<SubmitRequest> {
        self.pending.values().map(|e| e.req.clone()).collect()
    }

    /// Whether no report is pending.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Rewrite the file with only the pending reports, unless it holds nothing else.
    pub fn compact(&mut self) -> io::Result<()> {
        if self.file_bytes == self.live_bytes && !self.torn {
            return Ok(());
        }
        self.rewrite()
    }

    /// Append `bytes`; a failure leaves the file to be rewritten before the next append.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.torn = true;
        self.file.write_all(bytes)?;
        self.torn = false;
        self.file_bytes += bytes.len() as u64;
        Ok(())
    }

    fn repair(&mut self) -> io::Result<()> {
        if self.torn {
            self.rewrite()?;
        }
        Ok(())
    }

    fn rewrite(&mut self) -> io::Result<()> {
        let (file, bytes) = Self::write_file(&self.path, &mut self.pending)?;
        self.file = file;
        self.file_bytes = bytes;
        self.live_bytes = bytes;
        self.torn = false;
        Ok(())
    }

    /// Write `pending` to a fresh file that replaces `path`; the file open for appending and
    /// its length. Records each entry's line length.
    fn write_file(
        path: &Path,
        pending: &mut BTreeMap<(u64, u64), Entry>,
    ) -> io::Result<(File, u64)> {
        let tmp = temp_path(path);
        let mut out = BufWriter::new(File::create(&tmp)?);
        let mut bytes = 0;
        for e in pending.values_mut() {
            let line = report_line(&e.req);
            out.write_all(line.as_bytes())?;
            e.bytes = line.len() as u64;
            bytes += e.bytes;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_dir(path)?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok((file, bytes))
    }
}

/// A spool shared by the session and the report in flight. Its file work runs on a blocking
/// thread, off the async runtime.
#[derive(Clone, Debug)]
pub(crate) struct SharedSpool(Arc<Mutex<Spool>>);

impl SharedSpool {
    /// [`Spool::open`] on a blocking thread.
    pub(crate) async fn open(path: PathBuf) -> io::Result<Self> {
        let spool = tokio::task::spawn_blocking(move || Spool::open(&path))
            .await
            .map_err(io::Error::other)??;
        Ok(Self(Arc::new(Mutex::new(spool))))
    }

    /// Run `f` on the spool on a blocking thread.
    pub(crate) async fn with<T, F>(&self, f: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Spool) -> io::Result<T> + Send + 'static,
    {
        let spool = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || {
            let mut spool = spool.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut spool)
        })
        .await
        .map_err(io::Error::other)?
    }
}

#[cfg(test)]
mod tests {
    use proto::v1::PairResult;

    use super::*;

    fn req(lease: u64, seq: u64) -> SubmitRequest {
        SubmitRequest {
            worker_id: 1,
            lease_id: lease,
            seq,
            pairs: Vec::new(),
        }
    }

    /// A report of `pairs` pairs with `pgn` bytes of PGN each, indices from `first`.
    fn report(lease: u64, seq: u64, first: u64, pairs: u64, pgn: usize) -> SubmitRequest {
        SubmitRequest {
            pairs: (first..first + pairs)
                .map(|index| PairResult {
                    index,
                    games: Vec::new(),
                    pgn_gz: vec![index as u8; pgn],
                })
                .collect(),
            ..req(lease, seq)
        }
    }

    fn file_len(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().len()
    }

    fn append_raw(path: &Path, bytes: &[u8]) {
        OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn lines_round_trip_and_damage_is_detected() {
        let r = report(3, 2, 10, 2, 5);
        let l = report_line(&r);
        assert_eq!(parse(l.as_bytes()), Some(Record::Report(r)));
        let a = ack_line(3, 7);
        assert_eq!(a.len(), "A 3 7 ".len() + 9);
        assert_eq!(parse(a.as_bytes()), Some(Record::Ack { lease: 3, seq: 7 }));
        // Without its newline, cut anywhere, or with a byte changed: not a record.
        assert_eq!(parse(&l.as_bytes()[..l.len() - 1]), None);
        for cut in 1..a.len() {
            assert_eq!(parse(&a.as_bytes()[..cut]), None, "{cut}");
        }
        // The acknowledgement of seq 3 torn to look like one of seq 1 before its checksum.
        assert_eq!(parse(b"A 3 1\n"), None);
        let mut flipped = l.into_bytes();
        flipped[5] ^= 1;
        assert_eq!(parse(&flipped), None);
    }

    #[test]
    fn pending_reports_survive_a_restart_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        {
            let mut s = Spool::open(&path).unwrap();
            // Appended out of order across leases; resent by lease, then number.
            s.append(&req(2, 1)).unwrap();
            s.append(&req(1, 1)).unwrap();
            s.append(&req(1, 2)).unwrap();
            s.append(&req(1, 3)).unwrap();
            s.append(&req(2, 2)).unwrap();
            s.ack(1, 1).unwrap();
            s.ack(2, 1).unwrap();
            assert_eq!(s.pending(), vec![req(1, 2), req(1, 3), req(2, 2)]);
        }
        let mut s = Spool::open(&path).unwrap();
        assert_eq!(s.pending(), vec![req(1, 2), req(1, 3), req(2, 2)]);
        // An acknowledgement covers every earlier report of its lease.
        s.ack(1, 3).unwrap();
        assert_eq!(s.pending(), vec![req(2, 2)]);
        s.forget(2).unwrap();
        assert!(s.is_empty());
        // An acknowledgement of nothing pending writes nothing.
        let len = file_len(&path);
        s.ack(9, 9).unwrap();
        assert_eq!(file_len(&path), len);
        drop(s);
        assert!(Spool::open(&path).unwrap().is_empty());
        assert_eq!(file_len(&path), 0);
    }

    #[test]
    fn compaction_keeps_only_pending_reports() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool.log");
        let mut s = Spool::open(&path).unwrap();
        s.append(&report(1, 1, 0, 3, 100)).unwrap();
        s.append(&report(1, 2, 3, 1, 100)).unwrap();
        s.ack(1, 1).unwrap();
        let before = file_len(&path);
        s.compact().unwrap();
        assert_eq!(
            file_len(&path),
            report_line(&report(1, 2, 3, 1, 100)).len() as u64
        );
        assert!(file_len(&path) < before);
        assert!(!temp_path(&path).exists());
        // Nothing to drop: the file is left as it is (not replaced by a new one).
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let inode = std::fs::metadata(&path).unwrap().ino();
            s.compact().unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        }
        // Appends go on in the new file.
        s.append(&report(1, 3, 4, 1, 100)).unwrap();
        drop(s);
        let s = Spool::open(&path).unwrap();
        assert_eq!(
            s.pending(),
            vec![report(1, 2, 3, 1, 100), report(1, 3, 4, 1, 100)]
        );
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_appends_go_on_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        let full = report_line(&report(4, 2, 1, 1, 50));
        for cut in [1, 2, full.len() / 2, full.len() - 1] {
            {
                let mut s = Spool::open(&path).unwrap();
                s.forget(4).unwrap();
                s.compact().unwrap();
                s.append(&report(4, 1, 0, 1, 50)).unwrap();
            }
            // A crash while appending report 2.
            append_raw(&path, &full.as_bytes()[..cut]);
            let mut s = Spool::open(&path).unwrap();
            assert_eq!(s.pending(), vec![report(4, 1, 0, 1, 50)], "cut at {cut}");
            // The file no longer ends in the torn line: a new append is whole.
            s.append(&report(4, 2, 1, 1, 50)).unwrap();
            drop(s);
            let s = Spool::open(&path).unwrap();
            assert_eq!(
                s.pending(),
                vec![report(4, 1, 0, 1, 50), report(4, 2, 1, 1, 50)],
                "cut at {cut}"
            );
        }
        // A torn acknowledgement: the report stays pending (a repeat at worst).
        let mut s = Spool::open(&path).unwrap();
        s.forget(4).unwrap();
        s.append(&req(5, 1)).unwrap();
        drop(s);
        let ack = ack_line(5, 1);
        append_raw(&path, &ack.as_bytes()[..ack.len() - 1]);
        assert_eq!(Spool::open(&path).unwrap().pending(), vec![req(5, 1)]);
        // Old and foreign lines are skipped too.
        append_raw(&path, b"R 0a0b\nA 5 1\n\ngarbage\n");
        assert_eq!(Spool::open(&path).unwrap().pending(), vec![req(5, 1)]);
    }

    #[test]
    fn the_file_stays_bounded_over_many_reports() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        let mut s = Spool::open(&path).unwrap();
        s.compact_floor = 16 * 1024;
        // The longest line of the test: the largest numbers.
        let line = report_line(&report(99, 400, 1600, 4, 200)).len() as u64;
        let mut largest = 0;
        let mut written = 0;
        for lease in 1..=20u64 {
            for seq in 1..=50u64 {
                // One report in flight at a time, as the worker sends them.
                let r = report(lease, seq, seq * 4, 4, 200);
                s.append(&r).unwrap();
                written += report_line(&r).len() as u64;
                largest = largest.max(file_len(&path));
                s.ack(lease, seq).unwrap();
                largest = largest.max(file_len(&path));
            }
            s.compact().unwrap();
            assert_eq!(file_len(&path), 0);
        }
        assert!(written > 100 * s.compact_floor, "{written}");
        // Dead bytes reach the floor, plus the line that got there and its acknowledgement.
        assert!(
            largest <= s.compact_floor + 2 * line + 64,
            "{largest} > {} + 2 * {line}",
            s.compact_floor
        );
        // With reports left pending the bound is twice the live bytes plus the floor.
        for seq in 1..=400u64 {
            s.append(&report(99, seq, seq * 4, 4, 200)).unwrap();
            if seq > 10 {
                s.ack(99, seq - 10).unwrap();
            }
            let live = 10 * line;
            assert!(file_len(&path) <= 2 * live + s.compact_floor + line);
        }
        drop(s);
        let s = Spool::open(&path).unwrap();
        let seqs: Vec<u64> = s.pending().iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (391..=400).collect::<Vec<_>>());
    }
}
