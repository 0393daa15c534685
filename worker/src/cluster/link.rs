//! The worker's connection to the coordinator: URL, TLS and the timers that notice a dead
//! link.
//!
//! Everything is checked once, at start: a bad URL, an unreadable or empty CA file is an error
//! before any game is played, not a retry loop. Each session then opens a fresh channel from
//! the same [`Link`].
//!
//! A link that goes quiet without a reset (a cable pulled, a cloud route withdrawn) leaves TCP
//! waiting for minutes; HTTP/2 keep-alive pings notice it within
//! [`KEEPALIVE_INTERVAL`] + [`KEEPALIVE_TIMEOUT`], and every call has a deadline, so the worker
//! reconnects (and resends its spool) instead of hanging on a dead socket.

use std::path::{Path, PathBuf};
use std::time::Duration;

use thiserror::Error;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::Status;

/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Deadline of every call. Reports are idempotent (a resent report is answered `duplicate`),
/// so a call cut off by it is simply sent again.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Quiet time after which the worker pings the coordinator.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
/// How long a ping may go unanswered before the connection is taken as dead.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the coordinator's address or TLS settings cannot be used.
#[derive(Debug, Error)]
pub enum LinkError {
    /// Not a URL tonic can connect to.
    #[error("bad --coordinator URL {url:?}: {message}")]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// `--ca` given for a plain `http://` coordinator: it would be silently unused.
    #[error("--ca {path} is given but the coordinator URL {url:?} is not https://")]
    CaWithoutTls {
        /// The CA file.
        path: PathBuf,
        /// The URL given.
        url: String,
    },
    /// The CA file cannot be read.
    #[error("--ca {path}: {source}")]
    CaRead {
        /// The CA file.
        path: PathBuf,
        /// The read error.
        source: std::io::Error,
    },
    /// The CA file holds no PEM certificate, or one that does not parse.
    #[error("--ca {path}: {message}")]
    CaBad {
        /// The CA file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// A checked coordinator address: opens channels.
#[derive(Debug, Clone)]
pub struct Link {
    endpoint: Endpoint,
}

impl Link {
    /// Check `url` (`http://` or `https://`) and, for TLS, the optional private root `ca`
    /// (PEM; without it the public web roots are trusted).
    pub fn new(url: &str, ca: Option<&Path>) -> Result<Self, LinkError> {
        let url_err = |message: String| LinkError::Url {
            url: url.to_string(),
            message,
        };
        let tls = url.starts_with("https://");
        if !tls && !url.starts_with("http://") {
            return Err(url_err("it must start with http:// or https://".into()));
        }
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| url_err(e.to_string()))?
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .keep_alive_while_idle(true)
            .tcp_keepalive(Some(KEEPALIVE_INTERVAL));
        match (tls, ca) {
            (false, Some(path)) => {
                return Err(LinkError::CaWithoutTls {
                    path: path.to_path_buf(),
                    url: url.to_string(),
                })
            }
            (false, None) => {}
            (true, ca) => {
                let mut config = ClientTlsConfig::new().with_webpki_roots();
                if let Some(path) = ca {
                    config = config.ca_certificate(read_ca(path)?);
                }
                endpoint = endpoint.tls_config(config).map_err(|e| LinkError::CaBad {
                    path: ca.map(Path::to_path_buf).unwrap_or_default(),
                    message: e.to_string(),
                })?;
            }
        }
        Ok(Self { endpoint })
    }

    /// Open a channel (one per session).
    pub async fn connect(&self) -> Result<Channel, Status> {
        self.endpoint
            .connect()
            .await
            .map_err(|e| Status::unavailable(describe(&e)))
    }
}

/// The error with its causes: tonic's own message is only "transport error".
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Read a PEM root certificate, refusing a file with none in it (tonic would accept it and
/// then fail every handshake with an unhelpful message).
fn read_ca(path: &Path) -> Result<Certificate, LinkError> {
    let pem = std::fs::read(path).map_err(|source| LinkError::CaRead {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&pem);
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Err(LinkError::CaBad {
            path: path.to_path_buf(),
            message: "no PEM certificate (-----BEGIN CERTIFICATE-----) in the file".into(),
        });
    }
    Ok(Certificate::from_pem(pem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_url_without_ca_is_accepted() {
        assert!(Link::new("http://127.0.0.1:50051", None).is_ok());
    }

    #[test]
    fn url_without_scheme_is_refused_by_name() {
        let e = Link::new("127.0.0.1:50051", None).unwrap_err();
        assert!(e.to_string().contains("http:// or https://"), "{e}");
    }

    #[test]
    fn ca_with_plain_url_is_refused() {
        let e = Link::new("http://127.0.0.1:1", Some(Path::new("ca.pem"))).unwrap_err();
        assert!(matches!(e, LinkError::CaWithoutTls { .. }), "{e}");
    }

    #[test]
    fn missing_ca_file_is_named() {
        let e = Link::new(
            "https://127.0.0.1:1",
            Some(Path::new("/nonexistent/ca.pem")),
        )
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
    }

    #[test]
    fn ca_file_without_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let e = Link::new("https://127.0.0.1:1", Some(&path)).unwrap_err();
        assert!(e.to_string().contains("no PEM certificate"), "{e}");
    }

    #[test]
    fn garbled_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(
            &path,
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = Link::new("https://127.0.0.1:1", Some(&path)).unwrap_err();
        assert!(matches!(e, LinkError::CaBad { .. }), "{e}");
    }
}
