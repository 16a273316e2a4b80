//! SRMCC multicast tools (issue 7): `icnput --multicast` streams a file or
//! stdin as a group source, `icncat --subscribe` joins a group and writes
//! the stream. The protocol state machines are `icn_multicast`'s
//! [`MulticastSource`] and [`MulticastReceiver`]; this module is only the
//! tokio shell around them (clock, face, file I/O, reports).
//!
//! Wire (see `crates/multicast/README.md`): joins/leaves are Interests
//! `/<group>/32=mcast-join|mcast-leave`, the stream is Data
//! `/<group>/seq=<n>`, feedback is an LpPacket with the MCC header.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::time::Instant;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_multicast::wire::Subscription;
use icn_multicast::{
    Delivery, MulticastReceiver, MulticastSource, ReceiverConfig, RepairConfig, SourceConfig,
};
use icn_tlv::{decode_packet, Name, NetPacket};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::run::{self, RunError};
use crate::transport::Face;

/// Monotonic clock as cc-core timestamps since the tool started.
#[derive(Debug, Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
    fn instant(&self, t: Timestamp) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.0 + core::time::Duration::from_nanos(t.as_nanos()))
    }
}

/// Options of a multicast source.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Payload bytes per group Data.
    pub chunk_size: usize,
    /// RTT that sets the adaptation cycle (4 × RTT); given, it stays in
    /// force (the receivers' reports are not followed), `None`: the cycle
    /// follows the RTT receivers measure (icn-multicast's `rtt`).
    pub rtt: Option<Duration>,
    /// How long to keep answering feedback and repairs after the last
    /// packet: a receiver that lost the stream's tail asks for it after a
    /// silence (`icn_multicast::tail`) and repairs holes for its repair
    /// window, so a source leaving sooner leaves that tail unrepairable.
    pub linger: Duration,
    /// Print the rate once per report interval.
    pub quiet: bool,
    /// Report interval.
    pub report_interval: Duration,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            chunk_size: 1000,
            rtt: None,
            linger: icn_multicast::RepairConfig::default().window,
            quiet: false,
            report_interval: Duration::from_secs(1),
        }
    }
}

/// What a source did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SourceReport {
    /// Group Data sent.
    pub packets_sent: u64,
    /// Data wire bytes sent.
    pub bytes_sent: u64,
    /// MCC messages received (one per period from the first-hop node).
    pub feedback_in: u64,
    /// Algorithm 1 runs.
    pub adaptations: u64,
    /// Repair Interests answered from the source's buffer.
    pub repairs_answered: u64,
    /// Repair Interests for packets no longer buffered.
    pub repairs_missed: u64,
    /// Rate at the end, bit/s.
    pub final_rate_bps: f64,
    /// Seconds from the first to the last packet.
    pub duration_s: f64,
    /// (time s, rate bit/s) after each adaptation.
    pub rates: Vec<(f64, f64)>,
}

/// Spawns a thread reading `input` in `chunk`-byte pieces into a bounded
/// channel (the pacer, not the reader, sets the pace).
fn spawn_reader(mut input: Box<dyn Read + Send>, chunk: usize) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; chunk];
        loop {
            let mut filled = 0;
            while filled < chunk {
                match input.read(&mut buf[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            if filled == 0
                || tx
                    .blocking_send(Bytes::copy_from_slice(&buf[..filled]))
                    .is_err()
            {
                return;
            }
            if filled < chunk {
                return;
            }
        }
    });
    rx
}

