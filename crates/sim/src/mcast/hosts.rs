//! Simulated end hosts: a multicast source and a multicast receiver, each
//! with one face.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{decode_packet, MccFeedback, Name, NetPacket};

use super::FIRST_FACE;
use icn_multicast::receiver::{MulticastReceiver, ReceiverConfig};
use icn_multicast::source::{MulticastSource, SourceConfig};
use icn_multicast::wire::Subscription;

/// A source host: sends as fast as its pacer allows while subscribed.
#[derive(Debug)]
pub struct SourceHost {
    /// The source state machine.
    pub src: MulticastSource,
    /// Every rate chosen by Algorithm 1, with its time.
    pub rate_log: Vec<(Timestamp, f64)>,
    /// Every MCC message received, with its arrival time.
    pub feedback_log: Vec<(Timestamp, MccFeedback)>,
    payload: Bytes,
}

impl SourceHost {
    pub(super) fn new(group: Name, cfg: SourceConfig, payload_len: usize, now: Timestamp) -> Self {
        SourceHost {
            src: MulticastSource::new(group, cfg, now),
            rate_log: Vec::new(),
            feedback_log: Vec::new(),
            payload: Bytes::from(vec![0x5a; payload_len]),
        }
    }

    pub(super) fn on_frame(&mut self, now: Timestamp, bytes: Bytes) {
        let Ok((lp, net)) = decode_packet(bytes) else {
            return;
        };
        if let Some(fb) = lp.mcc {
            if self.src.handle_feedback(now, &fb).is_ok() {
                self.feedback_log.push((now, fb));
            }
        }
        if let Some(NetPacket::Interest(i)) = net {
            if let Some(sub) = Subscription::from_interest(&i) {
                let _ = self.src.handle_subscription(now, &sub);
            }
        }
    }

    pub(super) fn on_timer(&mut self, now: Timestamp, out: &mut Vec<(u64, Bytes)>) {
        if let Some(r) = self.src.handle_timeout(now) {
            self.rate_log.push((now, r));
        }
        if self.src.has_subscribers(now) && self.src.can_send(now) {
            out.push((FIRST_FACE, self.src.send(now, self.payload.clone(), false)));
        }
    }

    pub(super) fn poll_timeout(&self, now: Timestamp) -> Option<Timestamp> {
        let send = if self.src.has_subscribers(now) {
            self.src.next_send_time()
        } else {
            Timestamp::MAX
        };
        Some(send.min(self.src.poll_timeout())).filter(|t| *t != Timestamp::MAX)
    }

    /// Mean of the rates chosen at or after `from` (bit/s).
    pub fn mean_rate_since(&self, from: Timestamp) -> f64 {
        let rs: Vec<f64> = self
            .rate_log
            .iter()
            .filter(|(t, _)| *t >= from)
            .map(|(_, r)| *r)
            .collect();
        rs.iter().sum::<f64>() / rs.len().max(1) as f64
    }
}

/// A receiver host.
#[derive(Debug)]
pub struct ReceiverHost {
    /// The receiver state machine.
    pub rx: MulticastReceiver,
    /// False once killed: sends nothing, still counts arrivals.
    pub alive: bool,
    /// Arrival time of the first group Data.
    pub first_data_at: Option<Timestamp>,
    /// Arrival time of the latest group Data.
    pub last_data_at: Option<Timestamp>,
    nonce: u32,
}

impl ReceiverHost {
    pub(super) fn new(group: Name, cfg: ReceiverConfig, now: Timestamp) -> Self {
        ReceiverHost {
            rx: MulticastReceiver::new(group, cfg, now),
            alive: true,
            first_data_at: None,
            last_data_at: None,
            nonce: 1,
        }
    }

    pub(super) fn on_frame(&mut self, now: Timestamp, bytes: Bytes) {
        let Ok((_, Some(NetPacket::Data(d)))) = decode_packet(bytes) else {
            return;
        };
        if self.rx.handle_data(now, &d).is_ok() {
            self.first_data_at.get_or_insert(now);
            self.last_data_at = Some(now);
        }
    }

    pub(super) fn on_timer(&mut self, now: Timestamp, out: &mut Vec<(u64, Bytes)>) {
        if !self.alive {
            return;
        }
        self.rx.handle_timeout(now);
        while let Some(o) = self.rx.poll_output() {
            self.nonce = self
                .nonce
                .wrapping_mul(1_664_525)
                .wrapping_add(1_013_904_223);
            out.push((FIRST_FACE, o.encode(self.nonce)));
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.rx.poll_timeout()).filter(|t| self.alive && *t != Timestamp::MAX)
    }
}
