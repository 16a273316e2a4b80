//! The receive side of the pipeline: Data, Nacks, timer expiry, the end of
//! the object.

use super::{limit_value, LogEvent, NackKind, Pipeline, PipelineError, SegInfo, SegState};
use bytes::Bytes;
use cc_core::{ConsumerLaw, DataFeedback, Duration, NackFeedback, Timestamp};

impl<L: ConsumerLaw> Pipeline<L> {
    fn set_final(&mut self, f: u64) {
        if self.final_seg.is_some() {
            return;
        }
        self.final_seg = Some(f);
        let beyond: Vec<u64> = self.segs.keys().copied().filter(|s| *s > f).collect();
        for s in beyond {
            if let Some(i) = self.segs.remove(&s) {
                self.timers.remove(&(i.deadline, s));
                if i.state == SegState::InFlight {
                    self.in_flight -= 1;
                }
            }
        }
        self.reorder.retain(|s, _| *s <= f);
        if let Some((seg, e)) = self.pending_failure.take() {
            if seg <= f {
                self.fail(e);
            }
        }
    }

    fn check_done(&mut self, now: Timestamp) {
        if let Some(f) = self.final_seg {
            if self.next_deliver > f && self.done_at.is_none() {
                self.done_at = Some(now);
                if let Some(start) = self.start {
                    self.stats.finish_timing(start, now);
                }
                self.sample(now.max(self.next_sample_at));
            }
        }
    }

    /// A Data for `segment` arrived. `fb` carries the scheme fields; its
    /// `rtt` and `segment` are filled in here.
    pub fn handle_data(
        &mut self,
        now: Timestamp,
        segment: u64,
        content: Bytes,
        final_segment: Option<u64>,
        mut fb: DataFeedback,
    ) {
        if self.stopped() {
            return;
        }
        if let Some(f) = final_segment {
            self.set_final(f);
            if self.stopped() {
                return;
            }
        }
        let Some(info) = self.segs.remove(&segment) else {
            return;
        };
        self.timers.remove(&(info.deadline, segment));
        if info.state == SegState::InFlight {
            self.in_flight -= 1;
        }
        self.high_data = self.high_data.max(segment);
        let ambiguous = self.ambiguous_segment == Some(segment);
        if ambiguous {
            self.ambiguous_segment = None;
            self.stats.ambiguous_rtt_samples += 1;
        }
        if info.retx == 0 && info.state == SegState::InFlight && !ambiguous {
            let rtt = now - info.sent_at;
            // ndnget weighs each sample by the samples expected per RTT.
            let n = self.in_flight.div_ceil(2);
            self.rtt.add_sample(rtt, n.max(1));
            self.rtt_summary.add(rtt);
            fb.rtt = Some(rtt);
            if self.cfg.log_events {
                let e = LogEvent::Rtt {
                    t: self.since_start(now),
                    segment,
                    rtt,
                    srtt: self.rtt.srtt().unwrap_or(rtt),
                    rttvar: self.rtt.rttvar(),
                    rto: self.rtt.rto(),
                };
                self.push_log(e);
            }
        } else {
            fb.rtt = None;
        }
        fb.segment = Some(segment);
        let mut tell_law = true;
        if fb.congestion_mark > 0 {
            self.stats.congestion_marks += 1;
            if self.cfg.ignore_marks {
                fb.congestion_mark = 0;
            } else if self.cfg.cwa {
                if self.rec_point.is_none_or(|r| self.high_data > r) {
                    self.rec_point = Some(self.high_interest);
                } else {
                    tell_law = false;
                }
            }
        }
        if tell_law {
            let before = limit_value(self.law.limit());
            self.law.on_data(now, &fb);
            if fb.congestion_mark > 0 && limit_value(self.law.limit()) < before {
                self.stats.mark_decreases += 1;
            }
            self.note_limit(now);
        }
        self.stats.segments_received += 1;
        self.stats.bytes_received += content.len() as u64;
        self.stats.wire_bytes_received += u64::from(fb.data_size_bytes);
        self.interval_bytes += content.len() as u64;
        if segment >= self.next_deliver {
            self.reorder.insert(segment, content);
        }
        while let Some(c) = self.reorder.remove(&self.next_deliver) {
            self.output.push_back(c);
            self.next_deliver += 1;
        }
        self.check_done(now);
        if !self.stopped() && self.segs.is_empty() && self.pending_failure.is_some() {
            self.fail(PipelineError::NoFinalBlock);
        }
        self.sample(now);
    }

    /// A Data that is not a segment of the object (version discovery) but
    /// crossed the same forwarders: the rates they stamped reach the law,
    /// so the first segments go out at the path's rate instead of the
    /// law's start-up guess. No segment state changes.
    pub fn handle_path_data(&mut self, now: Timestamp, mut fb: DataFeedback) {
        if self.stopped() {
            return;
        }
        fb.rtt = None;
        fb.segment = None;
        if self.cfg.ignore_marks {
            fb.congestion_mark = 0;
        }
        self.law.on_data(now, &fb);
        self.note_limit(now);
    }