/// Registers `group` on the forwarder and streams `input` as its source
/// until the input ends (and `linger` passes) or the forwarder closes.
///
/// # Errors
/// Registration or face errors.
pub async fn run_source(
    face: &mut Face,
    group: &Name,
    input: Box<dyn Read + Send>,
    opts: &SourceOptions,
) -> Result<SourceReport, RunError> {
    run::register(face, group).await?;
    let clock = Clock(Instant::now());
    let cfg = SourceConfig {
        rtt: opts.rtt,
        // A user's RTT is not overridden behind their back.
        measure_rtt: opts.rtt.is_none(),
        ..SourceConfig::default()
    };
    let mut src = MulticastSource::new(group.clone(), cfg, clock.now());
    let mut chunks = spawn_reader(input, opts.chunk_size.max(1));
    let sender = face.sender();
    let mut buf: VecDeque<Bytes> = VecDeque::new();
    let mut eof = false;
    let mut done_at: Option<Timestamp> = None;
    let mut first_at: Option<Timestamp> = None;
    let mut report = SourceReport::default();
    let mut next_report = clock.now() + opts.report_interval;
    let mut waiting_said = false;
    let mut rx = Vec::new();
    loop {
        let now = clock.now();
        if let Some(rate) = src.handle_timeout(now) {
            report.rates.push((now.as_secs_f64(), rate));
        }
        // Send while the pacer allows; hold one chunk back to know the last.
        while done_at.is_none()
            && src.has_subscribers(now)
            && src.can_send(now)
            && (buf.len() >= 2 || eof)
        {
            let chunk = buf.pop_front().unwrap_or_default();
            let end = eof && buf.is_empty();
            sender.send(src.send(now, chunk, end)).await?;
            first_at.get_or_insert(now);
            if end {
                done_at = Some(now);
            }
        }
        if done_at.is_some_and(|t| now.saturating_since(t) >= opts.linger) {
            break;
        }
        if now >= next_report {
            next_report = now + opts.report_interval;
            if !opts.quiet {
                if src.has_subscribers(now) {
                    let fb = src.last_feedback();
                    eprintln!(
                        "{:8.1}s rate {:>10.0} bit/s  sent {:>7}  feedback {}  {}",
                        now.as_secs_f64(),
                        src.rate_bps(),
                        src.stats().packets_sent,
                        src.stats().feedback_in,
                        fb.map_or(String::new(), |m| format!(
                            "(Omax {:.3} Omin {:.3} fair {:.0})",
                            m.max_occupancy, m.min_occupancy, m.min_fair_share_bps
                        )),
                    );
                } else if !waiting_said {
                    waiting_said = true;
                    eprintln!("waiting for subscribers of {group}");
                }
            }
        }
        let sending = done_at.is_none() && src.has_subscribers(now) && (buf.len() >= 2 || eof);
        let mut wake = src.poll_timeout().min(next_report);
        if sending {
            wake = wake.min(src.next_send_time());
        }
        wake = wake.min(now + Duration::from_millis(200));
        tokio::select! {
            r = face.recv(&mut rx) => {
                if !r? {
                    return Err(RunError::Closed);
                }
                let now = clock.now();
                for p in rx.drain(..) {
                    let Ok((lp, net)) = decode_packet(p) else { continue };
                    if let Some(fb) = lp.mcc {
                        let _ = src.handle_feedback(now, &fb);
                    }
                    if let Some(NetPacket::Interest(i)) = net {
                        if lp.nack.is_some() {
                            continue;
                        }
                        if let Some(sub) = Subscription::from_interest(&i) {
                            let _ = src.handle_subscription(now, &sub);
                        } else if let Some(d) = src.answer_repair(&i) {
                            // A receiver's repair of a lost packet.
                            sender.send(d).await?;
                        }
                    }
                }
            }
            c = chunks.recv(), if !eof && buf.len() < 2 => match c {
                Some(b) => buf.push_back(b),
                None => eof = true,
            },
            _ = tokio::time::sleep_until(clock.instant(wake)) => {}
        }
    }
    let s = src.stats();
    report.packets_sent = s.packets_sent;
    report.bytes_sent = s.bytes_sent;
    report.feedback_in = s.feedback_in;
    report.adaptations = s.adaptations;
    report.repairs_answered = s.repairs_answered;
    report.repairs_missed = s.repairs_missed;
    report.final_rate_bps = src.rate_bps();
    report.duration_s = match (first_at, done_at) {
        (Some(a), Some(b)) => b.saturating_since(a).as_secs_f64(),
        _ => 0.0,
    };
    Ok(report)
}

/// What a receiver reports when neither `--access-capacity` nor anything
/// else is known: a ceiling, so that a tree without any configured
/// capacity (unpaced faces, no queue, no occupancy signal) cannot make the
/// source double its rate without bound. Faces with a known capacity lower
/// it at the first forwarder.
pub const DEFAULT_ACCESS_CAPACITY_BPS: u64 = 100_000_000;

