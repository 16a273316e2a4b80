//! The segment pipeline, sans-IO: which segment to ask for and when.
//!
//! It works on segment numbers only; [`crate::fetch`] turns requests into
//! Interests and packets into calls here. The congestion law decides how much
//! may be outstanding (window) or how fast Interests go out (rate); the
//! pipeline enforces that, runs the RFC 6298 timer, retries, conservative
//! window adaptation (one decrease per RTT, as ndnget), and reassembles the
//! content in order.
//!
//! Split by concern: this file holds the state, the send side and the
//! timers; [`recv`](self) handles Data, Nacks and timeouts.

mod recv;

use crate::stats::{FetchStats, RttSummary, Sample};
use bytes::Bytes;
use cc_core::pace_jitter::PaceJitter;
use cc_core::rtt::{RttConfig, RttEstimator};
use cc_core::{ConsumerLaw, Duration, SendLimit, Timestamp};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// Pipeline knobs (ndnget defaults).
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// InterestLifetime; also an upper bound of the retransmission timer.
    pub lifetime: Duration,
    /// Retries per segment after a timeout or congestion Nack; `None` = no limit.
    pub max_retries: Option<u32>,
    /// Count marks but do not tell the law about them.
    pub ignore_marks: bool,
    /// Conservative window adaptation: at most one decrease per RTT.
    pub cwa: bool,
    /// Retransmission timer (ndnget: RFC 6298 gains, K = 8, 200 ms..60 s).
    pub rtt: RttConfig,
    /// Hard bound on Interests outstanding, whatever the law says.
    pub max_outstanding: u32,
    /// New segments are not requested further than this ahead of the first
    /// undelivered one (bounds the reorder buffer).
    pub max_reorder_segments: u64,
    /// Time-series interval.
    pub sample_interval: Duration,
    /// Catch-up allowed to a rate law's pacer after a late wake-up, in
    /// Interests. The rate is what the network told the consumer to send,
    /// and the routers of the rate schemes shape Interests on their own
    /// (RCP/MIRCC shaper, CCC pacer, QSCCP scheduler), so a late consumer
    /// makes its rate up. Bounded in time instead (2 ms), ten CCC flows of
    /// 1200 B on 50 Mbit/s at 150 ms on a loaded host lost their pace at
    /// every late wake-up: 82.6 % utilisation, flows 17 % apart (one run;
    /// 95.0 % in virtual time).
    pub max_burst: f64,
    /// Sending time a window law's pacer (`ConsumerLaw::pace_ips`) may
    /// make up after a late wake-up: at most this much of its pace, and at
    /// least one Interest besides the one due. The window bounds what it
    /// sends and its pacing only spreads the window, so what a late
    /// consumer sends at once is only a train of Data at the bottleneck:
    /// eight Interests (the rate laws' bound) were 8 ms of queue for
    /// 1200-byte Data on 10 Mbit/s, above CoDel's 5 ms target, and on the
    /// namespace testbed three paced PCON flows at 150 ms were cut every
    /// ~0.5 s while their windows summed to 60 % of the path's BDP, at
    /// 81-94 % utilisation where virtual time (a 1 ms tick, never late)
    /// gives 99 %; 92-94 % with this bound. 2 ms is two timer ticks, so a
    /// pace above 1000 Interests/s keeps its rate on millisecond timers.
    pub max_catch_up: Duration,
    /// Segment to start from.
    pub first_segment: u64,
    /// Record [`LogEvent`]s (window/rate changes, RTT samples) for
    /// `--log-cwnd`/`--log-rtt`; drained with [`Pipeline::poll_log`].
    pub log_events: bool,
    /// Ceiling of the per-segment back-off after a congestion Nack: the
    /// n-th Nack of a segment delays its retransmission by 2^(n−1) ms up to
    /// this (ndncatchunks' DataFetcher: 10 s). A consumer whose law does not
    /// slow down on Nacks (a fixed window) otherwise re-sends a Nacked
    /// segment at once and spends its retries within a few round trips.
    /// Zero: retransmit at once.
    pub max_nack_backoff: Duration,
    /// A rate law's pacer lag: each Interest leaves its slot late by a
    /// random fraction of the gap below this, the slots kept on their grid,
    /// so flows told the same rate never fall into step (cc-core `pace_jitter`;
    /// 0 paces strictly).
    pub pace_jitter: f64,
    /// Seed of the lags; consumers sharing a link must differ (a `Fetcher`
    /// draws it from its own seed, icncat's from the OS).
    pub pace_seed: u64,
}

