//! The optional Prometheus endpoint (`[metrics] listen`): a tiny HTTP/1.1
//! responder that serves only `GET /metrics`.
//!
//! Each scrape reads the same management datasets `icnfwd status` reads,
//! over one kept-open management connection to the daemon's own Unix
//! socket, so the endpoint shows exactly what the engine reports and adds
//! no hook, lock or counter to the forwarding path. Requests are bounded in
//! size, time and concurrency; anything but `GET /metrics` gets 404/405.

mod http;
mod render;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Semaphore};

pub use render::exposition;

use super::client::Client;
use crate::config::Tables;

/// Scrapes served at once; more wait in the kernel's accept queue.
const MAX_CONCURRENT: usize = 4;
/// How long one scrape may take, request to last byte.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);

/// `[metrics]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Address of the Prometheus endpoint; absent = no endpoint (default).
    pub listen: Option<SocketAddr>,
    /// Allow a non-loopback `listen` (the endpoint has no authentication).
    pub allow_remote: bool,
}

impl MetricsConfig {
    /// Refuses a non-loopback address unless `allow_remote` says so.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        match self.listen {
            Some(a) if !a.ip().is_loopback() && !self.allow_remote => Err((
                "metrics.listen",
                "not a loopback address (set metrics.allow_remote = true to expose it)",
            )),
            _ => Ok(()),
        }
    }
}

/// Errors starting the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("cannot listen for metrics on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The endpoint: its listener, and how to reach the daemon's datasets.
pub struct MetricsServer {
    listener: TcpListener,
    socket: PathBuf,
    tables: Tables,
}

impl MetricsServer {
    /// Binds `addr` now, so that a taken port fails start-up.
    pub async fn bind(
        addr: SocketAddr,
        socket: PathBuf,
        tables: Tables,
    ) -> Result<Self, MetricsError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| MetricsError::Bind { addr, source })?;
        Ok(MetricsServer {
            listener,
            socket,
            tables,
        })
    }

    /// The bound address (the port, when `listen` asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves scrapes until the task is dropped.
    pub async fn run(self) {
        let source = Arc::new(Source {
            socket: self.socket,
            tables: self.tables,
            client: Mutex::new(None),
        });
        let permits = Arc::new(Semaphore::new(MAX_CONCURRENT));
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "metrics accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(permit) = permits.clone().acquire_owned().await else {
                return;
            };
            let source = source.clone();
            tokio::spawn(async move {
                let served =
                    tokio::time::timeout(SCRAPE_TIMEOUT, http::serve(stream, || source.scrape()))
                        .await;
                if let Ok(Err(e)) = served {
                    tracing::debug!(%peer, error = %e, "metrics request failed");
                }
                drop(permit);
            });
        }
    }
}

/// Where scrapes read from: one management connection, reopened when it
/// breaks (the daemon restarting its socket, a timeout).
struct Source {
    socket: PathBuf,
    tables: Tables,
    client: Mutex<Option<Client>>,
}

impl Source {
    /// The exposition text, or why there is none.
    async fn scrape(&self) -> Result<String, String> {
        let mut guard = self.client.lock().await;
        for attempt in 0..2 {
            if guard.is_none() {
                match Client::connect(&self.socket).await {
                    Ok(c) => *guard = Some(c),
                    Err(e) => return Err(format!("{e:#}")),
                }
            }
            let Some(c) = guard.as_mut() else { continue };
            match c.snapshot().await {
                Ok(s) => return exposition(&s, &self.tables).map_err(|e| e.to_string()),
                Err(e) => {
                    *guard = None;
                    if attempt == 1 {
                        return Err(format!("{e:#}"));
                    }
                }
            }
        }
        Err("no management connection".into())
    }
}