    /// A Nack for `segment` arrived.
    pub fn handle_nack(&mut self, now: Timestamp, segment: u64, kind: NackKind, fb: NackFeedback) {
        if self.stopped() {
            return;
        }
        let Some(info) = self.segs.get(&segment).copied() else {
            return;
        };
        if info.state != SegState::InFlight {
            return;
        }
        self.stats.nacks += 1;
        match kind {
            NackKind::Duplicate => {
                // The Interest looped; its timer will retry it.
                self.stats.nacks_duplicate += 1;
            }
            NackKind::Congestion => {
                self.stats.nacks_congestion += 1;
                self.back_off(now, segment, info);
                let fb = NackFeedback {
                    congestion: true,
                    ..fb
                };
                if !self.cfg.cwa || self.rec_point.is_none_or(|r| segment > r) {
                    let before = limit_value(self.law.limit());
                    self.law.on_nack(now, &fb);
                    if limit_value(self.law.limit()) < before {
                        self.rec_point = Some(self.high_interest);
                        self.rtt.backoff();
                        self.stats.timeout_decreases += 1;
                    }
                    self.note_limit(now);
                }
            }
            NackKind::NoRoute | NackKind::Other(_) => {
                if kind == NackKind::NoRoute {
                    self.stats.nacks_no_route += 1;
                } else {
                    self.stats.nacks_other += 1;
                }
                self.law.on_nack(
                    now,
                    &NackFeedback {
                        congestion: false,
                        ..fb
                    },
                );
                self.note_limit(now);
                let e = PipelineError::Nack {
                    segment,
                    reason: kind,
                };
                match self.final_seg {
                    Some(f) if segment <= f => self.fail(e),
                    Some(_) => self.drop_segment(segment, info),
                    None => {
                        // Maybe beyond the end: decide once FinalBlockId is known.
                        self.drop_segment(segment, info);
                        let earliest = self
                            .pending_failure
                            .as_ref()
                            .is_none_or(|(s, _)| segment < *s);
                        if earliest {
                            self.pending_failure = Some((segment, e));
                        }
                        let beyond: Vec<u64> =
                            self.segs.keys().copied().filter(|s| *s > segment).collect();
                        for s in beyond {
                            if let Some(i) = self.segs.get(&s).copied() {
                                self.drop_segment(s, i);
                            }
                        }
                        if self.segs.is_empty() {
                            self.fail(PipelineError::NoFinalBlock);
                        }
                    }
                }
            }
        }
        self.sample(now);
    }

    fn drop_segment(&mut self, segment: u64, info: SegInfo) {
        self.segs.remove(&segment);
        self.timers.remove(&(info.deadline, segment));
        if info.state == SegState::InFlight {
            self.in_flight -= 1;
        }
    }

    /// A congestion Nack answered `segment`: it is retransmitted after
    /// 2^(n−1) ms for its n-th Nack (capped), not at once.
    fn back_off(&mut self, now: Timestamp, segment: u64, info: SegInfo) {
        let max = self.cfg.max_nack_backoff;
        if max.is_zero() {
            self.enqueue_retx(segment, info);
            return;
        }
        self.timers.remove(&(info.deadline, segment));
        self.in_flight -= 1;
        let delay = Duration::from_millis(1u64 << info.congestion_nacks.min(40)).min(max);
        let deadline = now + delay;
        self.segs.insert(
            segment,
            SegInfo {
                state: SegState::BackingOff,
                deadline,
                congestion_nacks: info.congestion_nacks.saturating_add(1),
                ..info
            },
        );
        self.timers.insert((deadline, segment));
    }

    fn enqueue_retx(&mut self, segment: u64, info: SegInfo) {
        self.timers.remove(&(info.deadline, segment));
        if let Some(i) = self.segs.get_mut(&segment) {
            i.state = SegState::InRetxQueue;
        }
        self.in_flight -= 1;
        self.retx_queue.push_back(segment);
    }

    /// Fires every retransmission timer due at `now`.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.stopped() {
            return;
        }
        let mut high_timeout: Option<u64> = None;
        let mut last_sent: Option<Timestamp> = None;
        while let Some(&(d, seg)) = self.timers.first() {
            if d > now {
                break;
            }
            self.timers.pop_first();
            let Some(info) = self.segs.get_mut(&seg) else {
                continue;
            };
            if info.deadline != d {
                continue;
            }
            match info.state {
                // The back-off after a congestion Nack is over.
                SegState::BackingOff => {
                    info.state = SegState::InRetxQueue;
                    self.retx_queue.push_back(seg);
                }
                SegState::InFlight => {
                    let info = *info;
                    self.stats.timeouts += 1;
                    self.enqueue_retx(seg, info);
                    high_timeout = Some(high_timeout.map_or(seg, |h| h.max(seg)));
                    last_sent = Some(last_sent.map_or(info.sent_at, |t| t.max(info.sent_at)));
                }
                SegState::InRetxQueue => {}
            }
        }
        if let Some(h) = high_timeout {
            // The RTO backs off once per loss episode (a timeout of an
            // Interest sent after the last backoff), whatever `cwa` says:
            // otherwise a rate law that floods the link doubles it per timer
            // batch up to max_rto and stalls the end of the fetch. A
            // retransmission that times out again does back off again.
            if last_sent.is_some_and(|s| self.backoff_at.is_none_or(|b| s >= b)) {
                self.backoff_at = Some(now);
                self.rtt.backoff();
            }
            // The law hears one timeout per window of segments (ndnget's
            // recovery point) unless `cwa` is off.
            let new_episode = self.rec_point.is_none_or(|r| h > r);
            if new_episode {
                self.rec_point = Some(self.high_interest);
            }
            if !self.cfg.cwa || new_episode {
                let before = limit_value(self.law.limit());
                self.law.on_timeout(now);
                if limit_value(self.law.limit()) < before {
                    self.stats.timeout_decreases += 1;
                }
                self.note_limit(now);
            }
        }
        self.sample(now);
    }
}