/// The pacer's spacing and how much of it a late wake-up may make up.
#[derive(Debug, Clone, Copy)]
struct Pace {
    gap: Duration,
    catch_up: Duration,
    /// A rate law's pace (its Interests lag) rather than a window's
    /// spreading.
    rate_law: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            lifetime: Duration::from_millis(4000),
            max_retries: Some(15),
            ignore_marks: false,
            cwa: true,
            rtt: crate::scheme::ndnget_rtt(),
            max_outstanding: 65_536,
            max_reorder_segments: 131_072,
            sample_interval: Duration::from_millis(100),
            max_burst: 8.0,
            max_catch_up: Duration::from_millis(2),
            first_segment: 0,
            log_events: false,
            max_nack_backoff: Duration::from_secs(10),
            pace_jitter: cc_core::pace_jitter::PACE_JITTER,
            pace_seed: 0,
        }
    }
}

/// Why a Nack came back (mirrors NDNLPv2 NackReason without depending on the codec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NackKind {
    Congestion,
    Duplicate,
    NoRoute,
    Other(u64),
}

/// A fatal fetch error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    #[error(
        "reached the maximum number of retries ({retries}) while retrieving segment #{segment}"
    )]
    RetriesExhausted { segment: u64, retries: u32 },
    #[error("could not retrieve segment #{segment}: Nack reason {reason:?}")]
    Nack { segment: u64, reason: NackKind },
    #[error("fetching terminated but no final segment number has been found")]
    NoFinalBlock,
}

/// One Interest to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub segment: u64,
    pub retransmission: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SegState {
    InFlight,
    InRetxQueue,
    /// Nacked for congestion: goes to the retransmission queue at its
    /// `deadline` (the back-off timer).
    BackingOff,
}

#[derive(Debug, Clone, Copy)]
struct SegInfo {
    state: SegState,
    sent_at: Timestamp,
    deadline: Timestamp,
    retx: u32,
    /// Congestion Nacks of this segment so far (its back-off exponent).
    congestion_nacks: u32,
}

/// Something ndnget's `--log-cwnd`/`--log-rtt` would write. Times are since
/// the pipeline started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LogEvent {
    /// The law's limit changed: a window (Interests) or a rate (Interests/s).
    Limit { t: Duration, limit: SendLimit },
    /// One RTT sample and the estimator after it.
    Rtt {
        t: Duration,
        segment: u64,
        rtt: Duration,
        srtt: Duration,
        rttvar: Duration,
        rto: Duration,
    },
}

/// Most log events kept between two [`Pipeline::poll_log`] calls; older
/// ones are dropped and counted.
pub const MAX_LOG_EVENTS: usize = 65_536;

/// The pipeline. See the module doc.
pub struct Pipeline<L> {
    cfg: PipelineConfig,
    law: L,
    rtt: RttEstimator,
    rtt_summary: RttSummary,
    log: VecDeque<LogEvent>,
    logged_limit: Option<SendLimit>,
    log_dropped: u64,
    segs: HashMap<u64, SegInfo>,
    timers: BTreeSet<(Timestamp, u64)>,
    retx_queue: VecDeque<u64>,
    next_seg: u64,
    final_seg: Option<u64>,
    reorder: BTreeMap<u64, Bytes>,
    next_deliver: u64,
    output: VecDeque<Bytes>,
    in_flight: u32,
    high_interest: u64,
    high_data: u64,
    rec_point: Option<u64>,
    /// A segment another Interest also asked for (a discovery probe with
    /// CanBePrefix): its Data may answer either, so it is no RTT sample
    /// (Karn's rule, as for a retransmission).
    ambiguous_segment: Option<u64>,
    /// When the RTO last backed off: Interests sent before it that time out
    /// belong to the same loss episode.
    backoff_at: Option<Timestamp>,
    /// Pacer: the slot of the last paced Interest. The next one may leave
    /// one gap at the *current* rate later, so a rate raised by the network
    /// takes effect at once instead of after the old, longer gap.
    last_slot: Option<Timestamp>,
    /// Pacer: the lags and the one drawn for the next Interest (a fraction
    /// of the gap).
    jitter: PaceJitter,
    lag: f64,
    pending_failure: Option<(u64, PipelineError)>,
    failed: Option<PipelineError>,
    start: Option<Timestamp>,
    done_at: Option<Timestamp>,
    next_sample_at: Timestamp,
    interval_bytes: u64,
    stats: FetchStats,
}

