//! The coordinator under test as a child process: `coordinator serve` on a database file and a
//! loopback port, killed with SIGKILL and started again on the same file and port, with its
//! CPU time and peak memory read from `/proc`.

use super::BenchError;
use std::fs::OpenOptions;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Endpoint;

/// Clock ticks per second of `/proc/<pid>/stat` times. Linux fixes USER_HZ at 100 on every
/// architecture it exports to user space (the kernel's own HZ may differ), so no `sysconf`.
const CLOCK_TICKS: f64 = 100.0;

/// How to start the coordinator.
#[derive(Debug, Clone)]
pub struct ServeSpec {
    /// The `coordinator` executable.
    pub binary: PathBuf,
    /// Database file.
    pub db: PathBuf,
    /// Address to listen on (kept across restarts).
    pub addr: SocketAddr,
    /// `serve --lease-timeout`, seconds (heartbeats every third of it).
    pub lease_timeout_s: u64,
    /// File the child's log (stderr) is appended to.
    pub log: PathBuf,
    /// Longest wait for the health check after a start.
    pub ready_timeout: Duration,
}

/// A loopback address no one listens on right now: bind port 0, note the port, let it go.
pub fn free_addr() -> Result<SocketAddr, BenchError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|source| BenchError::Io {
            what: "cannot find a free port".into(),
            source,
        })
}

/// CPU time and memory of the coordinator process(es).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub system_s: f64,
    /// Peak resident memory (VmHWM), KiB.
    pub peak_rss_kib: u64,
    /// Resident memory now (VmRSS), KiB.
    pub rss_kib: u64,
}

impl Usage {
    /// User plus system seconds.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// Of two processes one after the other: CPU adds up, memory peaks.
    fn then(self, later: Usage) -> Usage {
        Usage {
            user_s: self.user_s + later.user_s,
            system_s: self.system_s + later.system_s,
            peak_rss_kib: self.peak_rss_kib.max(later.peak_rss_kib),
            rss_kib: later.rss_kib,
        }
    }
}

/// Read `/proc/<pid>/stat` and `/proc/<pid>/status`.
pub fn usage_of(pid: u32) -> Result<Usage, BenchError> {
    let io = |what: String| move |source| BenchError::Io { what, source };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(io(format!("/proc/{pid}/stat")))?;
    let bad = || BenchError::Proc(format!("unexpected /proc/{pid}/stat: {stat:?}"));
    // `pid (comm) state ...`: comm may hold spaces and parentheses, so split after the last ')'.
    let rest = stat.rsplit_once(')').ok_or_else(bad)?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 (utime) and 15 (stime) of proc(5); `rest` starts at field 3.
    let ticks = |i: usize| -> Result<f64, BenchError> {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .map(|t| t as f64 / CLOCK_TICKS)
            .ok_or_else(bad)
    };
    let (user_s, system_s) = (ticks(14)?, ticks(15)?);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(io(format!("/proc/{pid}/status")))?;
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok(Usage {
        user_s,
        system_s,
        peak_rss_kib: kib("VmHWM:"),
        rss_kib: kib("VmRSS:"),
    })
}

/// One start of the coordinator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Start {
    /// From spawning `serve` to the health check answering.
    pub ready_after: Duration,
    /// Resident memory once ready, KiB.
    pub rss_kib: u64,
}

/// The running coordinator child; killed when dropped.
#[derive(Debug)]
pub struct Coordinator {
    spec: ServeSpec,
    child: Option<Child>,
    /// Usage of the processes already killed.
    dead: Usage,
    starts: Vec<Start>,
}

impl Coordinator {
    /// Spawn `serve` and wait until its health check answers.
    pub async fn start(spec: ServeSpec) -> Result<Self, BenchError> {
        let mut c = Self {
            spec,
            child: None,
            dead: Usage::default(),
            starts: Vec::new(),
        };
        c.spawn_and_wait().await?;
        Ok(c)
    }

    /// `http://` URL of the server.
    pub fn url(&self) -> String {
        format!("http://{}", self.spec.addr)
    }

    /// The settings it runs with.
    pub fn spec(&self) -> &ServeSpec {
        &self.spec
    }

    /// Every start so far (the first, then one per restart).
    pub fn starts(&self) -> &[Start] {
        &self.starts
    }

    /// Process id of the running child.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Usage of every process so far: CPU summed, memory peaked.
    pub fn usage(&self) -> Result<Usage, BenchError> {
        match self.pid() {
            Some(pid) => Ok(self.dead.then(usage_of(pid)?)),
            None => Ok(self.dead),
        }
    }

    /// Fail if the child has exited on its own.
    pub fn check_alive(&mut self) -> Result<(), BenchError> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => {
                self.child = None;
                Err(BenchError::Exited {
                    status: status.to_string(),
                    log: self.spec.log.clone(),
                    tail: log_tail(&self.spec.log, 10),
                })
            }
            Err(source) => Err(BenchError::Io {
                what: "cannot poll the coordinator process".into(),
                source,
            }),
        }
    }

    /// SIGKILL the child (no chance to finish anything) and reap it.
    pub async fn kill(&mut self) -> Result<(), BenchError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // Read before the kill: a dead process has no memory figures.
        if let Ok(u) = usage_of(child.id()) {
            self.dead = self.dead.then(u);
        }
        tokio::task::spawn_blocking(move || {
            let _ = child.kill();
            child.wait()
        })
        .await
        .map_err(|e| BenchError::Proc(format!("reaping the coordinator: {e}")))?
        .map_err(|source| BenchError::Io {
            what: "cannot reap the coordinator".into(),
            source,
        })?;
        Ok(())
    }

    /// SIGKILL the child and start it again on the same database and port; returns how long
    /// the new one took to answer.
    pub async fn restart(&mut self) -> Result<Duration, BenchError> {
        self.kill().await?;
        self.spawn_and_wait().await
    }

    async fn spawn_and_wait(&mut self) -> Result<Duration, BenchError> {
        let spec = self.spec.clone();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&spec.log)
            .map_err(|source| BenchError::Io {
                what: format!("cannot open {}", spec.log.display()),
                source,
            })?;
        let t0 = Instant::now();
        let child = Command::new(&spec.binary)
            .arg("serve")
            .arg("--db")
            .arg(&spec.db)
            .arg("--listen")
            .arg(spec.addr.to_string())
            .arg("--lease-timeout")
            .arg(spec.lease_timeout_s.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|source| BenchError::Io {
                what: format!("cannot start {}", spec.binary.display()),
                source,
            })?;
        self.child = Some(child);
        let deadline = t0 + spec.ready_timeout;
        let url = self.url();
        loop {
            self.check_alive()?;
            if healthy(&url).await {
                break;
            }
            if Instant::now() > deadline {
                return Err(BenchError::NotReady {
                    after: spec.ready_timeout,
                    log: spec.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let ready_after = t0.elapsed();
        let rss_kib = self
            .pid()
            .and_then(|pid| usage_of(pid).ok())
            .map_or(0, |u| u.rss_kib);
        self.starts.push(Start {
            ready_after,
            rss_kib,
        });
        Ok(ready_after)
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether the health service answers SERVING.
async fn healthy(url: &str) -> bool {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    let Ok(ep) = Endpoint::from_shared(url.to_string()) else {
        return false;
    };
    let Ok(ch) = ep
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
    else {
        return false;
    };
    let mut client = HealthClient::new(ch);
    let req = HealthCheckRequest {
        service: String::new(),
    };
    matches!(
        client.check(req).await,
        Ok(r) if r.get_ref().status == ServingStatus::Serving as i32
    )
}

/// The last `lines` lines of a log file (for error messages).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
