//! Egress: queueing, pacing at the configured capacity, LP encoding and
//! fragmentation, and `poll_transmit`.

use std::cmp::Reverse;

use bytes::{Bytes, BytesMut};
use cc_core::Timestamp;
use icn_tlv::fragment;

use super::api::Transmit;
use super::cc_hooks::{CcHooks, InterestAdmission};
use super::counters::DropReason;
use super::face::FaceId;
use super::forwarder::{transmit, Delayed, Face, Forwarder};
use super::multicast_hook::MulticastHook;
use super::queue::{OutPacket, PacketKind, QueueView};

/// How much missed sending time a paced face may make up after a late
/// wake-up: at least 2 ms (a millisecond timer), and at least the time of
/// `PACING_SLACK_BYTES` at the face's capacity, so that on a slow link a
/// wake-up late by less than two large Data loses nothing. With 2 ms only,
/// a 10 Mbit/s face pacing 8 KB Data (6.5 ms each) lost every lateness
/// beyond 2 ms: on a loaded two-core host it delivered under the 99 % a
/// QSCCP bottleneck admits, and the Data backlog in front of it grew to
/// 30 Data (190 ms) in 20 s.
const PACING_SLACK: core::time::Duration = core::time::Duration::from_millis(2);
const PACING_SLACK_BYTES: u64 = 18_000;