fn limit_value(l: SendLimit) -> f64 {
    match l {
        SendLimit::Window { interests } => interests,
        SendLimit::Rate {
            interests_per_sec, ..
        } => interests_per_sec,
    }
}

impl<L: ConsumerLaw> Pipeline<L> {
    /// A pipeline driven by `law`.
    pub fn new(cfg: PipelineConfig, law: L) -> Self {
        let jitter = PaceJitter::new(cfg.pace_seed, cfg.pace_jitter);
        Pipeline {
            rtt: RttEstimator::new(cfg.rtt),
            rtt_summary: RttSummary::default(),
            log: VecDeque::new(),
            logged_limit: None,
            log_dropped: 0,
            next_seg: cfg.first_segment,
            next_deliver: cfg.first_segment,
            cfg,
            law,
            segs: HashMap::new(),
            timers: BTreeSet::new(),
            retx_queue: VecDeque::new(),
            final_seg: None,
            reorder: BTreeMap::new(),
            output: VecDeque::new(),
            in_flight: 0,
            high_interest: 0,
            high_data: 0,
            rec_point: None,
            ambiguous_segment: None,
            backoff_at: None,
            last_slot: None,
            jitter,
            lag: 0.0,
            pending_failure: None,
            failed: None,
            start: None,
            done_at: None,
            next_sample_at: Timestamp::ZERO,
            interval_bytes: 0,
            stats: FetchStats::default(),
        }
    }

    /// What the law allows right now.
    pub fn limit(&self) -> SendLimit {
        self.law.limit()
    }

    /// Interests outstanding (not counting those waiting for retransmission).
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// The law.
    pub fn law(&self) -> &L {
        &self.law
    }

    /// The law, to add per-Interest fields (see [`crate::scheme::Scheme::tag`]).
    pub fn law_mut(&mut self) -> &mut L {
        &mut self.law
    }

    /// The retransmission timer's estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Next log event, when [`PipelineConfig::log_events`] is on.
    pub fn poll_log(&mut self) -> Option<LogEvent> {
        self.log.pop_front()
    }

    /// Log events dropped because nobody drained them.
    pub fn log_dropped(&self) -> u64 {
        self.log_dropped
    }

    fn push_log(&mut self, e: LogEvent) {
        if self.log.len() >= MAX_LOG_EVENTS {
            self.log.pop_front();
            self.log_dropped += 1;
        }
        self.log.push_back(e);
    }

    fn since_start(&self, now: Timestamp) -> Duration {
        self.start.map_or(Duration::ZERO, |s| now - s)
    }

    /// Logs the law's limit if it changed since the last call.
    fn note_limit(&mut self, now: Timestamp) {
        if !self.cfg.log_events {
            return;
        }
        let limit = self.law.limit();
        if self.logged_limit != Some(limit) {
            self.logged_limit = Some(limit);
            let t = self.since_start(now);
            self.push_log(LogEvent::Limit { t, limit });
        }
    }

    /// Last segment number, once a FinalBlockId was seen.
    pub fn final_segment(&self) -> Option<u64> {
        self.final_seg
    }

    /// Segments delivered in order so far.
    pub fn delivered_segments(&self) -> u64 {
        self.next_deliver - self.cfg.first_segment
    }

    /// True once every segment up to the final one was delivered.
    pub fn is_done(&self) -> bool {
        self.done_at.is_some()
    }

    /// The fatal error, if the fetch failed.
    pub fn error(&self) -> Option<&PipelineError> {
        self.failed.as_ref()
    }

    /// Counters and series; timing is final once [`Pipeline::is_done`].
    pub fn stats(&self) -> FetchStats {
        let mut s = self.stats.clone();
        if let Some((a, b, c)) = self.rtt_summary.min_avg_max() {
            s.rtt_min_ms = Some(a.as_secs_f64() * 1e3);
            s.rtt_avg_ms = Some(b.as_secs_f64() * 1e3);
            s.rtt_max_ms = Some(c.as_secs_f64() * 1e3);
        }
        s.final_segment = self.final_seg;
        s
    }

