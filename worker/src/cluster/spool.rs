//! The spool: an append-only file of reports not yet acknowledged by the coordinator.
//!
//! Lines are `R <hex of the encoded SubmitRequest>` when a report is made and `A <lease>
//! <seq>` when the coordinator acknowledged it. Reports are cumulative per lease, so after a
//! restart only the newest unacknowledged report of each lease is resent.
//! [`Spool::compact`] rewrites the file without what was acknowledged.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use prost::Message;
use proto::v1::SubmitRequest;

/// The spool file.
#[derive(Debug)]
pub struct Spool {
    path: PathBuf,
    file: File,
    /// Newest report per lease, with whether it was acknowledged.
    reports: BTreeMap<u64, (SubmitRequest, bool)>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

impl Spool {
    /// Open (creating) a spool and read what it holds. Damaged lines (a torn last write) are
    /// skipped.
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut reports: BTreeMap<u64, (SubmitRequest, bool)> = BTreeMap::new();
        if path.exists() {
            for line in BufReader::new(File::open(path)?).lines() {
                let line = line?;
                let mut parts = line.split_whitespace();
                match (parts.next(), parts.next(), parts.next()) {
                    (Some("R"), Some(h), None) => {
                        if let Some(req) = unhex(h).and_then(|b| SubmitRequest::decode(&b[..]).ok())
                        {
                            let newer = reports
                                .get(&req.lease_id)
                                .is_none_or(|(r, _)| r.seq < req.seq);
                            if newer {
                                reports.insert(req.lease_id, (req, false));
                            }
                        }
                    }
                    (Some("A"), Some(l), Some(s)) => {
                        if let (Ok(l), Ok(s)) = (l.parse::<u64>(), s.parse::<u64>()) {
                            if let Some((r, acked)) = reports.get_mut(&l) {
                                if r.seq <= s {
                                    *acked = true;
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            reports,
        })
    }

    /// Record a report before sending it (flushed to disk).
    pub fn append(&mut self, req: &SubmitRequest) -> io::Result<()> {
        writeln!(self.file, "R {}", hex(&req.encode_to_vec()))?;
        self.file.sync_data()?;
        self.reports.insert(req.lease_id, (req.clone(), false));
        Ok(())
    }

    /// Mark a report acknowledged.
    pub fn ack(&mut self, lease: u64, seq: u64) -> io::Result<()> {
        writeln!(self.file, "A {lease} {seq}")?;
        self.file.sync_data()?;
        if let Some((r, acked)) = self.reports.get_mut(&lease) {
            if r.seq <= seq {
                *acked = true;
            }
        }
        Ok(())
    }

    /// Unacknowledged reports, newest per lease.
    pub fn pending(&self) -> Vec<SubmitRequest> {
        self.reports
            .values()
            .filter(|(_, acked)| !acked)
            .map(|(r, _)| r.clone())
            .collect()
    }

    /// Rewrite the file with only the unacknowledged reports.
    pub fn compact(&mut self) -> io::Result<()> {
        self.reports.retain(|_, (_, acked)| !*acked);
        let tmp = self.path.with_extension("tmp");
        {
            let mut f = File::create(&tmp)?;
            for (r, _) in self.reports.values() {
                writeln!(f, "R {}", hex(&r.encode_to_vec()))?;
            }
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unacknowledged_reports_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        let req = |lease, seq| SubmitRequest {
            worker_id: 1,
            lease_id: lease,
            seq,
            pairs: Vec::new(),
        };
        {
            let mut s = Spool::open(&path).unwrap();
            s.append(&req(1, 1)).unwrap();
            s.ack(1, 1).unwrap();
            s.append(&req(1, 2)).unwrap();
            s.append(&req(2, 1)).unwrap();
            s.ack(2, 1).unwrap();
        }
        // A torn last line is ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"R 0a0")
            .unwrap();
        let mut s = Spool::open(&path).unwrap();
        assert_eq!(s.pending(), vec![req(1, 2)]);
        s.compact().unwrap();
        let s = Spool::open(&path).unwrap();
        assert_eq!(s.pending(), vec![req(1, 2)]);
    }
}
