//! A multicast receiver: keeps its membership alive, emits the periodic
//! MCC message (cc-core's [`ReceiverFeedback`]: min fair share = access
//! capacity, max occupancy 0, min occupancy 1), and accounts what arrives:
//! sequence gaps (losses), late and duplicate packets, the received rate
//! and the rate the source announces.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::srmcc::ReceiverFeedback;
use cc_core::{Duration, Timestamp};
use icn_tlv::{Component, Data, Interest, MccFeedback, Name};

use crate::error::McastError;
use crate::repair::{Delivery, Reorder, RepairConfig, RepairStats};
use crate::rtt::{RttProbe, RttProber};
use crate::tail::TailProbe;
use crate::wire::{self, GroupPacket, Subscription};

/// Parameters of a receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceiverConfig {
    /// Capacity of the access link (probed once at join), bit/s.
    pub access_capacity_bps: u64,
    /// Interval between join refreshes.
    pub refresh_period: Duration,
    /// Membership lifetime carried by each join (> refresh period).
    pub membership_lifetime: Duration,
    /// Interval between MCC messages.
    pub feedback_period: Duration,
    /// Window of the received-rate meter.
    pub rate_window: Duration,
    /// Repair of sequence gaps by Interests `/<group>/seq=<n>`; `None`
    /// releases a gap as soon as it is seen (late packets are then lost
    /// to the application too).
    pub repair: Option<RepairConfig>,
    /// The sequence number the stream starts at for this receiver. `None`:
    /// the first packet that arrives (a live join mid-stream). `Some(0)`
    /// for a receiver that joined before the source began (a whole file):
    /// a lost first packet is then a hole to repair, not the start; with
    /// `None` it was silently missing from the output.
    pub start_seq: Option<u64>,
    /// Interval between RTT probes to the source ([`crate::rtt`]), whose
    /// answers give the RTT behind the source's adaptation cycle; `None`
    /// sends none (the source then keeps its configured RTT).
    pub rtt_probe_period: Option<Duration>,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            access_capacity_bps: 100_000_000,
            refresh_period: Duration::from_secs(1),
            membership_lifetime: Duration::from_secs(3),
            feedback_period: Duration::from_millis(400),
            rate_window: Duration::from_secs(1),
            repair: Some(RepairConfig::default()),
            start_seq: None,
            rtt_probe_period: Some(Duration::from_secs(1)),
        }
    }
}

/// A message the receiver wants sent to its forwarder.
#[derive(Debug, Clone, PartialEq)]
pub enum ReceiverOutput {
    /// Join/refresh or leave.
    Subscription(Subscription),
    /// The periodic MCC message.
    Feedback(MccFeedback),
    /// A repair Interest for one missing packet.
    Repair {
        /// `/<group>/seq=<n>`.
        name: Name,
        /// InterestLifetime (the retry interval).
        lifetime: Duration,
    },
    /// An RTT probe to the source (an Interest that lives one probe period).
    RttProbe {
        /// The probe.
        probe: RttProbe,
        /// InterestLifetime.
        lifetime: Duration,
    },
}

impl ReceiverOutput {
    /// The frame to send.
    pub fn encode(&self, nonce: u32) -> Bytes {
        match self {
            ReceiverOutput::Subscription(s) => s.encode(nonce),
            ReceiverOutput::Feedback(f) => wire::encode_feedback(f),
            ReceiverOutput::Repair { name, lifetime } => {
                let mut i = Interest::new(name.clone());
                i.nonce = Some(nonce);
                i.lifetime = Some(*lifetime);
                i.encode()
            }
            ReceiverOutput::RttProbe { probe, lifetime } => {
                let mut i = Interest::new(probe.name());
                i.nonce = Some(nonce);
                i.lifetime = Some(*lifetime);
                i.encode()
            }
        }
    }
}