/// The catch-up allowance of a face of `capacity_bps`.
fn pacing_slack(capacity_bps: u64) -> core::time::Duration {
    let ns = (PACING_SLACK_BYTES * 8).saturating_mul(1_000_000_000) / capacity_bps.max(1);
    PACING_SLACK.max(core::time::Duration::from_nanos(ns))
}
use super::strategy::NameScope;

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// Queues a packet on `face`, enforcing `/localhost` scope.
    /// Returns whether the packet was queued.
    pub(super) fn send(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        scope: NameScope,
    ) -> bool {
        let Some(f) = self.faces.0.get_mut(&face) else {
            self.counters.drops.add(DropReason::FaceGone);
            return false;
        };
        if scope == NameScope::Localhost && !f.info.params.is_local() {
            self.drop_packet(face, DropReason::LocalhostScope);
            return false;
        }
        if self.queued_bytes + pkt.wire.len() > self.cfg.queue_max_bytes {
            self.drop_packet(face, DropReason::QueueFull);
            return false;
        }
        let held = queued_bytes_of(&f.info.queue);
        let kind = pkt.kind;
        let mut view = QueueView {
            face,
            stats: f.info.queue,
            capacity_bps: f.info.params.capacity_bps,
            flow: None,
        };
        let res = if kind == PacketKind::Interest {
            match self.cc.admit_interest(now, face, pkt, &view) {
                InterestAdmission::Fifo(pkt) => f.queues.enqueue(pkt, &mut view),
                InterestAdmission::Queued => {
                    f.queues.hook_queued += 1;
                    f.queues.hook_hold_until = now;
                    Ok(())
                }
                InterestAdmission::QueuedEvicting { victim, cc } => {
                    f.queues.hook_hold_until = now;
                    self.evicted.push((face, victim, cc));
                    Ok(())
                }
                InterestAdmission::Rejected { pkt: _, cc } => {
                    self.last_reject_cc = Some(cc);
                    Err(DropReason::CcShaper)
                }
            }
        } else {
            let r = f.queues.enqueue(pkt, &mut view);
            if r.is_err() {
                self.cc.data_dropped(now, face);
            }
            r
        };
        f.publish_queue(view.stats);
        self.queued_bytes = self.queued_bytes + queued_bytes_of(&f.info.queue) - held;
        if let Err(reason) = res {
            self.drop_packet(face, reason);
            return false;
        }
        let c = &mut f.info.counters;
        match kind {
            PacketKind::Interest => {
                c.n_out_interests += 1;
                self.counters.n_out_interests += 1;
            }
            PacketKind::Data => {
                c.n_out_data += 1;
                self.counters.n_out_data += 1;
            }
            PacketKind::Nack => {
                c.n_out_nacks += 1;
                self.counters.n_out_nacks += 1;
            }
        }
        if !f.in_active {
            f.in_active = true;
            self.active.push_back(face);
            // An idle face has no missed sending time to make up: the
            // catch-up allowance of `poll_paced` is for a backlogged face
            // its shell woke late. Credited with its idle time instead, a
            // face sent its first frames back to back after each pause and
            // the link under it held what the face's queue (and its CoDel)
            // never saw: 54 ms, 1.7 Data, at 2 Mbit/s with 8000-byte Data.
            if f.next_tx_at < now {
                f.next_tx_at = now;
            }
        }
        true
    }

    /// Returns the next frame to put on a transport at `now`, or `None` when
    /// every face is empty or held by pacing/shaping until a later time
    /// (reported by [`Forwarder::poll_timeout`]). Link emulation applies
    /// after pacing: emulated loss drops the frame, emulated delay holds it.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        loop {
            if self.delay_line.peek().is_some_and(|Reverse(d)| d.at <= now) {
                let Reverse(d) = self.delay_line.pop()?;
                return Some(transmit(d.face, d.bytes));
            }
            let tx = self.poll_paced(now)?;
            let Some(f) = self.faces.0.get_mut(&tx.face) else {
                continue;
            };
            let Some(em) = f.info.params.emulation else {
                return Some(tx);
            };
            if em.loss_ppm > 0 {
                let draw: u32 = rand::Rng::random_range(&mut self.rng, 0..1_000_000);
                if draw < em.loss_ppm {
                    f.info.emulated_drops += 1;
                    continue;
                }
            }
            if em.delay.is_zero() {
                return Some(tx);
            }
            if self.delay_line.len() >= self.cfg.queue.max_packets.saturating_mul(4) {
                self.drop_packet(tx.face, DropReason::QueueFull);
                continue;
            }
            self.delay_seq += 1;
            self.delay_line.push(Reverse(Delayed {
                at: now + em.delay,
                seq: self.delay_seq,
                face: tx.face,
                bytes: tx.bytes,
            }));
        }
    }

    /// The next paced frame of any face, before link emulation.
    fn poll_paced(&mut self, now: Timestamp) -> Option<Transmit> {
        for _ in 0..self.active.len() {
            let id = self.active.pop_front()?;
            let Some(f) = self.faces.0.get_mut(&id) else {
                continue;
            };
            if f.next_tx_at > now || f.blocked {
                self.active.push_back(id);
                continue;
            }
            let frame = match f.ready.pop_front() {
                Some(fr) => Some(fr),
                None => {
                    let held = queued_bytes_of(&f.info.queue);
                    let frame = next_frame(
                        now,
                        f,
                        &mut self.counters.drops,
                        &mut self.cc,
                        &mut self.egress_arena,
                    );
                    self.queued_bytes = self.queued_bytes + queued_bytes_of(&f.info.queue) - held;
                    frame
                }
            };
            f.info.queue.ready_frames = f.ready.len();
            let more = !f.ready.is_empty() || !f.queues.is_empty();
            if more {
                self.active.push_back(id);
            } else {
                f.in_active = false;
            }
            if let Some(bytes) = frame {
                let len = bytes.len() as u64;
                f.info.counters.n_out_bytes += len;
                f.info.counters.n_out_frames += 1;
                if let Some(bps) = f.info.params.capacity_bps.filter(|b| *b > 0) {
                    let ns = (len * 8).saturating_mul(1_000_000_000) / bps;
                    // A shell woken late (timer granularity, scheduling) may
                    // catch up on some missed sending time; without it every
                    // late wake-up is lost capacity. On time (the usual
                    // case), the allowance need not be computed.
                    let base = if now <= f.next_tx_at + PACING_SLACK {
                        f.next_tx_at
                    } else {
                        f.next_tx_at.max(now - pacing_slack(bps))
                    };
                    f.next_tx_at = base + core::time::Duration::from_nanos(ns);
                }
                return Some(transmit(id, bytes));
            }
        }
        None
    }
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// The transport of `face` could not take `frame`, a frame
    /// [`Forwarder::poll_transmit`] just returned: it goes back to the head
    /// of the face, uncounted, and the face sends nothing more until
    /// [`Forwarder::face_writable`]. What the engine emits for it meanwhile
    /// waits in its queues, under their bounds and markers, instead of in a
    /// transport queue the engine cannot see.
    pub fn face_blocked(&mut self, face: FaceId, frame: Bytes) {
        let Some(f) = self.faces.0.get_mut(&face) else {
            return;
        };
        let c = &mut f.info.counters;
        c.n_out_bytes = c.n_out_bytes.saturating_sub(frame.len() as u64);
        c.n_out_frames = c.n_out_frames.saturating_sub(1);
        f.ready.push_front(frame);
        f.info.queue.ready_frames = f.ready.len();
        f.blocked = true;
        if !f.in_active {
            f.in_active = true;
            self.active.push_back(face);
        }
    }

    /// The transport of `face` takes frames again.
    pub fn face_writable(&mut self, face: FaceId) {
        if let Some(f) = self.faces.0.get_mut(&face) {
            f.blocked = false;
        }
    }
}

