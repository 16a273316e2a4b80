//! RCP and MIRCC on one face: cc-core's [`RateLink`] (the law, inflation,
//! shaper and every rule icnfwd adds to the papers' link, tested there),
//! fed with the engine's packets and the CC fields of the wire.

use cc_core::rate_link::{RateLink, RateLinkConfig};
use cc_core::{Duration, LawKind, LinkLawConfig, Timestamp};
use icn_tlv::cc::{rate_from_wire, rate_to_wire};
use icn_tlv::{CcFields, TrafficClass};

use super::config::{CcConfig, CcScheme};
use crate::engine::{CcFaceStatus, HookDequeue, InterestAdmission, OutPacket};
use cc_core::mircc::{path::fold_path_id, ShaperConfig, ShaperVerdict};

/// Rate state of one face (the stamping rate applies to Data returning on it).
pub(crate) struct RateFace {
    link: RateLink<OutPacket>,
}

/// The cc-core link-law parameters of `cfg` (each law from its own
/// scheme's profile and keys).
pub(crate) fn link_law_config(cfg: &CcConfig) -> LinkLawConfig {
    LinkLawConfig {
        rcp: cc_core::rcp::RcpConfig {
            alpha: cfg.rcp.alpha,
            beta: cfg.rcp.beta,
            eta: cfg.rcp.eta,
            period: cfg.period(),
            ..cc_core::rcp::RcpConfig::for_profile(cfg.rcp.profile)
        },
        mircc: cc_core::mircc::MirccConfig {
            beta_min: cfg.mircc.beta_prime,
            ewma_alpha: cfg.mircc.ewma_alpha,
            eta: cfg.mircc.eta,
            period: cfg.period(),
            secondary_keeps_headroom: cfg.mircc.secondary_keeps_headroom,
            secondary_starts_at_floor: cfg.mircc.secondary_starts_at_floor,
            ..cc_core::mircc::MirccConfig::for_profile(cfg.mircc.profile)
        },
    }
}

/// The cc-core rate-link parameters of `cfg` for a face running `kind`
/// (q(t) sampling follows that scheme's keys).
pub(crate) fn rate_link_config(cfg: &CcConfig, kind: CcScheme) -> RateLinkConfig {
    let (mean_queue, profile) = if kind == CcScheme::Mircc {
        (cfg.mircc.mean_queue, cfg.mircc.profile)
    } else {
        (cfg.rcp.mean_queue, cfg.rcp.profile)
    };
    let by_profile = RateLinkConfig::for_profile(profile);
    RateLinkConfig {
        law: link_law_config(cfg),
        shaper: ShaperConfig {
            max_queue: cfg.mircc.shaper_queue.max(1),
            max_delay: Duration::from_millis(cfg.mircc.shaper_max_delay_ms),
            data_share: cfg.mircc.data_share,
            ..ShaperConfig::default()
        },
        period_bounds: cfg.period_bounds(),
        mean_queue,
        rcp_queue_allowance: cfg.rcp.queue_allowance,
        // Which part `queue_allowance` leaves: the queue paced flows
        // meet by chance in the tuned profile (docs/deviations.md R2).
        chance_queue_allowance: by_profile.chance_queue_allowance,
        shaper_holds_chance_queue: by_profile.shaper_holds_chance_queue,
    }
}

impl RateFace {
    pub(crate) fn new(kind: CcScheme, cfg: &CcConfig, capacity_bps: f64) -> Self {
        let law = if kind == CcScheme::Mircc {
            LawKind::Mircc
        } else {
            LawKind::Rcp
        };
        RateFace {
            link: RateLink::new(law, &rate_link_config(cfg, kind), capacity_bps),
        }
    }

    pub(crate) fn set_capacity(&mut self, c: f64) {
        self.link.set_capacity(c);
    }

    pub(crate) fn queued(&self) -> usize {
        self.link.queued()
    }

    /// The face's rates as CC fields (what a congestion Nack carries).
    pub(crate) fn nack_fields(&self) -> CcFields {
        let r = self.link.rates();
        CcFields {
            primary_rate_bps: Some(rate_to_wire(r.primary_bps)),
            secondary_rate_bps: r.secondary_bps.map(rate_to_wire),
            ..CcFields::default()
        }
    }

    /// An Interest routed to this face, offered to the link.
    pub(crate) fn admit(&mut self, now: Timestamp, pkt: OutPacket) -> InterestAdmission {
        let class = pkt.cc.traffic_class.unwrap_or(TrafficClass::Primary);
        let size = u32::try_from(pkt.wire.len()).unwrap_or(u32::MAX);
        match self.link.on_interest(now, pkt, class, size) {
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
        match self.link.dequeue(now) {
            Some((pkt, _)) => HookDequeue::Item(pkt),
            None => match self.link.next_release_time() {
                Some(t) => HookDequeue::NotBefore(t),
                None => HookDequeue::Empty,
            },
        }
    }

    pub(crate) fn on_data(&mut self, now: Timestamp, bytes: usize, rtt: Option<Duration>) {
        self.link
            .on_data(now, u32::try_from(bytes).unwrap_or(u32::MAX), rtt);
    }

    /// Min-stamps the rates into a Data or Nack leaving towards downstream
    /// and folds this hop into the MIRCC path id.
    pub(crate) fn stamp(&self, cc: &mut CcFields, node: u64, face: u64) {
        let r = self.link.stamp(
            cc.primary_rate_bps.map(rate_from_wire),
            cc.secondary_rate_bps.map(rate_from_wire),
        );
        cc.primary_rate_bps = Some(rate_to_wire(r.primary_bps));
        if let Some(s) = r.secondary_bps {
            cc.secondary_rate_bps = Some(rate_to_wire(s));
            cc.path_id = Some(fold_path_id(cc.path_id.unwrap_or(0), node, face));
        }
    }

    pub(crate) fn next_update(&self) -> Timestamp {
        self.link.poll_timeout()
    }

    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        if let Some(u) = self.link.handle_timeout(now) {
            tracing::trace!(
                yp_bytes = u.sample.primary_bytes,
                ys_bytes = u.sample.secondary_bytes,
                queue_bytes = u.sample.queue_bytes,
                rtt_ms = u.sample.rtt.as_secs_f64() * 1e3,
                period_ms = u.period.as_secs_f64() * 1e3,
                primary_bps = u.rates.primary_bps,
                secondary_bps = u.rates.secondary_bps,
                queued = self.link.queued(),
                "rate update"
            );
        }
    }

    pub(crate) fn status(&self, s: &mut CcFaceStatus) {
        let f = self.nack_fields();
        s.primary_rate_bps = f.primary_rate_bps;
        s.secondary_rate_bps = f.secondary_rate_bps;
        let c = self.link.shaper().counters();
        s.queued_interests = self.link.queued() as u64;
        s.rejected_interests = c.rejected;
        s.evicted_interests = c.evicted;
    }
}