/// What the receiver has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Distinct packets received.
    pub packets: u64,
    /// Payload bytes of distinct packets.
    pub payload_bytes: u64,
    /// Wire bytes of distinct packets (comparable to the source's rate).
    pub wire_bytes: u64,
    /// Sequence numbers skipped and not (yet) filled by late packets.
    pub lost: u64,
    /// Packets that filled an earlier gap.
    pub late: u64,
    /// Packets received twice.
    pub duplicates: u64,
    /// Packets older than the 64-packet reorder window (not counted).
    pub too_old: u64,
    /// First sequence number seen.
    pub first_seq: Option<u64>,
    /// Highest sequence number seen.
    pub highest_seq: Option<u64>,
    /// Rate announced by the source in the latest packet, bit/s.
    pub announced_rate_bps: u64,
    /// The source marked the end of the stream.
    pub ended: bool,
    /// Asks for the packet after the highest one seen, sent after a
    /// silence ([`crate::tail`]).
    pub tail_probes: u64,
}

impl ReceiverStats {
    /// Losses over packets expected since the first one.
    pub fn loss_ratio(&self) -> f64 {
        let expected = self.packets + self.lost;
        if expected == 0 {
            0.0
        } else {
            self.lost as f64 / expected as f64
        }
    }
}

/// Gap accounting over a 64-packet reorder window.
#[derive(Debug, Clone, Copy, Default)]
struct SeqTracker {
    /// Packets below it are before this receiver's stream.
    start: u64,
    next: Option<u64>,
    /// Bit i: sequence `next - 1 - i` was received.
    window: u64,
}

enum SeqEvent {
    New { gap: u64 },
    Late,
    Duplicate,
    TooOld,
}

impl SeqTracker {
    /// Expects the stream to begin at `start`.
    fn from(start: u64) -> Self {
        SeqTracker {
            start,
            next: Some(start),
            window: 0,
        }
    }

    fn on_seq(&mut self, seq: u64) -> SeqEvent {
        if seq < self.start {
            return SeqEvent::TooOld;
        }
        let Some(next) = self.next else {
            self.next = Some(seq.saturating_add(1));
            self.window = 1;
            return SeqEvent::New { gap: 0 };
        };
        if seq >= next {
            let shift = seq - next + 1;
            self.window = if shift >= 64 { 0 } else { self.window << shift };
            self.window |= 1;
            self.next = Some(seq.saturating_add(1));
            return SeqEvent::New { gap: seq - next };
        }
        let back = next - 1 - seq;
        if back >= 64 {
            return SeqEvent::TooOld;
        }
        let bit = 1u64 << back;
        if self.window & bit != 0 {
            SeqEvent::Duplicate
        } else {
            self.window |= bit;
            SeqEvent::Late
        }
    }
}

/// A receiver of one group.
#[derive(Debug, Clone)]
pub struct MulticastReceiver {
    group: Name,
    cfg: ReceiverConfig,
    feedback: ReceiverFeedback,
    next_refresh: Timestamp,
    left: bool,
    pending: VecDeque<ReceiverOutput>,
    /// RTT probing, when configured, and the probe waiting to be sent.
    prober: Option<RttProber>,
    probe_out: Option<RttProbe>,
    repairs: VecDeque<u64>,
    scratch: Vec<u64>,
    reorder: Reorder,
    tail: TailProbe,
    seq: SeqTracker,
    window_start: Timestamp,
    window_bytes: u64,
    rate_bps: f64,
    stats: ReceiverStats,
}