/// Octets in a face's two egress queues (the global `queue_max_bytes`).
pub(super) fn queued_bytes_of(q: &super::face::QueueStats) -> usize {
    q.interest_bytes + q.data_bytes
}

/// Size of the chunks LP frames are encoded into.
const EGRESS_ARENA_BYTES: usize = 64 * 1024;

/// Dequeues one packet of `f` and encodes it; fragments beyond the first go
/// to `f.ready`.
fn next_frame(
    now: Timestamp,
    f: &mut Face,
    drops: &mut super::counters::DropCounters,
    hooks: &mut dyn CcHooks,
    arena: &mut BytesMut,
) -> Option<Bytes> {
    loop {
        let mut view = QueueView {
            face: f.info.id,
            stats: f.info.queue,
            capacity_bps: f.info.params.capacity_bps,
            flow: None,
        };
        // Used in place: binding the packet out of the Option copied its
        // 264 bytes.
        let mut dequeued = f.queues.dequeue(now, &mut view, hooks, &mut f.info.sojourn);
        f.publish_queue(view.stats);
        let pkt = dequeued.as_mut()?;
        f.info.cc_stamps.observe(now, pkt.kind, &pkt.cc);
        if pkt.congestion_mark > 0 && pkt.kind != PacketKind::Interest {
            f.info.counters.n_out_marked += 1;
        }
        let params = &f.info.params;
        let incoming_face_id = params.local_fields && params.is_local();
        // No LP field and no fragmentation: the bare packet, as
        // `LpPacket::encode` would give it.
        if !pkt.has_lp_header(incoming_face_id)
            && params.mtu.is_none_or(|mtu| pkt.wire.len() <= mtu)
        {
            return Some(core::mem::take(&mut pkt.wire));
        }
        let lp = dequeued.take()?.into_lp_packet(incoming_face_id);
        let encoded_len = lp.encoded_len();
        match params.mtu {
            Some(mtu) if encoded_len > mtu => match fragment(&lp, mtu, &mut f.lp_seq) {
                Ok(frames) => {
                    let mut it = frames.into_iter();
                    let first = it.next();
                    f.ready.extend(it);
                    if first.is_some() {
                        return first;
                    }
                }
                Err(e) => {
                    tracing::debug!(face = f.info.id.0, error = %e, "drop: cannot fragment");
                    drops.add(DropReason::TooLarge);
                    f.info.counters.drops.add(DropReason::TooLarge);
                }
            },
            // An LP header (a bare packet that fits returned above).
            _ => {
                // Frames are cut from a shared chunk: one allocation per
                // EGRESS_ARENA_BYTES of framed packets instead of one per
                // packet. A frame pins its chunk only until the shell has
                // sent it (or link emulation released it).
                if arena.capacity() < encoded_len {
                    arena.reserve(EGRESS_ARENA_BYTES.max(encoded_len));
                }
                lp.encode_into(arena);
                return Some(arena.split().freeze());
            }
        }
    }
}
