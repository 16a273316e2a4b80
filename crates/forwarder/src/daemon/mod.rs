//! The tokio shell around [`Node`]: sockets, one timer, signals.
//!
//! One engine task owns the `Node`. IO tasks only move bytes: UDP sockets
//! and AF_PACKET Ethernet sockets (batched `recvmmsg`/`sendmmsg`), stream
//! readers/writers for TCP and Unix faces, and accept loops. Everything received reaches the engine task as
//! `Vec<Inbound>` batches on one bounded channel; everything sent leaves it
//! per face (UDP batches per socket, a bounded queue per stream).

pub mod client;
pub mod ethernet;
mod listen;
mod mmsg;
pub mod notify;
mod shell;
pub mod status;
pub mod stream;
pub mod udp;

use std::net::SocketAddr;
use std::path::PathBuf;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::engine::FaceId;

/// What IO tasks hand to the engine task.
#[derive(Debug)]
pub enum Inbound {
    /// A datagram on UDP socket `sock`.
    Udp {
        sock: usize,
        from: SocketAddr,
        pkt: Bytes,
    },
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

/// Replaces the log filter on SIGHUP (a `tracing_subscriber` reload handle
/// behind a closure); returns why a filter was refused.
pub type LogReload = Box<dyn Fn(&str) -> Result<(), String> + Send>;

/// Runs the daemon until SIGINT/SIGTERM. `config_path` is re-read on SIGHUP.
pub async fn run(cfg: Config, config_path: Option<PathBuf>) -> anyhow::Result<()> {
    shell::run(cfg, config_path, None).await
}

/// [`run`], and on SIGHUP also applies the file's `log_level` through
/// `log_reload`.
pub async fn run_with_log_reload(
    cfg: Config,
    config_path: Option<PathBuf>,
    log_reload: LogReload,
) -> anyhow::Result<()> {
    shell::run(cfg, config_path, Some(log_reload)).await
}
