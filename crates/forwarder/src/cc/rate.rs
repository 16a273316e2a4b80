//! RCP and MIRCC on one face, composed from cc-core: the per-period link
//! law ([`AnyLinkLaw`]: RCP eq. 1 or MIRCC eqs. 2-16), the Data/Interest
//! [`Inflation`] factor and the MIRCC [`InterestShaper`] that books the
//! returning Data on the face's capacity and hands back what it cannot
//! queue (Nacked with the face's rates).
//!
//! The floor of the primary rate is one Data per `period_ms` (Data size
//! measured on the face), not a fixed 10 kbit/s: on real links with 8 KB
//! Data a law that collapsed to 10 kbit/s left its consumers sending one
//! Interest every 6.5 s, deaf to every later rate until that Interest came
//! back (dumbbell RCP stalled at 0.2 Mbit/s in half the runs). The
//! reference RCP router keeps at least a packet per RTT for the same
//! reason; one Data per period keeps a consumer held at the floor within
//! one period of the next rate.

use cc_core::mircc::{path::fold_path_id, Inflation, InterestShaper, ShaperConfig, ShaperVerdict};
use cc_core::rcp::RcpConfig;
use cc_core::{AnyLinkLaw, Duration, LawKind, LinkLaw, LinkLawConfig, LinkSample, Timestamp};
use icn_tlv::types::MAX_NDN_PACKET_SIZE;
use icn_tlv::{CcFields, TrafficClass};

use super::config::{CcConfig, CcScheme};
use crate::engine::{CcFaceStatus, HookDequeue, InterestAdmission, OutPacket};

/// Input above this multiple of the capacity since the last update ends a
/// MIRCC period early ([`RateFace::arrival_burst`]). Paced flows at η·C
/// never reach it; flows that joined at the pre-arrival rate do.
const ARRIVAL_INPUT_FACTOR: f64 = 1.5;

/// Rate state of one face (the stamping rate applies to Data returning on it).
pub(crate) struct RateFace {
    dual: bool,
    law: AnyLinkLaw,
    inflation: Inflation,
    shaper: InterestShaper<OutPacket>,
    primary_bytes: u64,
    secondary_bytes: u64,
    srtt_secs: Option<f64>,
    rtt_gain: f64,
    default_rtt: Duration,
    /// The longest control period (`period_ms`), the floor's time base.
    period: Duration,
    /// Where the law's period may go as it follows the RTT.
    period_bounds: cc_core::PeriodBounds,
    /// Target utilisation η of the law (for the floor's fair-share cap).
    eta: f64,
    /// The current MIRCC period was already cut short by an arrival burst.
    cut_short: bool,
    capacity_bps: f64,
}

/// The cc-core link-law parameters of `cfg`.
pub(crate) fn link_law_config(cfg: &CcConfig) -> LinkLawConfig {
    let mut l = LinkLawConfig::default();
    l.rcp = RcpConfig {
        alpha: cfg.rcp.alpha,
        beta: cfg.rcp.beta,
        eta: cfg.rcp.eta,
        period: cfg.period(),
        ..l.rcp
    };
    l.mircc.beta_min = cfg.mircc.beta_prime;
    l.mircc.ewma_alpha = cfg.mircc.ewma_alpha;
    l.mircc.eta = cfg.mircc.eta;
    l.mircc.period = cfg.period();
    l.mircc.secondary_keeps_headroom = cfg.mircc.secondary_keeps_headroom;
    l
}

impl RateFace {
    pub(crate) fn new(kind: CcScheme, cfg: &CcConfig, capacity_bps: f64, now: Timestamp) -> Self {
        let _ = now;
        let lcfg = link_law_config(cfg);
        let dual = kind == CcScheme::Mircc;
        let law_kind = if dual { LawKind::Mircc } else { LawKind::Rcp };
        let law = AnyLinkLaw::new(law_kind, capacity_bps, &lcfg)
            .unwrap_or_else(|| AnyLinkLaw::Rcp(cc_core::rcp::RcpLink::new(lcfg.rcp, capacity_bps)));
        let m = lcfg.mircc;
        let inflation = Inflation::new(m.inflation_gain, m.initial_inflation);
        let shaper = InterestShaper::new(
            ShaperConfig {
                max_queue: cfg.mircc.shaper_queue.max(1),
                max_delay: Duration::from_millis(cfg.mircc.shaper_max_delay_ms),
                data_share: cfg.mircc.data_share,
                ..ShaperConfig::default()
            },
            capacity_bps,
        );
        RateFace {
            dual,
            law,
            inflation,
            shaper,
            primary_bytes: 0,
            secondary_bytes: 0,
            srtt_secs: None,
            rtt_gain: m.rtt_gain,
            default_rtt: m.default_rtt,
            period: cfg.period(),
            period_bounds: cfg.period_bounds(),
            eta: if dual { cfg.mircc.eta } else { cfg.rcp.eta },
            cut_short: false,
            capacity_bps,
        }
    }