impl MulticastReceiver {
    /// Joins `group` at `now` (the join is the first output).
    pub fn new(group: Name, cfg: ReceiverConfig, now: Timestamp) -> Self {
        let mut r = MulticastReceiver {
            feedback: ReceiverFeedback::new(cfg.access_capacity_bps as f64, cfg.feedback_period),
            next_refresh: now,
            left: false,
            pending: VecDeque::new(),
            prober: cfg.rtt_probe_period.map(|p| RttProber::new(p, now)),
            probe_out: None,
            repairs: VecDeque::new(),
            scratch: Vec::new(),
            reorder: Reorder::starting_at(
                cfg.repair.unwrap_or(RepairConfig {
                    window: Duration::ZERO,
                    ..RepairConfig::default()
                }),
                cfg.start_seq,
            ),
            // A silence outlasting the repair window is a paused stream,
            // not a loss: ask no more often than that.
            tail: TailProbe::new(cfg.repair.map_or(Duration::ZERO, |r| r.window)),
            seq: cfg
                .start_seq
                .map_or_else(SeqTracker::default, SeqTracker::from),
            window_start: now,
            window_bytes: 0,
            rate_bps: 0.0,
            stats: ReceiverStats::default(),
            group,
            cfg,
        };
        r.handle_timeout(now);
        r
    }

    /// The group.
    pub fn group(&self) -> &Name {
        &self.group
    }