/// Options of a subscriber.
#[derive(Debug, Clone)]
pub struct SubscribeOptions {
    /// Access-link capacity reported as the initial fair share, bit/s.
    /// `None` reports [`DEFAULT_ACCESS_CAPACITY_BPS`]; either way the
    /// forwarder the receiver is attached to caps the report with the
    /// capacity of the receiver's face when it has one, and every tree node
    /// adds its upstream link's fair share.
    pub access_capacity_bps: Option<u64>,
    /// Repair gaps with Interests `/<group>/seq=<n>`; `None` writes what
    /// arrives and reports the gaps.
    pub repair: Option<RepairConfig>,
    /// The stream starts at sequence 0 (joined before the source began):
    /// a lost first packet is repaired; otherwise the first packet that
    /// arrives is the start (a live join).
    pub from_start: bool,
    /// Stop after this long without group Data once the stream started.
    pub idle_timeout: Duration,
    /// Stop after this long in any case.
    pub max_duration: Option<Duration>,
    /// Print rate and loss once per second.
    pub quiet: bool,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        SubscribeOptions {
            access_capacity_bps: None,
            repair: Some(RepairConfig::default()),
            from_start: false,
            idle_timeout: Duration::from_secs(5),
            max_duration: None,
            quiet: false,
        }
    }
}

/// One second of a subscription.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SubscribeSample {
    /// Seconds since the subscription started.
    pub t_s: f64,
    /// Received wire rate over the last window, bit/s.
    pub received_rate_bps: f64,
    /// Rate the source announced in its latest packet, bit/s.
    pub announced_rate_bps: u64,
    /// Sequence-gap losses so far.
    pub lost: u64,
}

/// What a subscriber received.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SubscribeReport {
    /// Group Data received (not counting duplicates).
    pub packets: u64,
    /// Payload bytes written.
    pub payload_bytes: u64,
    /// Data wire bytes received.
    pub wire_bytes: u64,
    /// Packets missing from the sequence (gaps not filled later).
    pub lost: u64,
    /// Packets that filled a gap late (reordered or repaired).
    pub late: u64,
    /// Repair Interests sent (tail probes included).
    pub repair_interests: u64,
    /// Asks for the packet after the highest one seen, after a silence
    /// (how a lost end of the stream is found).
    pub tail_probes: u64,
    /// Gaps filled by a repair.
    pub repaired: u64,
    /// Packets lost and not repaired within the window: holes in the
    /// output (the output is written in sequence order without them).
    pub unrepaired: u64,
    /// The unrepaired sequence numbers as inclusive ranges (at most 1000).
    pub unrepaired_ranges: Vec<(u64, u64)>,
    /// Duplicates.
    pub duplicates: u64,
    /// lost / (received + lost).
    pub loss_ratio: f64,
    /// Mean wire rate from the first to the last packet, bit/s.
    pub mean_rate_bps: f64,
    /// Lowest, highest and last rate announced by the source, bit/s.
    pub announced_min_bps: u64,
    /// Highest announced rate.
    pub announced_max_bps: u64,
    /// Last announced rate.
    pub announced_last_bps: u64,
    /// True when the source's end-of-stream packet arrived.
    pub ended: bool,
    /// Per-second series.
    pub samples: Vec<SubscribeSample>,
}

impl SubscribeReport {
    /// A short human summary.
    pub fn summary(&self) -> String {
        format!(
            "Received {} packets ({} payload bytes), lost {} ({:.2} %), late {}, duplicates {}\n\
             Repair: {} Interests ({} tail probes), {} repaired, {} unrepaired\n\
             Mean rate {:.3} Mbit/s; source announced {:.3}..{:.3} Mbit/s (last {:.3}); end {}\n",
            self.packets,
            self.payload_bytes,
            self.lost,
            self.loss_ratio * 100.0,
            self.late,
            self.duplicates,
            self.repair_interests,
            self.tail_probes,
            self.repaired,
            self.unrepaired,
            self.mean_rate_bps / 1e6,
            self.announced_min_bps as f64 / 1e6,
            self.announced_max_bps as f64 / 1e6,
            self.announced_last_bps as f64 / 1e6,
            self.ended,
        )
    }
}