    /// The factor the shaper books each Interest with: once a Data came
    /// back, the decaying peak of the measured Data sizes over the Interest
    /// size ([`Inflation::booking_factor`]); before that, the largest Data
    /// an Interest may bring (MAX_NDN_PACKET_SIZE) over the Interest size.
    /// With ι's initial 1.0 the shaper booked Interest-sized Data, so
    /// nothing paced the first RTT of Interests; with the averaged ι a small
    /// first Data (RDR metadata) still let 22-31 extra 8 KB Data through to
    /// the testbed dumbbell's upstream node.
    fn booking_factor(&self, interest_bytes: u32) -> f64 {
        if self.inflation.data_bytes().is_some() {
            return self.inflation.booking_factor();
        }
        let i = self
            .inflation
            .interest_bytes()
            .unwrap_or(f64::from(interest_bytes))
            .max(1.0);
        MAX_NDN_PACKET_SIZE as f64 / i
    }

    pub(crate) fn set_capacity(&mut self, c: f64) {
        self.capacity_bps = c;
        self.law.set_capacity(c);
        self.shaper.set_capacity(c);
    }

    /// The smoothed RTT d(t), or the default before any sample.
    fn srtt(&self) -> Duration {
        match self.srtt_secs {
            Some(s) if s > 0.0 => Duration::from_secs_f64(s),
            _ => self.default_rtt,
        }
    }

    /// One Data per configured period once the Data size is known, capped
    /// at the fair share the last period's input shows
    /// ([`cc_core::rcp::responsive_floor_bps`]).
    fn floor_bps(&self, input_bps: f64) -> f64 {
        cc_core::rcp::responsive_floor_bps(
            self.inflation.data_bytes(),
            self.period,
            self.eta,
            self.capacity_bps,
            self.law.rates().primary_bps,
            input_bps,
        )
    }

    pub(crate) fn queued(&self) -> usize {
        self.shaper.len()
    }

    /// The face's rates as CC fields (what a congestion Nack carries).
    pub(crate) fn nack_fields(&self) -> CcFields {
        let r = self.law.rates();
        CcFields {
            primary_rate_bps: Some(r.primary_bps.max(0.0) as u64),
            secondary_rate_bps: r.secondary_bps.map(|s| s.max(0.0) as u64),
            ..CcFields::default()
        }
    }

    /// An Interest routed to this face: counted into y(t) whatever becomes
    /// of it (MIRCC footnote 2), then offered to the shaper.
    pub(crate) fn admit(&mut self, now: Timestamp, pkt: OutPacket) -> InterestAdmission {
        let class = match pkt.cc.traffic_class {
            Some(TrafficClass::Secondary) if self.dual => TrafficClass::Secondary,
            _ => TrafficClass::Primary,
        };
        let size = u32::try_from(pkt.wire.len()).unwrap_or(u32::MAX);
        let inflated = self.inflation.inflate(u64::from(size));
        match class {
            TrafficClass::Primary => {
                self.primary_bytes = self.primary_bytes.saturating_add(inflated)
            }
            TrafficClass::Secondary => {
                self.secondary_bytes = self.secondary_bytes.saturating_add(inflated)
            }
        }
        let class = match class {
            TrafficClass::Primary => cc_core::mircc::TrafficClass::Primary,
            TrafficClass::Secondary => cc_core::mircc::TrafficClass::Secondary,
        };
        self.end_period_on_arrival(now);
        if self.inflation.data_bytes().is_none() {
            self.shaper.set_inflation(self.booking_factor(size));
        }
        match self.shaper.enqueue(now, pkt, class, size) {
            ShaperVerdict::Queued => InterestAdmission::Queued,
            ShaperVerdict::QueuedEvicting(victim) => InterestAdmission::QueuedEvicting {
                victim,
                cc: self.nack_fields(),
            },
            ShaperVerdict::Rejected(pkt) => InterestAdmission::Rejected {
                pkt,
                cc: self.nack_fields(),
            },
        }
    }

