//! The tokio shells that drive [`Fetcher`] and [`Publisher`] over a [`Face`].

use crate::fetch::{FetchError, Fetcher};
use crate::logs::FetchLogs;
use crate::mgmt::{self, CommandSigning, ControlResponse};
use crate::publisher::Publisher;
use crate::stats::{FetchStats, StopReason};
use crate::transport::Face;
use bytes::BytesMut;
use cc_core::Timestamp;
use icn_tlv::{decode_packet, Name, NetPacket};
use std::future::Future;
use std::io::{self, Write};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Errors of the shells.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("I/O: {0}")]
    Io(#[from] io::Error),
    #[error("the forwarder closed the connection")]
    Closed,
    #[error("prefix registration failed: {0}")]
    Register(String),
}

/// Monotonic clock handing out [`Timestamp`]s since its creation.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    pub fn new() -> Self {
        Clock(Instant::now())
    }
    pub fn now(&self) -> Timestamp {
        Timestamp::from_nanos(u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
    fn instant(&self, t: Timestamp) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.0 + std::time::Duration::from_nanos(t.as_nanos()))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// Called about every 200 ms with the fetcher, for progress display.
pub type Progress<'a> = &'a mut dyn FnMut(&Fetcher, bool);

/// Runs a fetch to completion, writing content in order to `out` and the
/// pipeline's log events to `logs`.
pub async fn fetch(
    face: &mut Face,
    fetcher: &mut Fetcher,
    out: &mut dyn Write,
    progress: Option<Progress<'_>>,
    logs: &mut FetchLogs,
) -> Result<FetchStats, RunError> {
    fetch_until(
        face,
        fetcher,
        out,
        progress,
        logs,
        std::future::pending::<StopReason>(),
    )
    .await
}

/// Like [`fetch`], but ends early when `stop` resolves: what was received
/// so far is written to `out`, the logs are flushed, and the stats say
/// `completed: false, stopped_by: Some(reason)` with the elapsed time and
/// goodput up to the stop. Completion wins if both happen in one turn.
pub async fn fetch_until(
    face: &mut Face,
    fetcher: &mut Fetcher,
    out: &mut dyn Write,
    progress: Option<Progress<'_>>,
    logs: &mut FetchLogs,
    stop: impl Future<Output = StopReason>,
) -> Result<FetchStats, RunError> {
    tokio::pin!(stop);
    let clock = Clock::new();
    let sender = face.sender();
    let mut progress = progress;
    let mut last_progress = Instant::now();
    let mut rx = Vec::new();
    loop {
        let now = clock.now();
        if fetcher.poll_timeout().is_some_and(|t| t <= now) {
            fetcher.handle_timeout(now);
        }
        let mut batch = BytesMut::new();
        while let Some(p) = fetcher.poll_transmit(now) {
            batch.extend_from_slice(&p);
            if batch.len() > 64 * 1024 {
                sender.send(batch.split().freeze()).await?;
            }
        }
        if !batch.is_empty() {
            sender.send(batch.freeze()).await?;
        }
        while let Some(c) = fetcher.poll_output() {
            out.write_all(&c)?;
        }
        while let Some(e) = fetcher.poll_log() {
            logs.write(&e)?;
        }
        if let Some(p) = progress.as_mut() {
            if last_progress.elapsed().as_millis() >= 200 || fetcher.is_done() {
                last_progress = Instant::now();
                p(fetcher, fetcher.is_done());
            }
        }
        if let Some(e) = fetcher.error() {
            fetcher.finish_timing(clock.now());
            logs.flush()?;
            return Err(e.into());
        }
        if fetcher.is_done() {
            out.flush()?;
            logs.flush()?;
            let mut st = fetcher.stats();
            st.completed = true;
            return Ok(st);
        }
        let deadline = fetcher.poll_timeout();
        tokio::select! {
            reason = &mut stop => {
                return stopped(fetcher, &clock, out, logs, progress, reason);
            }
            r = face.recv(&mut rx) => {
                if !r? {
                    return Err(RunError::Closed);
                }
                let now = clock.now();
                for p in rx.drain(..) {
                    fetcher.handle_packet(now, p);
                }
            }
            _ = sleep_opt(deadline.map(|d| clock.instant(d))) => {}
        }
    }
}

/// The clean end of a stopped fetch: hands out what is in order, flushes
/// content and logs, and closes the timing window at the stop.
fn stopped(
    fetcher: &mut Fetcher,
    clock: &Clock,
    out: &mut dyn Write,
    logs: &mut FetchLogs,
    progress: Option<Progress<'_>>,
    reason: StopReason,
) -> Result<FetchStats, RunError> {
    while let Some(c) = fetcher.poll_output() {
        out.write_all(&c)?;
    }
    while let Some(e) = fetcher.poll_log() {
        logs.write(&e)?;
    }
    out.flush()?;
    logs.flush()?;
    fetcher.finish_timing(clock.now());
    if let Some(p) = progress {
        p(fetcher, true);
    }
    let mut st = fetcher.stats();
    st.stopped_by = Some(reason);
    Ok(st)
}

async fn sleep_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Registers `prefix` on the forwarder with a signed `rib/register` and
/// waits for its ControlResponse (3 tries of 1 s, like python-ndn's lifetime).
pub async fn register(face: &mut Face, prefix: &Name) -> Result<ControlResponse, RunError> {
    let sender = face.sender();
    let mut rx = Vec::new();
    for _ in 0..3 {
        let s = CommandSigning {
            time_ms: unix_ms(),
            sig_nonce: rand::random(),
            nonce: rand::random(),
        };
        let cmd = mgmt::rib_register(prefix, s);
        let want = cmd.encoded_name();
        sender.send(cmd.encode()).await?;
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(1000);
        loop {
            tokio::select! {
                r = face.recv(&mut rx) => {
                    if !r? { return Err(RunError::Closed); }
                    for p in rx.drain(..) {
                        match decode_packet(p) {
                            Ok((_, Some(NetPacket::Data(d)))) if d.name == want => {
                                let resp = ControlResponse::decode(&d.content)
                                    .map_err(|e| RunError::Register(e.to_string()))?;
                                return resp.into_result().map_err(|e| RunError::Register(e.to_string()));
                            }
                            Ok((lp, Some(NetPacket::Interest(i)))) if lp.nack.is_some() && i.name == want => {
                                return Err(RunError::Register(format!("Nack {:?}", lp.nack)));
                            }
                            _ => {}
                        }
                    }
                }
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
    }
    Err(RunError::Register(
        "no reply from the forwarder (timeout)".into(),
    ))
}

/// Serves Interests until the forwarder closes the face.
pub async fn serve(face: &mut Face, publisher: &mut Publisher) -> Result<(), RunError> {
    let sender = face.sender();
    let mut rx = Vec::new();
    loop {
        if !face.recv(&mut rx).await? {
            return Ok(());
        }
        // Segments go out in pieces, their content straight from the
        // mapped file (one vectored write per batch, no copy here).
        let mut parts = Vec::with_capacity(3 * rx.len());
        for p in rx.drain(..) {
            if let Ok((lp, Some(NetPacket::Interest(i)))) = decode_packet(p) {
                if lp.nack.is_some() {
                    continue;
                }
                if let Some(d) = publisher.reply(&i, &lp.cc) {
                    d.push_parts(&mut parts);
                }
            }
        }
        if !parts.is_empty() {
            sender.send_parts(parts).await?;
        }
    }
}