/// Joins `group` and writes the stream's payloads to `out` until the end
/// packet, the idle timeout, `max_duration` or the forwarder closing; then
/// leaves.
///
/// # Errors
/// Face or write errors.
pub async fn run_subscriber(
    face: &mut Face,
    group: &Name,
    out: &mut dyn Write,
    opts: &SubscribeOptions,
) -> Result<SubscribeReport, RunError> {
    let clock = Clock(Instant::now());
    let cfg = ReceiverConfig {
        access_capacity_bps: opts
            .access_capacity_bps
            .unwrap_or(DEFAULT_ACCESS_CAPACITY_BPS),
        repair: opts.repair,
        start_seq: opts.from_start.then_some(0),
        ..ReceiverConfig::default()
    };
    let mut rx = MulticastReceiver::new(group.clone(), cfg, clock.now());
    let sender = face.sender();
    let mut report = SubscribeReport {
        announced_min_bps: u64::MAX,
        ..SubscribeReport::default()
    };
    let mut first_at: Option<Timestamp> = None;
    let mut last_at: Option<Timestamp> = None;
    let mut next_sample = clock.now() + Duration::from_secs(1);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut frames = Vec::new();
    'outer: loop {
        let now = clock.now();
        rx.handle_timeout(now);
        while let Some(o) = rx.poll_output() {
            sender.send(o.encode(rand::random())).await?;
        }
        if now >= next_sample {
            next_sample = now + Duration::from_secs(1);
            let s = rx.stats();
            let sample = SubscribeSample {
                t_s: now.as_secs_f64(),
                received_rate_bps: rx.received_rate_bps(),
                announced_rate_bps: s.announced_rate_bps,
                lost: s.lost,
            };
            if !opts.quiet {
                eprintln!(
                    "{:8.1}s received {:>10.0} bit/s  packets {:>7}  lost {:>5} ({:.2} %)  announced {:>10} bit/s",
                    sample.t_s,
                    sample.received_rate_bps,
                    s.packets,
                    s.lost,
                    s.loss_ratio() * 100.0,
                    s.announced_rate_bps
                );
            }
            if report.samples.len() < 86_400 {
                report.samples.push(sample);
            }
        }
        write_deliveries(&mut rx, out, &mut report)?;
        if rx.is_complete() {
            break;
        }
        if last_at.is_some_and(|t| now.saturating_since(t) >= opts.idle_timeout) {
            break;
        }
        if opts
            .max_duration
            .is_some_and(|d| now >= Timestamp::ZERO + d)
        {
            break;
        }
        let wake = rx
            .poll_timeout()
            .min(next_sample)
            .min(now + Duration::from_millis(200));
        tokio::select! {
            r = face.recv(&mut frames) => {
                if !r? {
                    break 'outer;
                }
                let now = clock.now();
                for p in frames.drain(..) {
                    let Ok((_, Some(NetPacket::Data(d)))) = decode_packet(p) else { continue };
                    let Ok(pkt) = rx.handle_data(now, &d) else { continue };
                    first_at.get_or_insert(now);
                    last_at = Some(now);
                    let a = pkt.rate_bps;
                    report.announced_min_bps = report.announced_min_bps.min(a);
                    report.announced_max_bps = report.announced_max_bps.max(a);
                }
                write_deliveries(&mut rx, out, &mut report)?;
            }
            _ = tokio::time::sleep_until(clock.instant(wake)) => {}
            _ = &mut ctrl_c => break 'outer,
        }
    }
    rx.finish();
    write_deliveries(&mut rx, out, &mut report)?;
    rx.leave();
    while let Some(o) = rx.poll_output() {
        // Best effort: the forwarder may already be gone.
        let _ = sender.send(o.encode(rand::random())).await;
    }
    let s = *rx.stats();
    report.packets = s.packets;
    report.payload_bytes = s.payload_bytes;
    report.wire_bytes = s.wire_bytes;
    report.lost = s.lost;
    report.late = s.late;
    report.duplicates = s.duplicates;
    let rp = rx.repair_stats();
    report.repair_interests = rp.interests + s.tail_probes;
    report.tail_probes = s.tail_probes;
    report.repaired = rp.repaired;
    report.loss_ratio = s.loss_ratio();
    report.announced_last_bps = s.announced_rate_bps;
    if report.announced_min_bps == u64::MAX {
        report.announced_min_bps = 0;
    }
    report.ended = s.ended;
    if let (Some(a), Some(b)) = (first_at, last_at) {
        let secs = b.saturating_since(a).as_secs_f64();
        if secs > 0.0 {
            report.mean_rate_bps = s.wire_bytes as f64 * 8.0 / secs;
        }
    }
    Ok(report)
}

/// Writes the payloads released in sequence order; unrepaired gaps are
/// skipped in the output and recorded in the report.
fn write_deliveries(
    rx: &mut MulticastReceiver,
    out: &mut dyn Write,
    report: &mut SubscribeReport,
) -> Result<(), RunError> {
    while let Some(d) = rx.pop_delivery() {
        match d {
            Delivery::Payload { payload, .. } => out.write_all(&payload).map_err(RunError::Io)?,
            Delivery::Gap { seq } => {
                report.unrepaired += 1;
                let ranges = &mut report.unrepaired_ranges;
                let n = ranges.len();
                match ranges.last_mut() {
                    Some((_, hi)) if *hi + 1 == seq => *hi = seq,
                    _ if n < 1000 => ranges.push((seq, seq)),
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "multicast_tests.rs"]
mod tests;
