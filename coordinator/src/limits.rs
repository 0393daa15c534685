//! Bounds on what the network can make the coordinator hold: open connections, calls being
//! handled at once, and bytes buffered per connection.
//!
//! Without them, memory grows with the fleet rather than with the work: 1,000 workers each
//! with a 128-pair report in flight made the coordinator hold 279 MiB of decoded requests
//! waiting for the one core thread, and a client that opens connections and never speaks
//! would hold a socket each. With them, the worst case is
//! `max_connections × CONNECTION_WINDOW` bytes buffered by HTTP/2 plus `max_calls` decoded
//! messages, whatever the clients do; the others wait in the kernel's accept backlog or in
//! the call queue (first come, first served: one client cannot starve the rest).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// HTTP/2 flow-control window per connection (and per stream): what one client can make the
/// server buffer before it reads. 256 KiB carries a 100-pair report in one window on a LAN.
pub const CONNECTION_WINDOW: u32 = 256 * 1024;

/// Streams one connection may have open at once.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 32;
/// Quiet time after which the server pings a client. A worker whose link died without a
/// reset (a pulled cable, a withdrawn route) would otherwise hold its connection slot, and
/// its buffers, for as long as TCP keeps retrying: many minutes.
pub const KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is closed.
pub const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Default for [`Limits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: u32 = 4096;
/// Default for [`Limits::max_calls`].
pub const DEFAULT_MAX_CALLS: u32 = 128;

/// How many connections and calls the server takes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open connections; further ones wait in the accept backlog until one closes.
    pub max_connections: usize,
    /// Calls being decoded, run or answered at once (all services); others queue in order.
    pub max_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS as usize,
            max_calls: DEFAULT_MAX_CALLS as usize,
        }
    }
}

/// A TCP connection that holds one of the connection permits until it is dropped.
#[derive(Debug)]
pub struct Limited {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
}

/// Accept connections from `listener`, at most `max` open at once, as a stream for
/// `serve_with_incoming` (the gRPC server; the dashboard uses [`LimitedListener`] directly).
/// The accept task ends when the stream is dropped.
pub fn incoming(
    listener: TcpListener,
    max: usize,
) -> (
    ReceiverStream<io::Result<Limited>>,
    tokio::task::JoinHandle<()>,
) {
    let mut listener = LimitedListener::new(listener, max);
    let (tx, rx) = mpsc::channel(16);
    let task = tokio::spawn(async move {
        loop {
            let (limited, _) = tokio::select! {
                accepted = axum::serve::Listener::accept(&mut listener) => accepted,
                _ = tx.closed() => return,
            };
            if tx.send(Ok(limited)).await.is_err() {
                return;
            }
        }
    });
    (ReceiverStream::new(rx), task)
}

/// A listener that holds at most `max` connections open; further ones wait in the accept
/// backlog. The dashboard serves on it (live event streams hold their connection for as long
/// as a page is open) and [`incoming`] feeds the gRPC server from it.
#[derive(Debug)]
pub struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
}

impl LimitedListener {
    /// Over a bound listener.
    pub fn new(inner: TcpListener, max: usize) -> Self {
        Self {
            inner,
            permits: Arc::new(Semaphore::new(max.max(1))),
        }
    }
}

impl axum::serve::Listener for LimitedListener {
    type Io = Limited;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            // The semaphore is never closed; should it be, wait instead of spinning.
            let Ok(permit) = self.permits.clone().acquire_owned().await else {
                std::future::pending::<()>().await;
                continue;
            };
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (
                        Limited {
                            stream,
                            _permit: permit,
                        },
                        addr,
                    );
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin or stop serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl Connected for Limited {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        TcpConnectInfo {
            local_addr: self.stream.local_addr().ok(),
            remote_addr: self.stream.peer_addr().ok(),
        }
    }
}

impl AsyncRead for Limited {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Limited {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