    pub(crate) fn dequeue(&mut self, now: Timestamp) -> HookDequeue {
        match self.shaper.dequeue(now) {
            Some((pkt, _, size)) => {
                self.inflation.on_interest(size);
                self.shaper.set_inflation(self.booking_factor(size));
                HookDequeue::Item(pkt)
            }
            None => match self.shaper.next_release_time() {
                Some(t) => HookDequeue::NotBefore(t),
                None => HookDequeue::Empty,
            },
        }
    }

    pub(crate) fn on_data(&mut self, _now: Timestamp, bytes: usize, rtt: Option<Duration>) {
        self.inflation
            .on_data(u32::try_from(bytes).unwrap_or(u32::MAX));
        self.shaper.set_inflation(self.booking_factor(0));
        if let Some(r) = rtt {
            let s = r.as_secs_f64();
            let g = self.rtt_gain;
            self.srtt_secs = Some(self.srtt_secs.map_or(s, |o| o + g * (s - o)));
        }
    }

    /// Min-stamps the rates into a Data or Nack leaving towards downstream
    /// and folds this hop into the MIRCC path id.
    pub(crate) fn stamp(&self, cc: &mut CcFields, node: u64, face: u64) {
        let r = self.law.rates().stamp(
            cc.primary_rate_bps.map(|x| x as f64),
            cc.secondary_rate_bps.map(|x| x as f64),
        );
        cc.primary_rate_bps = Some(r.primary_bps.max(0.0) as u64);
        if let Some(s) = r.secondary_bps {
            cc.secondary_rate_bps = Some(s.max(0.0) as u64);
            cc.path_id = Some(fold_path_id(cc.path_id.unwrap_or(0), node, face));
        }
    }

    pub(crate) fn next_update(&self) -> Timestamp {
        self.law.next_update()
    }

    /// MIRCC only: whether the input since the last update shows flows
    /// arriving, so the period ends now instead of at T. MIRCC §3.1.2 wants
    /// T "as short as possible, and no greater than RTT", limited only by
    /// lumpy measurements; N̂ = max(C, y)/R (eq. 2) sees new flows in y(t).
    /// With T = 100 ms above the RTT, new flows that took the pre-arrival
    /// rate from their first Data send at it until the period ends. Input
    /// above 1.5 times the capacity over at least half a period and eight
    /// Data serialisations is no lumpiness, so the period ends there, at
    /// most once per period: the next one must leave the flows an RTT to
    /// hear the new rate, or N̂ would count them twice. A shorter window
    /// (a quarter period, four Data) fired on chance clumps of paced flows
    /// in steady state on the testbed (7 Data of 8 KB within 28 ms at
    /// 10 Mbit/s, twice in 24 s), each a 20 % dip of Rp for no arrival.
    fn arrival_burst(&self, now: Timestamp) -> bool {
        if !self.dual || self.cut_short {
            return false;
        }
        let c = self.capacity_bps;
        let Some(data_bytes) = self.inflation.data_bytes() else {
            return false;
        };
        let Some(last) = self.period_start() else {
            return false;
        };
        if c.is_nan() || c <= 0.0 {
            return false;
        }
        let period = self.law.period();
        let elapsed = now.saturating_since(last).as_secs_f64();
        let min_s = (period.as_secs_f64() / 2.0).max(8.0 * data_bytes * 8.0 / c);
        if elapsed < min_s {
            return false;
        }
        let y_bps = self.primary_bytes.saturating_add(self.secondary_bytes) as f64 * 8.0 / elapsed;
        y_bps > ARRIVAL_INPUT_FACTOR * c
    }

    /// When the current period began (the law's last update): derived from
    /// its next update and period, `None` before the first update.
    fn period_start(&self) -> Option<Timestamp> {
        let next = self.law.next_update();
        (next != Timestamp::ZERO).then(|| next - self.law.period())
    }