    /// Queues the refreshes, MCC messages and repair Interests due at
    /// `now`, and gives up holes older than the repair window.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.scratch.clear();
        self.reorder.poll_repairs(now, &mut self.scratch);
        if self.left {
            return;
        }
        if self.cfg.repair.is_some() {
            for &s in &self.scratch {
                if self.repairs.len() < 4096 {
                    self.repairs.push_back(s);
                }
            }
            if self.tail.poll(now) {
                if let Some(high) = self.stats.highest_seq {
                    self.stats.tail_probes += 1;
                    self.repairs.push_back(high.saturating_add(1));
                }
            }
        }
        if now >= self.next_refresh {
            self.next_refresh = now + self.cfg.refresh_period;
            let join = Subscription::join(self.group.clone(), self.cfg.membership_lifetime);
            self.pending.push_back(ReceiverOutput::Subscription(join));
        }
        if let Some(msg) = self.feedback.poll(now) {
            let fb = wire::to_feedback(self.group.clone(), &msg);
            self.pending.push_back(ReceiverOutput::Feedback(fb));
        }
        if let Some(p) = self.prober.as_mut().and_then(|p| p.poll(now, &self.group)) {
            self.probe_out = Some(p);
        }
        // At most one join and one feedback are ever waiting.
        while self.pending.len() > 2 {
            self.pending.pop_front();
        }
    }

    /// When `handle_timeout` is next due (after `leave`, only for holes
    /// still waiting to be given up).
    pub fn poll_timeout(&self) -> Timestamp {
        let holes = self.reorder.poll_timeout().unwrap_or(Timestamp::MAX);
        if self.left {
            holes
        } else {
            self.next_refresh
                .min(self.feedback.poll_timeout())
                .min(holes)
                .min(self.tail.poll_timeout().unwrap_or(Timestamp::MAX))
                .min(
                    self.prober
                        .as_ref()
                        .map_or(Timestamp::MAX, RttProber::poll_timeout),
                )
        }
    }

    /// The next message to send.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<ReceiverOutput> {
        if let Some(o) = self.pending.pop_front() {
            return Some(o);
        }
        if let Some(probe) = self.probe_out.take() {
            let lifetime = self.cfg.rtt_probe_period.unwrap_or(Duration::from_secs(1));
            return Some(ReceiverOutput::RttProbe { probe, lifetime });
        }
        let seq = self.repairs.pop_front()?;
        let retry = self.cfg.repair.map_or(Duration::ZERO, |r| r.retry);
        Some(ReceiverOutput::Repair {
            name: self.group.append(Component::sequence_num(seq)),
            lifetime: retry,
        })
    }

    /// The next payload or unrepaired gap, in sequence order. Drain it
    /// after every `handle_data` and `handle_timeout`.
    pub fn pop_delivery(&mut self) -> Option<Delivery> {
        self.reorder.pop()
    }

    /// The stream is over (end packet, or the application stops): every
    /// hole still open is given up and released as a gap.
    pub fn finish(&mut self) {
        self.reorder.finish();
        self.tail.stop();
    }

    /// The end packet arrived and every packet before it was released.
    pub fn is_complete(&self) -> bool {
        self.stats.ended && self.reorder.is_settled()
    }

    /// Repair counters.
    pub fn repair_stats(&self) -> &RepairStats {
        self.reorder.stats()
    }

    /// Leaves the group: queues a leave and stops refreshes and feedback.
    pub fn leave(&mut self) {
        self.left = true;
        self.pending.clear();
        self.repairs.clear();
        self.probe_out = None;
        self.prober = None;
        self.tail.stop();
        self.pending
            .push_back(ReceiverOutput::Subscription(Subscription::leave(
                self.group.clone(),
            )));
    }

    /// Accounts a received Data of the group.
    ///
    /// # Errors
    /// [`McastError::NotMulticast`] / [`McastError::UnknownGroup`] for Data
    /// that is not a packet of this group.
    pub fn handle_data(&mut self, now: Timestamp, data: &Data) -> Result<GroupPacket, McastError> {
        if let Some(probe) = RttProbe::from_name(&data.name) {
            if probe.group == self.group {
                if let Some(p) = self.prober.as_mut() {
                    p.on_answer(now, &probe);
                }
            }
            return Err(McastError::NotMulticast("RTT probe answer"));
        }
        let pkt = GroupPacket::from_data(data)?;
        if pkt.group != self.group {
            return Err(McastError::UnknownGroup);
        }
        let wire_len = data.wire().map_or(0, Bytes::len) as u64;
        let event = self.seq.on_seq(pkt.seq);
        let wanted = !matches!(event, SeqEvent::Duplicate)
            && self.reorder.on_packet(now, pkt.seq, pkt.payload.clone());
        let s = &mut self.stats;
        match event {
            SeqEvent::Duplicate => {
                s.duplicates += 1;
                return Ok(pkt);
            }
            // Older than the gap window but a hole being repaired: a repair.
            SeqEvent::TooOld if wanted => {
                s.late += 1;
                s.lost = s.lost.saturating_sub(1);
            }
            SeqEvent::TooOld => {
                s.too_old += 1;
                return Ok(pkt);
            }
            SeqEvent::Late => {
                s.late += 1;
                s.lost = s.lost.saturating_sub(1);
            }
            SeqEvent::New { gap } => {
                s.lost += gap;
                s.highest_seq = Some(pkt.seq);
                s.announced_rate_bps = pkt.rate_bps;
            }
        }
        s.first_seq.get_or_insert(pkt.seq);
        s.packets += 1;
        s.payload_bytes += pkt.payload.len() as u64;
        s.wire_bytes += wire_len;
        s.ended |= pkt.end;
        if s.ended {
            self.tail.stop();
        } else if matches!(event, SeqEvent::New { .. }) && self.cfg.repair.is_some() {
            let spacing =
                Duration::from_secs_f64(wire_len as f64 * 8.0 / pkt.rate_bps.max(1) as f64);
            let retry = self.cfg.repair.map_or(Duration::ZERO, |r| r.retry);
            let floor = self
                .prober
                .as_ref()
                .and_then(RttProber::srtt)
                .unwrap_or(retry);
            self.tail.on_packet(now, spacing, floor);
        }
        let elapsed = now.saturating_since(self.window_start);
        if elapsed >= self.cfg.rate_window {
            self.rate_bps = self.window_bytes as f64 * 8.0 / elapsed.as_secs_f64();
            self.window_start = now;
            self.window_bytes = 0;
        }
        self.window_bytes += wire_len;
        Ok(pkt)
    }

    /// The smoothed RTT to the source, once a probe was answered.
    pub fn srtt(&self) -> Option<Duration> {
        self.prober.as_ref().and_then(RttProber::srtt)
    }

    /// Received rate over the last completed window (wire bit/s).
    pub fn received_rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Counters.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
}

#[cfg(test)]
#[path = "receiver_tests.rs"]
mod tests;