    /// Sets the end of the timing window (for a summary of a failed or
    /// interrupted fetch).
    pub fn finish_timing(&mut self, now: Timestamp) {
        if let Some(start) = self.start {
            self.stats.finish_timing(start, self.done_at.unwrap_or(now));
        }
    }

    /// `segment` was also asked for by another Interest still on its way
    /// (a version-discovery probe the producer may answer with it): the
    /// first Data of it gives no RTT sample.
    pub fn also_requested(&mut self, segment: u64) {
        self.ambiguous_segment = Some(segment);
    }

    /// Next in-order chunk of content.
    pub fn poll_output(&mut self) -> Option<Bytes> {
        self.output.pop_front()
    }

    fn stopped(&self) -> bool {
        self.failed.is_some() || self.done_at.is_some()
    }

    fn fail(&mut self, e: PipelineError) {
        if self.failed.is_none() {
            self.failed = Some(e);
            self.segs.clear();
            self.timers.clear();
            self.retx_queue.clear();
            self.in_flight = 0;
        }
    }

    fn window_cap(&self) -> Option<u32> {
        let max = self.cfg.max_outstanding;
        match self.law.limit() {
            SendLimit::Window { interests } => {
                let w = if interests.is_finite() {
                    interests.floor().max(1.0)
                } else {
                    1.0
                };
                Some((w.min(max as f64)) as u32)
            }
            SendLimit::Rate {
                max_outstanding, ..
            } => Some(max_outstanding.clamp(1, max)),
        }
    }

    /// The pacer: a rate law's rate, or the pace a window law asks for on
    /// top of its window (`ConsumerLaw::pace_ips`), with what each may make
    /// up after a late wake-up; `None`: send as the window opens.
    fn pace(&self) -> Option<Pace> {
        let (ips, rate_law) = match self.law.limit() {
            SendLimit::Rate {
                interests_per_sec, ..
            } => {
                if interests_per_sec.is_finite() && interests_per_sec > 0.0 {
                    (interests_per_sec.max(0.01), true)
                } else {
                    (0.01, true)
                }
            }
            SendLimit::Window { .. } => (
                self.law
                    .pace_ips()
                    .filter(|r| r.is_finite() && *r > 0.0)?
                    .max(0.01),
                false,
            ),
        };
        let gap = Duration::from_secs_f64(1.0 / ips);
        // max_burst Interests for a rate law; for a paced window, at most
        // max_catch_up of sending time and one Interest besides the one due.
        let catch_up = if rate_law {
            gap.mul_f64(self.cfg.max_burst.max(1.0))
        } else {
            gap.max(self.cfg.max_catch_up)
        };
        Some(Pace {
            gap,
            catch_up,
            rate_law,
        })
    }

    /// The next Interest's slot, `gap` being the current one.
    fn next_slot(&self, gap: Duration) -> Timestamp {
        match self.last_slot {
            Some(s) => s + gap,
            None => Timestamp::ZERO,
        }
    }

    /// When the pacer lets the next Interest go: its slot plus its lag
    /// (the first goes at once).
    fn next_send_at(&self, gap: Duration) -> Timestamp {
        match self.last_slot {
            Some(_) => self.next_slot(gap) + gap.mul_f64(self.lag),
            None => Timestamp::ZERO,
        }
    }

    fn has_candidate(&self) -> bool {
        if !self.retx_queue.is_empty() {
            return true;
        }
        let within_final = self.final_seg.is_none_or(|f| self.next_seg <= f);
        within_final
            && self.next_seg < self.next_deliver + self.cfg.max_reorder_segments
            && self.pending_failure.is_none()
    }

