//! RCP and MIRCC on one face, composed from cc-core: the per-period link
//! law ([`AnyLinkLaw`]: RCP eq. 1 or MIRCC eqs. 2-16), the Data/Interest
//! [`Inflation`] factor and the MIRCC [`InterestShaper`] that books the
//! returning Data on the face's capacity and hands back what it cannot
//! queue (Nacked with the face's rates).
//!
//! Two pieces of wiring matter on real links with large Data:
//! * **the period T follows the RTT.** MIRCC §3.1.2 wants T "as short as
//!   possible, and no greater than RTT", bounded below by lumpy
//!   measurements; RCP's reference router updates within an RTT as well.
//!   Each face runs `T = min(period_ms, max(d, 8 Data times))`: with a
//!   100 ms period on a 20 ms path, new flows would run at the old rate for
//!   five RTTs and fill the shaper before the law saw them;
//! * **the floor is one Data per period_ms.** A link that collapses to a
//!   tiny floor (10 kbit/s is one 8 KB Data every 6.5 s) leaves its
//!   consumers deaf to every later rate until their next Interest; the
//!   reference RCP router keeps at least a packet per RTT for the same
//!   reason. The floor uses the Data size measured on the face.

use cc_core::mircc::{path::fold_path_id, Inflation, InterestShaper, ShaperConfig, ShaperVerdict};
use cc_core::rcp::RcpConfig;
use cc_core::{AnyLinkLaw, Duration, LawKind, LinkLaw, LinkLawConfig, LinkSample, Timestamp};
use icn_tlv::{CcFields, TrafficClass};

use super::config::{CcConfig, CcScheme};
use crate::engine::{CcFaceStatus, HookDequeue, InterestAdmission, OutPacket};

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
    capacity_bps: f64,
    /// The configured period: the longest T, and the floor's time base.
    max_period: Duration,
    /// When the law runs next (see the module doc for T).
    next_update: Timestamp,
}

/// Fewest Data a period must be able to carry at the face's capacity:
/// shorter periods measure y(t) in too few packets to mean anything.
const MIN_DATA_PER_PERIOD: f64 = 8.0;
const ADAPTIVE_PERIOD: bool = false;

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
    l
}

impl RateFace {
    pub(crate) fn new(kind: CcScheme, cfg: &CcConfig, capacity_bps: f64, now: Timestamp) -> Self {
        let lcfg = link_law_config(cfg);
        let dual = kind == CcScheme::Mircc;
        let law_kind = if dual { LawKind::Mircc } else { LawKind::Rcp };
        let law = AnyLinkLaw::new(law_kind, capacity_bps, &lcfg)
            .unwrap_or_else(|| AnyLinkLaw::Rcp(cc_core::rcp::RcpLink::new(lcfg.rcp, capacity_bps)));
        let m = lcfg.mircc;
        let inflation = Inflation::new(m.inflation_gain, m.initial_inflation);
        let mut shaper = InterestShaper::new(
            ShaperConfig {
                max_queue: cfg.mircc.shaper_queue.max(1),
                data_share: cfg.mircc.data_share,
                ..ShaperConfig::default()
            },
            capacity_bps,
        );
        shaper.set_inflation(inflation.factor());
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
            capacity_bps: capacity_bps.max(0.0),
            max_period: cfg.period(),
            next_update: now,
        }
    }

    pub(crate) fn set_capacity(&mut self, c: f64) {
        self.capacity_bps = c.max(0.0);
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

    /// The next period: d(t), at least [`MIN_DATA_PER_PERIOD`] Data times,
    /// at most the configured period.
    fn period(&self) -> Duration {
        let d = self.srtt().as_secs_f64();
        let lumpy = match self.inflation.data_bytes() {
            Some(b) if self.capacity_bps > 0.0 => MIN_DATA_PER_PERIOD * b * 8.0 / self.capacity_bps,
            _ => f64::INFINITY,
        };
        let t = d.max(lumpy).min(self.max_period.as_secs_f64());
        Duration::from_secs_f64(t).max(Duration::from_millis(1))
    }

    /// One Data per configured period, once the Data size is known.
    fn floor_bps(&self) -> f64 {
        let t = self.max_period.as_secs_f64();
        match self.inflation.data_bytes() {
            Some(b) if t > 0.0 => b * 8.0 / t,
            _ => 0.0,
        }
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
                self.shaper.set_inflation(self.inflation.factor());
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
        self.shaper.set_inflation(self.inflation.factor());
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
        self.next_update
    }

    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        if now < self.next_update {
            return;
        }
        let rtt = self.srtt();
        let sample = LinkSample {
            primary_bytes: core::mem::take(&mut self.primary_bytes),
            secondary_bytes: core::mem::take(&mut self.secondary_bytes),
            queue_bytes: self.inflation.inflate(self.shaper.queued_bytes()),
            rtt,
        };
        self.law.set_floor_bps(self.floor_bps());
        let rates = self.law.update(now, &sample);
        self.next_update = now
            + if ADAPTIVE_PERIOD {
                self.period()
            } else {
                self.max_period
            };
        tracing::trace!(
            capacity_bps = self.capacity_bps,
            y_bytes = sample.primary_bytes + sample.secondary_bytes,
            queue_bytes = sample.queue_bytes,
            rtt_ms = rtt.as_secs_f64() * 1e3,
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