    /// Ends the period now if [`Self::arrival_burst`]; whether it did.
    fn end_period_on_arrival(&mut self, now: Timestamp) -> bool {
        if !self.arrival_burst(now) {
            return false;
        }
        self.update(now);
        self.cut_short = true;
        true
    }

    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        if now < self.law.next_update() {
            return;
        }
        self.cut_short = false;
        self.update(now);
    }

    /// Ends the current period: one step of the link law.
    fn update(&mut self, now: Timestamp) {
        let rtt = self.srtt();
        let sample = LinkSample {
            primary_bytes: core::mem::take(&mut self.primary_bytes),
            secondary_bytes: core::mem::take(&mut self.secondary_bytes),
            queue_bytes: {
                let q = self
                    .inflation
                    .inflate(self.shaper.take_mean_queued_bytes(now));
                if self.dual {
                    q
                } else {
                    cc_core::rcp::queue_beyond_one_data(q, self.inflation.data_bytes())
                }
            },
            rtt,
        };
        let input_bps = match self
            .period_start()
            .map(|t| now.saturating_since(t).as_secs_f64())
        {
            Some(e) if e > 0.0 => {
                (sample.primary_bytes.saturating_add(sample.secondary_bytes)) as f64 * 8.0 / e
            }
            _ => 0.0,
        };
        self.law.set_floor_bps(self.floor_bps(input_bps));
        let rates = self.law.update(now, &sample);
        self.law.set_period(cc_core::control_period(
            self.srtt_secs.map(|_| rtt),
            &self.period_bounds,
            self.inflation.data_bytes(),
            self.capacity_bps,
        ));
        tracing::trace!(
            capacity_bps = self.capacity_bps,
            yp_bytes = sample.primary_bytes,
            ys_bytes = sample.secondary_bytes,
            queue_bytes = sample.queue_bytes,
            rtt_ms = rtt.as_secs_f64() * 1e3,
            period_ms = self.law.period().as_secs_f64() * 1e3,
            primary_bps = rates.primary_bps,
            secondary_bps = rates.secondary_bps,
            queued = self.shaper.len(),
            "rate update"
        );
    }

    pub(crate) fn status(&self, s: &mut CcFaceStatus) {
        let f = self.nack_fields();
        s.primary_rate_bps = f.primary_rate_bps;
        s.secondary_rate_bps = f.secondary_rate_bps;
        let c = self.shaper.counters();
        s.queued_interests = self.shaper.len() as u64;
        s.rejected_interests = c.rejected;
        s.evicted_interests = c.evicted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A face of `scheme` on a `capacity_bps` link, its first update run at
    /// time zero, and the control period.
    fn started(scheme: CcScheme, capacity_bps: f64) -> (RateFace, Duration) {
        let cfg = CcConfig {
            scheme,
            ..CcConfig::default()
        };
        let mut f = RateFace::new(scheme, &cfg, capacity_bps, Timestamp::ZERO);
        f.handle_timeout(Timestamp::ZERO);
        (f, cfg.period())
    }

    /// A face of `scheme` on a 20 Mbit/s link that has seen one 8100-byte
    /// Data and run one period with five flows at η·C each (eq. 1's factor
    /// goes negative).
    fn overloaded(scheme: CcScheme) -> RateFace {
        let t0 = Timestamp::ZERO;
        let (mut f, period) = started(scheme, 20e6);
        f.on_data(t0, 8100, Some(Duration::from_millis(20)));
        f.primary_bytes = (5.0 * 19e6 * 0.1 / 8.0) as u64;
        f.handle_timeout(t0 + period);
        f
    }

    const FLOOR_BPS: f64 = 8100.0 * 8.0 / 0.1;

    /// A face of `scheme` on 10 Mbit/s, one period in, one Data seen.
    fn settled(scheme: CcScheme) -> (RateFace, Timestamp) {
        let t0 = Timestamp::ZERO;
        let (mut f, period) = started(scheme, 10e6);
        f.on_data(t0, 8100, Some(Duration::from_millis(20)));
        let t1 = t0 + period;
        f.primary_bytes = (9.5e6 * 0.1 / 8.0) as u64;
        f.handle_timeout(t1);
        (f, t1)
    }

    /// Bytes of `bps` over `ms`.
    fn bytes(bps: f64, ms: u64) -> u64 {
        (bps * ms as f64 / 1e3 / 8.0) as u64
    }

    #[test]
    fn mircc_ends_a_period_early_once_when_flows_arrive() {
        let (mut f, t1) = settled(CcScheme::Mircc);
        let r0 = f.law.rates().primary_bps;
        // Paced input at η·C never ends a period early.
        f.primary_bytes = bytes(9.5e6, 50);
        assert!(!f.end_period_on_arrival(t1 + Duration::from_millis(50)));
        // Nor does a clump of paced flows: 1.6·C over 30 ms.
        f.primary_bytes = bytes(16e6, 30);
        assert!(!f.end_period_on_arrival(t1 + Duration::from_millis(30)));
        // Three flows joined at the old rate: 4·η·C, but half a period
        // and eight 8 KB Data serialisations (52 ms) must pass before the
        // input is believed.
        f.primary_bytes = bytes(38e6, 45);
        assert!(!f.end_period_on_arrival(t1 + Duration::from_millis(45)));
        f.primary_bytes = bytes(38e6, 60);
        assert!(f.end_period_on_arrival(t1 + Duration::from_millis(60)));
        let r1 = f.law.rates().primary_bps;
        assert!(r1 < 0.9 * r0, "{r0} -> {r1}");
        // Once per period: the flows need an RTT to hear the new rate.
        f.primary_bytes = bytes(38e6, 60);
        assert!(!f.end_period_on_arrival(t1 + Duration::from_millis(120)));
        // The regular update re-arms it.
        f.handle_timeout(t1 + Duration::from_millis(160));
        f.primary_bytes = bytes(38e6, 60);
        assert!(f.end_period_on_arrival(t1 + Duration::from_millis(220)));
    }

    fn interest(bytes: usize) -> OutPacket {
        OutPacket {
            kind: crate::engine::PacketKind::Interest,
            wire: bytes::Bytes::from(vec![5u8; bytes]),
            pit_token: None,
            nack: None,
            congestion_mark: 0,
            cc: CcFields::default(),
            enqueued_at: Timestamp::ZERO,
            ingress: crate::engine::FaceId(1),
        }
    }

    /// Interests released by `f` from `t0` until `t0 + ms`, polled each 1 ms.
    fn released_within(f: &mut RateFace, t0: Timestamp, ms: u64) -> usize {
        let mut n = 0;
        for k in 0..=ms {
            while let HookDequeue::Item(_) = f.dequeue(t0 + Duration::from_millis(k)) {
                n += 1;
            }
        }
        n
    }

    #[test]
    fn before_any_data_the_shaper_books_the_largest_data() {
        for scheme in [CcScheme::Mircc, CcScheme::Rcp] {
            let t0 = Timestamp::ZERO;
            let (mut f, _) = started(scheme, 20e6);
            for _ in 0..50 {
                let _ = f.admit(t0, interest(60));
            }
            // 8800-byte Data at 20 Mbit/s: one Interest per 3.52 ms, so
            // 10 ms let about 3 go (plus the shaper's 2 ms burst), not 50.
            let early = released_within(&mut f, t0, 10);
            assert!((2..=6).contains(&early), "{scheme:?}: {early} in 10 ms");
            // Once Data of 1000 bytes come back, the measured ι applies
            // (to fresh Interests: the 50 ms wait bound Nacked most of the
            // first 50).
            f.on_data(t0, 1000, Some(Duration::from_millis(20)));
            let t1 = t0 + Duration::from_millis(11);
            for _ in 0..50 {
                let _ = f.admit(t1, interest(60));
            }
            let later = released_within(&mut f, t1, 10);
            assert!(later >= 20, "{scheme:?}: {later} in 10 ms after Data");
        }
    }

    #[test]
    fn rcp_keeps_its_period() {
        let (mut f, t1) = settled(CcScheme::Rcp);
        f.primary_bytes = bytes(38e6, 30);
        assert!(!f.end_period_on_arrival(t1 + Duration::from_millis(30)));
    }

    #[test]
    fn rcp_collapse_stops_at_one_measured_data_per_period() {
        let f = overloaded(CcScheme::Rcp);
        let rp = f.nack_fields().primary_rate_bps.unwrap() as f64;
        assert!((rp - FLOOR_BPS).abs() < 1.0, "{rp} vs {FLOOR_BPS}");
    }

    #[test]
    fn mircc_primary_floor_follows_the_data_size() {
        let f = overloaded(CcScheme::Mircc);
        let AnyLinkLaw::Mircc(m) = &f.law else {
            panic!("mircc face without a mircc law");
        };
        assert!((m.floor_bps() - FLOOR_BPS).abs() < 1e-6);
        assert!(m.primary_bps() >= FLOOR_BPS);
    }
}