    /// The next Interest to send now, if the law and the window allow one.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Request> {
        if self.stopped() {
            return None;
        }
        if self.start.is_none() {
            self.start = Some(now);
            self.next_sample_at = now + self.cfg.sample_interval;
            self.note_limit(now);
        }
        self.sample(now);
        loop {
            if self.in_flight >= self.window_cap()? || !self.has_candidate() {
                return None;
            }
            let pace = self.pace();
            if pace.is_some_and(|p| now < self.next_send_at(p.gap)) {
                return None;
            }
            let (segment, retransmission) = match self.retx_queue.pop_front() {
                Some(s) => match self.segs.get(&s) {
                    Some(i) if i.state == SegState::InRetxQueue => (s, true),
                    _ => {
                        self.stats.skipped_retransmissions += 1;
                        continue;
                    }
                },
                None => {
                    let s = self.next_seg;
                    self.next_seg += 1;
                    (s, false)
                }
            };
            let retx = if retransmission {
                let r = self.segs.get(&segment).map_or(0, |i| i.retx) + 1;
                if let Some(max) = self.cfg.max_retries {
                    if r > max {
                        self.fail(PipelineError::RetriesExhausted {
                            segment,
                            retries: max,
                        });
                        return None;
                    }
                }
                self.stats.retransmissions += 1;
                r
            } else {
                self.high_interest = self.high_interest.max(segment);
                0
            };
            let timeout = self.rtt.rto().min(self.cfg.lifetime);
            let deadline = now + timeout;
            let congestion_nacks = self.segs.get(&segment).map_or(0, |i| i.congestion_nacks);
            if let Some(old) = self.segs.insert(
                segment,
                SegInfo {
                    state: SegState::InFlight,
                    sent_at: now,
                    deadline,
                    retx,
                    congestion_nacks,
                },
            ) {
                self.timers.remove(&(old.deadline, segment));
            }
            self.timers.insert((deadline, segment));
            self.in_flight += 1;
            self.stats.interests_sent += 1;
            if let Some(p) = pace {
                let floor = now - p.catch_up;
                self.last_slot = Some(match self.last_slot {
                    None => now,
                    Some(_) => self.next_slot(p.gap).max(floor),
                });
                // Only a rate law's Interests lag: a window law's sends are
                // clocked by its returning Data, and its pace only spreads
                // what the window opens.
                self.lag = if p.rate_law {
                    self.jitter.next_lag()
                } else {
                    0.0
                };
            }
            self.law.on_interest_sent(now, retransmission);
            return Some(Request {
                segment,
                retransmission,
            });
        }
    }

    /// When [`Pipeline::handle_timeout`] (or another poll) should run next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if self.stopped() {
            return None;
        }
        let mut t = self.timers.first().map(|(d, _)| *d);
        if self.start.is_some() {
            t = Some(t.map_or(self.next_sample_at, |x| x.min(self.next_sample_at)));
        }
        if let Some(Pace { gap, .. }) = self.pace() {
            if self.has_candidate() && self.window_cap().is_some_and(|c| self.in_flight < c) {
                let next = self.next_send_at(gap);
                t = Some(t.map_or(next, |x| x.min(next)));
            }
        }
        t
    }

    fn sample(&mut self, now: Timestamp) {
        let Some(start) = self.start else { return };
        let interval = self.cfg.sample_interval;
        if interval.is_zero() {
            return;
        }
        if now >= self.next_sample_at {
            let limit = self.law.limit();
            let (window, rate_ips) = match limit {
                SendLimit::Window { interests } => (Some(interests), None),
                SendLimit::Rate {
                    interests_per_sec, ..
                } => (None, Some(interests_per_sec)),
            };
            let s = Sample {
                t_s: (now - start).as_secs_f64(),
                window,
                rate_ips,
                in_flight: self.in_flight,
                goodput_bps: self.interval_bytes as f64 * 8.0 / interval.as_secs_f64(),
                srtt_ms: self.rtt.srtt().map(|d| d.as_secs_f64() * 1e3),
                rto_ms: self.rtt.rto().as_secs_f64() * 1e3,
                segments: self.stats.segments_received,
                marks: self.stats.congestion_marks,
                timeouts: self.stats.timeouts,
                nacks: self.stats.nacks,
                retransmissions: self.stats.retransmissions,
            };
            self.stats.push_sample(s);
            self.interval_bytes = 0;
            // Skip intervals the caller slept through instead of emitting a burst.
            let behind = (now - self.next_sample_at).as_nanos() / interval.as_nanos();
            let steps = u32::try_from(behind + 1).unwrap_or(u32::MAX);
            self.next_sample_at += interval.saturating_mul(steps);
        }
    }
}

#[cfg(test)]
mod tests;
