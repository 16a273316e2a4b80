//! The tokio shell around [`Node`]: sockets, one timer, signals.
//!
//! One engine task owns the `Node` and runs on its own single-threaded
//! runtime (see [`run`]). UDP sockets are the engine task's own: it drains
//! them with `recvmmsg` and sends with `sendmmsg` (see [`udp`]). Other IO
//! tasks only move bytes: AF_PACKET Ethernet sockets (batched
//! `recvmmsg`/`sendmmsg`), stream readers/writers for TCP and Unix faces, and
//! accept loops. What they receive reaches the engine task as `Vec<Inbound>`
//! batches on one bounded channel; what it sends them leaves per face
//! (batches per Ethernet socket, a bounded queue per stream).

pub mod client;
pub mod ethernet;
mod listen;
pub mod metrics;
pub mod mmsg;
pub mod notify;
pub mod shard;
mod shell;
pub mod status;
pub mod stream;
pub mod udp;

use std::path::PathBuf;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::engine::FaceId;

/// What IO tasks hand to the engine task.
#[derive(Debug)]
pub enum Inbound {
    /// A frame on Ethernet channel `chan`, sent to the NDN group
    /// (`multicast`) or to this host by `from`.
    Eth {
        chan: usize,
        from: ethernet::Mac,
        multicast: bool,
        pkt: Bytes,
    },
    /// One element read from a stream face.
    Stream { face: FaceId, pkt: Bytes },
    /// The stream of `face` ended.
    StreamClosed { face: FaceId },
    /// The writer of `face`, full a moment ago, has room again.
    StreamWritable { face: FaceId },
    /// A new connection on a listener.
    Accepted(AnyStream),
    /// A TCP connect for faces/create (`token`) or a permanent face finished.
    Connected {
        purpose: ConnectPurpose,
        result: std::io::Result<tokio::net::TcpStream>,
    },
}

/// Why a TCP connection was opened.
#[derive(Debug, Clone, Copy)]
pub enum ConnectPurpose {
    /// faces/create with this token and persistency.
    Create { token: u64, persistency: u64 },
    /// (Re)connecting a permanent face that already exists in the engine.
    Permanent(FaceId),
}

/// An accepted stream.
#[derive(Debug)]
pub enum AnyStream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

pub type InboundTx = mpsc::Sender<Vec<Inbound>>;
/// Inbound batches (stream reads, accepts, connects) an engine turn takes
/// beside the UDP sockets' bounded reads.
const INBOUND_BATCHES_PER_TURN: usize = 64;

/// Replaces the log filter on SIGHUP (a `tracing_subscriber` reload handle
/// behind a closure); returns why a filter was refused.
pub type LogReload = Box<dyn Fn(&str) -> Result<(), String> + Send>;

/// Runs the daemon until SIGINT/SIGTERM. `config_path` is re-read on SIGHUP.
///
/// The engine and every face run on one dedicated thread with a
/// current-thread runtime, whatever runtime calls this: a datagram burst then
/// costs one wakeup of one thread (the one that waits in `epoll`) rather
/// than hand-offs between worker threads, which on a small machine cost more
/// than the forwarding itself.
pub async fn run(cfg: Config, config_path: Option<PathBuf>) -> anyhow::Result<()> {
    on_engine_thread(cfg, config_path, None).await
}

/// [`run`], and on SIGHUP also applies the file's `log_level` through
/// `log_reload`.
pub async fn run_with_log_reload(
    cfg: Config,
    config_path: Option<PathBuf>,
    log_reload: LogReload,
) -> anyhow::Result<()> {
    on_engine_thread(cfg, config_path, Some(log_reload)).await
}

/// Runs the future `task` makes on a new thread named `name`, with a
/// current-thread runtime of its own, and returns its result (an error
/// naming the `what` thread if it panicked).
pub(crate) async fn on_own_thread<F, Fut>(name: &str, what: &str, task: F) -> anyhow::Result<()>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(task()));
            let _ = done_tx.send(result);
        })?;
    done_rx
        .await
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the {what} thread panicked")))
}

async fn on_engine_thread(
    cfg: Config,
    config_path: Option<PathBuf>,
    log_reload: Option<LogReload>,
) -> anyhow::Result<()> {
    // Experimental (issue 21): `[engine] threads` > 1 runs the sharded engine.
    if cfg.engine.prototype() {
        return shard::run(cfg).await;
    }
    // Bound before the engine starts, so that a taken port fails start-up;
    // served on the caller's runtime, off the engine thread.
    let metrics = match cfg.metrics.listen {
        Some(addr) => {
            let m = metrics::MetricsServer::bind(addr, cfg.unix.path.clone(), cfg.tables.clone())
                .await?;
            tracing::info!(local = %m.local_addr()?, "metrics endpoint listening");
            Some(tokio::spawn(m.run()))
        }
        None => None,
    };
    let result = on_own_thread("icnfwd-engine", "engine", move || {
        shell::run(cfg, config_path, log_reload)
    })
    .await;
    if let Some(task) = metrics {
        task.abort();
    }
    result
}
