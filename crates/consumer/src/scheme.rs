//! `--cc` wiring: the cc-core consumer law of a [`LawKind`]
//! ([`AnyConsumerLaw`], configured from the command line through
//! [`ConsumerLawConfig`]) plus what each scheme adds to its Interests: the
//! MIRCC class and steering hint, the CCC pace objective, the QSCCP class and
//! DownstreamRate. No control law lives here; [`Scheme`] only routes events
//! to the cc-core law and remembers per-Interest state.

use crate::feedback::{ips_to_wire, Reads};
use crate::rate::RateSpec;
use cc_core::aimd::{Aimd, AimdConfig};
use cc_core::ccc::CccConsumerConfig;
use cc_core::cubic::CubicConfig;
use cc_core::fixed::{FixedRateConfig, FixedWindowConfig};
use cc_core::mircc::{MirccConsumerConfig, TrafficClass as MirccClass};
use cc_core::qsccp::QsccpConsumerConfig;
use cc_core::rcp::{DataSizeEstimate, RateConsumer, RateConsumerConfig};
use cc_core::rtt::RttConfig;
use cc_core::wincm::{MultiMarkConfig, WincmConsumerConfig};
use cc_core::{
    AnyConsumerLaw, ConsumerLaw, ConsumerLawConfig, DataFeedback, FixedLawConfig, LawKind,
    NackFeedback, Profile, SendLimit, Timestamp,
};
use icn_tlv::{CcFields, ServiceClass, TrafficClass};
use rand::RngCore;
use std::collections::HashMap;

/// CLI-level choices that shape the law (ndnget's names where they exist).
#[derive(Debug, Clone)]
pub struct SchemeOptions {
    pub kind: LawKind,
    /// `--rate`: the rate of `fixed`; the rate of rate schemes until the
    /// network stamps one (their paper's initial rate otherwise).
    pub rate: Option<RateSpec>,
    /// `--init-cwnd` (`--pipeline-size`): window of `none`/`fixed`, initial
    /// window of window laws.
    pub init_cwnd: Option<f64>,
    /// `--init-ssthresh` of AIMD/CUBIC (∞ when absent).
    pub init_ssthresh: Option<f64>,
    pub ignore_marks: bool,
    pub disable_cwa: bool,
    /// `--aimd-step`: additive increase per RTT.
    pub aimd_step: f64,
    /// `--aimd-beta`: multiplicative decrease of AIMD.
    pub aimd_beta: f64,
    /// `--aimd-mark-beta`: AIMD's decrease on a congestion mark (default:
    /// `aimd_beta` for `aimd`; for `pcon` the paper's 0.5, or in the tuned
    /// profile a cut in proportion to the marked fraction,
    /// [`cc_core::pcon::pcon_aimd`]).
    pub aimd_mark_beta: Option<f64>,
    /// `--cubic-beta`: multiplicative decrease of CUBIC.
    pub cubic_beta: f64,
    /// `--fast-conv`: CUBIC fast convergence.
    pub fast_conv: bool,
    /// `--reset-cwnd-to-init`: AIMD restarts from the initial window.
    pub reset_cwnd_to_init: bool,
    /// `--objective`: CCC pace objective (what the application wants).
    pub objective: Option<RateSpec>,
    /// `--class`: QSCCP service class.
    pub class: ServiceClass,
    /// Hard bound on Interests outstanding (icncat `--max-outstanding`);
    /// `None`: [`RATE_MAX_OUTSTANDING`], and window laws keep at most
    /// twice the path's measured bandwidth-delay product or
    /// [`WINDOW_MAX_OUTSTANDING`], whichever is more.
    pub max_outstanding: Option<u32>,
    /// Data size assumed before the first Data arrives (bytes).
    pub initial_data_size_bytes: f64,
    /// RTO estimator of the window laws (the pipeline's timer uses the same).
    pub rtt: RttConfig,
    /// `--profile`: the consumer law's paper constants or icnfwd's tuned
    /// ones (docs/deviations.md); the options above still apply.
    pub profile: Profile,
    /// `--ccc-initial-window`: CCC's Interests in flight before the first
    /// Data (the profile's: tuned 2, paper 0 = pace at the objective).
    pub ccc_initial_window: Option<u32>,
    /// `--ccc-min-pace`: the lowest pace CCC's consumer falls to, Interests/s
    /// (the profile's: tuned 1, paper 0).
    pub ccc_min_pace_ips: Option<f64>,
    /// `--wincm-hold-after-cut`: in WinCM's congestion state, Data whose
    /// Interests left before the last cut add nothing (the profile's: off
    /// in both; W15 in docs/deviations.md).
    pub wincm_hold_after_cut: Option<bool>,
    /// `--wincm-queue-growth-limit`: while the RTT shows the AQM's 5 ms
    /// target of queue, BIC's growth adds at most (cwnd + 1)·target per
    /// minimum RTT (the profile's: tuned on, paper off; W16 in
    /// docs/deviations.md).
    pub wincm_queue_growth_limit: Option<bool>,
    /// `--wincm-growth-limit-in-congestion`: the congestion state's
    /// additive limit (the profile's: tuned on, paper off; W16).
    pub wincm_growth_limit_in_congestion: Option<bool>,
    /// `--wincm-bandwidth-floor`: a mark's cut stops at the path's
    /// measured product (the profile's: tuned on, paper off; W17).
    pub wincm_bandwidth_floor: Option<bool>,
}

/// What a window law may keep in flight without `--max-outstanding`
/// whatever the path measures: beyond it, twice the path's measured
/// bandwidth-delay product (cc-core `window`, `path_window_floor`). On
/// loopback a CUBIC slow start to thousands of Interests only overflowed
/// the forwarder's queues, and the product there is a few Data; one
/// 1200-byte flow on 50 Mbit/s at 150 ms needs 744 (held to 68 % by a
/// fixed 512).
pub const WINDOW_MAX_OUTSTANDING: u32 = 512;

/// Default hard bound on Interests in flight, a safety net: rate × RTT
/// decides what a rate-paced law (RCP, MIRCC, CCC, QSCCP, fixed rate) has
/// in flight, and a window law stays under its path ceiling
/// ([`WINDOW_MAX_OUTSTANDING`]). It must exceed the path's
/// bandwidth-delay product in Data: 50 Mbit/s × 150 ms of 1200-byte Data
/// is 780 Data; 512 held MIRCC and RCP to 70 % there (envelope sweep).
pub const RATE_MAX_OUTSTANDING: u32 = 8192;

/// What a CCC consumer asks for when no `--objective` is given: more than
/// any link here carries, so the network's constraint decides.
pub const DEFAULT_CCC_OBJECTIVE_BPS: f64 = 10e9;

impl Default for SchemeOptions {
    fn default() -> Self {
        SchemeOptions {
            kind: LawKind::Cubic,
            rate: None,
            init_cwnd: None,
            init_ssthresh: None,
            ignore_marks: false,
            disable_cwa: false,
            aimd_step: 1.0,
            aimd_beta: 0.5,
            aimd_mark_beta: None,
            cubic_beta: 0.7,
            fast_conv: false,
            reset_cwnd_to_init: false,
            objective: None,
            class: ServiceClass::Be,
            max_outstanding: None,
            initial_data_size_bytes: 8100.0,
            rtt: ndnget_rtt(),
            profile: Profile::Tuned,
            ccc_initial_window: None,
            ccc_min_pace_ips: None,
            wincm_hold_after_cut: None,
            wincm_queue_growth_limit: None,
            wincm_growth_limit_in_congestion: None,
            wincm_bandwidth_floor: None,
        }
    }
}

/// ndnget's RTO estimator: RFC 6298 gains with K = 8 (ndn-cxx uses 4).
pub fn ndnget_rtt() -> RttConfig {
    RttConfig {
        k: 8.0,
        ..RttConfig::default()
    }
}

impl SchemeOptions {
    /// Whether the pipeline should hide marks from the law: PCON's only
    /// signal besides timeouts is the mark, so `--ignore-marks` does not
    /// apply to it.
    pub fn pipeline_ignores_marks(&self) -> bool {
        self.ignore_marks && self.kind != LawKind::Pcon
    }

    fn rate_bps(&self, default_bps: f64) -> f64 {
        match self.rate {
            Some(RateSpec::BitsPerSec(b)) => b,
            Some(RateSpec::InterestsPerSec(p)) => p * 8.0 * self.initial_data_size_bytes,
            None => default_bps,
        }
    }

    /// Whether the law paces Interests at a rate (not a window).
    fn rate_paced(&self) -> bool {
        match self.kind {
            LawKind::Rcp | LawKind::Mircc | LawKind::Ccc | LawKind::Qsccp => true,
            LawKind::Fixed => self.rate.is_some(),
            _ => false,
        }
    }

    /// The hard bound on Interests in flight for this law (given or
    /// default).
    pub fn max_outstanding_for_law(&self) -> u32 {
        self.max_outstanding.unwrap_or(RATE_MAX_OUTSTANDING).max(1)
    }

    /// A window law's ceiling below the hard bound: twice the path's
    /// measured bandwidth-delay product, at least
    /// [`WINDOW_MAX_OUTSTANDING`]; none when `--max-outstanding` is given
    /// or the law paces a rate.
    pub fn path_window_floor(&self) -> Option<f64> {
        (self.max_outstanding.is_none() && !self.rate_paced())
            .then_some(f64::from(WINDOW_MAX_OUTSTANDING))
    }

    /// Every law's cc-core config from these options.
    pub fn law_config(&self) -> ConsumerLawConfig {
        let max_out = self.max_outstanding_for_law();
        let path_window_floor = self.path_window_floor();
        let size0 = self.initial_data_size_bytes.max(1.0);
        let d = ConsumerLawConfig::default();
        let ssthresh = self.init_ssthresh.unwrap_or(f64::INFINITY);
        // The tuned PCON consumer paces its window; ndnget's baselines
        // (aimd, cubic) and the paper's PCON do not.
        let pacing = if self.kind == LawKind::Pcon {
            cc_core::pcon::pcon_pacing(self.profile)
        } else {
            None
        };
        let aimd = AimdConfig {
            init_cwnd: self.init_cwnd.unwrap_or(2.0),
            init_ssthresh: ssthresh,
            ai_step: self.aimd_step,
            md_coef: self.aimd_beta,
            // PCON's paper consumer halves on a mark as on a loss; tuned
            // leaves it unset so PconConsumer cuts in proportion.
            mark_md_coef: self.aimd_mark_beta.or(if self.kind == LawKind::Pcon {
                cc_core::pcon::pcon_mark_md_coef(self.profile)
            } else {
                None
            }),
            reset_cwnd_to_init: self.reset_cwnd_to_init,
            disable_cwa: self.disable_cwa,
            ignore_marks: self.ignore_marks,
            max_window: f64::from(max_out),
            path_window_floor,
            rtt: self.rtt,
            pacing,
            ..d.aimd
        };
        let cubic = CubicConfig {
            init_cwnd: self.init_cwnd.unwrap_or(2.0),
            init_ssthresh: ssthresh,
            beta: self.cubic_beta,
            fast_convergence: self.fast_conv,
            disable_cwa: self.disable_cwa,
            ignore_marks: self.ignore_marks,
            max_window: f64::from(max_out),
            path_window_floor,
            rtt: self.rtt,
            pacing,
            ..d.cubic
        };
        let fixed = match self.rate {
            Some(RateSpec::InterestsPerSec(ips)) => FixedLawConfig::Rate(FixedRateConfig {
                interests_per_sec: ips,
                max_outstanding: max_out,
            }),
            _ => FixedLawConfig::Window(FixedWindowConfig {
                window_interests: self.init_cwnd.unwrap_or(1.0),
            }),
        };
        let objective_bps = match self.objective {
            Some(RateSpec::BitsPerSec(b)) => b,
            Some(RateSpec::InterestsPerSec(p)) => p * 8.0 * size0,
            None => self.rate_bps(DEFAULT_CCC_OBJECTIVE_BPS),
        };
        ConsumerLawConfig {
            none: FixedWindowConfig {
                window_interests: self.init_cwnd.unwrap_or(d.none.window_interests),
            },
            fixed,
            aimd,
            cubic,
            pcon_window: d.pcon_window,
            rcp: RateConsumerConfig {
                initial_rate_bps: self.rate_bps(d.rcp.initial_rate_bps),
                initial_data_size_bytes: size0,
                max_outstanding: max_out,
                ..d.rcp
            },
            mircc: MirccConsumerConfig {
                initial_rate_bps: self.rate_bps(d.mircc.initial_rate_bps),
                initial_data_size_bytes: size0,
                max_outstanding: max_out,
                ..d.mircc
            },
            ccc: {
                let c = CccConsumerConfig::for_profile(self.profile);
                CccConsumerConfig {
                    target_rate_bps: objective_bps,
                    initial_data_size_bytes: size0,
                    max_outstanding: max_out,
                    initial_window: self.ccc_initial_window.unwrap_or(c.initial_window),
                    min_pace_ips: self.ccc_min_pace_ips.unwrap_or(c.min_pace_ips),
                    ..c
                }
            },
            wincm: {
                let w = WincmConsumerConfig::for_profile(self.profile);
                WincmConsumerConfig {
                    init_cwnd: self.init_cwnd.unwrap_or(w.init_cwnd),
                    max_window: f64::from(max_out),
                    path_window_floor,
                    disable_cwa: self.disable_cwa,
                    rtt: self.rtt,
                    hold_after_cut: self.wincm_hold_after_cut.unwrap_or(w.hold_after_cut),
                    // W16: BIC's growth and the congestion state's, each
                    // its own key.
                    queue_growth_target: match self.wincm_queue_growth_limit {
                        Some(true) => Some(MultiMarkConfig::default().target),
                        Some(false) => None,
                        None => w.queue_growth_target,
                    },
                    growth_limit_in_congestion: self
                        .wincm_growth_limit_in_congestion
                        .unwrap_or(w.growth_limit_in_congestion),
                    bandwidth_floor: self.wincm_bandwidth_floor.unwrap_or(w.bandwidth_floor),
                    ..w
                }
            },
            qsccp: QsccpConsumerConfig {
                initial_rate_bps: self.rate_bps(d.qsccp.initial_rate_bps),
                initial_data_size_bits: size0 * 8.0,
                max_outstanding: max_out,
                ..d.qsccp
            },
        }
    }
}

/// Parses a QSCCP class name (cs7, cs6, ef, af4..af1, be).
pub fn parse_service_class(s: &str) -> Result<ServiceClass, String> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "cs7" => ServiceClass::Cs7,
        "cs6" => ServiceClass::Cs6,
        "ef" => ServiceClass::Ef,
        "af4" => ServiceClass::Af4,
        "af3" => ServiceClass::Af3,
        "af2" => ServiceClass::Af2,
        "af1" => ServiceClass::Af1,
        "be" => ServiceClass::Be,
        _ => {
            return Err(format!(
                "unknown class {s:?} (cs7, cs6, ef, af4, af3, af2, af1, be)"
            ))
        }
    })
}

/// Per-Interest fields of a scheme.
#[derive(Debug, Clone)]
enum Tag {
    Plain,
    /// RCP: single-class MIRCC, every Interest primary.
    Primary,
    /// MIRCC: steering hint sent per outstanding segment, so the Data's path
    /// can be tied to the hint that led onto it.
    Mircc {
        hints: HashMap<u64, u64>,
    },
    Ccc,
    Qsccp {
        class: ServiceClass,
    },
}

/// Consecutive Data without the scheme's stamped rate (or, for CCC, pace
/// constraint) after which a rate scheme falls back to a window law.
/// Stamping forwarders stamp every Data they forward, so a few in a row mean
/// the path has none (scheme `none`, another scheme, NFD or NDNts): without
/// the fallback an RCP/MIRCC/QSCCP consumer would stay at its initial rate
/// (80 kbit/s) forever, and a CCC consumer would pace at its objective
/// (unlimited by default) into a network that does not answer it.
pub const RATE_FALLBACK_AFTER_DATA: u32 = 3;

/// The window law a rate scheme (rcp, mircc, qsccp, ccc) runs while the
/// network stamps no rate: ndnget's AIMD on timeouts, congestion Nacks and
/// marks. The first stamped rate hands control back to the rate law.
#[derive(Debug, Clone)]
struct RateFallback {
    cfg: AimdConfig,
    unstamped: u32,
    window: Option<Aimd>,
}

impl RateFallback {
    fn stamped(kind: LawKind, fb: &DataFeedback) -> bool {
        match kind {
            LawKind::Qsccp => fb.target_rate_bps.is_some(),
            LawKind::Ccc => fb.pace_constraint_ips.is_some(),
            _ => fb.primary_rate_bps.is_some(),
        }
    }

    /// Counts one Data; switches the window on or off.
    fn on_data(&mut self, kind: LawKind, now: Timestamp, fb: &DataFeedback) {
        if Self::stamped(kind, fb) {
            self.unstamped = 0;
            if self.window.take().is_some() {
                tracing::warn!(
                    scheme = kind.name(),
                    "stamped rate arrived: back to the rate law"
                );
            }
            return;
        }
        self.unstamped = self.unstamped.saturating_add(1);
        if self.window.is_none() && self.unstamped >= RATE_FALLBACK_AFTER_DATA {
            tracing::warn!(
                scheme = kind.name(),
                data = self.unstamped,
                "no stamped rate from the network: falling back to AIMD until one arrives"
            );
            self.window = Some(Aimd::new(self.cfg));
        }
        if let Some(w) = self.window.as_mut() {
            w.on_data(now, fb);
        }
    }
}

/// Most steering hints remembered for outstanding segments.
const MAX_HINTS: usize = 1 << 17;

/// The consumer side of one `--cc` scheme: a cc-core law and its Interest
/// fields. Implements [`ConsumerLaw`] so the pipeline drives it directly.
#[derive(Debug, Clone)]
pub struct Scheme {
    kind: LawKind,
    law: AnyConsumerLaw,
    reads: Reads,
    tag: Tag,
    /// Measured Data size, announced in CCC/QSCCP Interests.
    data_size: DataSizeEstimate,
    /// Rate schemes only: the window law used while no rate is stamped.
    fallback: Option<RateFallback>,
}

impl Scheme {
    /// The law `opts` describes.
    pub fn new(opts: &SchemeOptions) -> Self {
        let cfg = opts.law_config();
        let rates = Reads {
            rates: true,
            ..Reads::NONE
        };
        let (law, reads, tag) = match opts.kind {
            // A fixed bit rate is an RCP consumer that never hears a
            // stamped rate: its initial rate deflated by the Data size.
            LawKind::Fixed if matches!(opts.rate, Some(RateSpec::BitsPerSec(_))) => (
                AnyConsumerLaw::Rcp(RateConsumer::new(cfg.rcp)),
                Reads::NONE,
                Tag::Plain,
            ),
            LawKind::Rcp => (AnyConsumerLaw::new(opts.kind, &cfg), rates, Tag::Primary),
            LawKind::Mircc => (
                AnyConsumerLaw::new(opts.kind, &cfg),
                rates,
                Tag::Mircc {
                    hints: HashMap::new(),
                },
            ),
            LawKind::Ccc => (
                AnyConsumerLaw::new(opts.kind, &cfg),
                Reads {
                    pace_constraint: true,
                    ..Reads::NONE
                },
                Tag::Ccc,
            ),
            LawKind::Qsccp => (
                AnyConsumerLaw::new(opts.kind, &cfg),
                Reads {
                    target_rate: true,
                    ..Reads::NONE
                },
                Tag::Qsccp { class: opts.class },
            ),
            k => (AnyConsumerLaw::new(k, &cfg), Reads::NONE, Tag::Plain),
        };
        Scheme {
            kind: opts.kind,
            law,
            reads,
            tag,
            data_size: DataSizeEstimate::new(opts.initial_data_size_bytes, 0.125),
            fallback: matches!(
                opts.kind,
                LawKind::Rcp | LawKind::Mircc | LawKind::Qsccp | LawKind::Ccc
            )
            .then(|| RateFallback {
                cfg: cfg.aimd,
                unstamped: 0,
                window: None,
            }),
        }
    }

    /// Whether a rate scheme currently runs its AIMD fallback because the
    /// network stamps no rate ([`RATE_FALLBACK_AFTER_DATA`]).
    pub fn rate_fallback_active(&self) -> bool {
        self.fallback.as_ref().is_some_and(|f| f.window.is_some())
    }

    fn fallback_window(&mut self) -> Option<&mut Aimd> {
        self.fallback.as_mut().and_then(|f| f.window.as_mut())
    }

    /// The scheme `--cc` named.
    pub fn kind(&self) -> LawKind {
        self.kind
    }

    /// The cc-core law.
    pub fn law(&self) -> &AnyConsumerLaw {
        &self.law
    }

    /// Network-stamped fields the law follows.
    pub fn reads(&self) -> Reads {
        self.reads
    }

    /// Header fields for the Interest of `segment`, if the scheme has any.
    pub fn tag(&mut self, segment: u64, rng: &mut impl RngCore) -> Option<CcFields> {
        let size = Some(self.data_size.bytes().round() as u64);
        match &mut self.tag {
            Tag::Plain => None,
            Tag::Primary => Some(CcFields {
                traffic_class: Some(TrafficClass::Primary),
                ..CcFields::default()
            }),
            Tag::Mircc { hints } => {
                let AnyConsumerLaw::Mircc(m) = &mut self.law else {
                    return None;
                };
                let plan = m.next_interest(rng);
                if hints.len() >= MAX_HINTS {
                    hints.clear();
                }
                match plan.steering_hint {
                    Some(h) => hints.insert(segment, h),
                    None => hints.remove(&segment),
                };
                Some(CcFields {
                    traffic_class: Some(match plan.class {
                        MirccClass::Primary => TrafficClass::Primary,
                        MirccClass::Secondary => TrafficClass::Secondary,
                    }),
                    steering_hint: plan.steering_hint,
                    ..CcFields::default()
                })
            }
            Tag::Ccc => {
                let AnyConsumerLaw::Ccc(c) = &self.law else {
                    return None;
                };
                Some(CcFields {
                    pace_objective_milli_ips: Some(ips_to_wire(c.objective_ips())),
                    flow_data_size_bytes: size,
                    ..CcFields::default()
                })
            }
            Tag::Qsccp { class } => Some(CcFields {
                service_class: Some(*class),
                // The consumer's own DownstreamRate is its maximum; each
                // forwarder lowers it on the way up.
                downstream_rate_bps: Some(u64::MAX),
                flow_data_size_bytes: size,
                ..CcFields::default()
            }),
        }
    }
}

impl ConsumerLaw for Scheme {
    fn on_interest_sent(&mut self, now: Timestamp, retransmission: bool) {
        self.law.on_interest_sent(now, retransmission);
        if let Some(w) = self.fallback_window() {
            w.on_interest_sent(now, retransmission);
        }
    }

    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.data_size.sample(fb.data_size_bytes);
        let kind = self.kind;
        if let Some(f) = self.fallback.as_mut() {
            f.on_data(kind, now, fb);
        }
        match (&mut self.law, &mut self.tag) {
            (AnyConsumerLaw::Mircc(m), Tag::Mircc { hints }) => {
                // The hint this consumer sent leads onto the Data's path; a
                // hint reflected by the producer is what was left of it
                // after the forwarders consumed their digits, so it is not used.
                let sent = fb.segment.and_then(|s| hints.remove(&s));
                m.on_path_data(now, fb, sent);
            }
            (law, _) => law.on_data(now, fb),
        }
    }

    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        self.law.on_nack(now, fb);
        if let Some(w) = self.fallback_window() {
            w.on_nack(now, fb);
        }
    }

    fn on_timeout(&mut self, now: Timestamp) {
        self.law.on_timeout(now);
        if let Some(w) = self.fallback_window() {
            w.on_timeout(now);
        }
    }

    fn limit(&self) -> SendLimit {
        match self.fallback.as_ref().and_then(|f| f.window.as_ref()) {
            Some(w) => w.limit(),
            None => self.law.limit(),
        }
    }

    fn pace_ips(&self) -> Option<f64> {
        match self.fallback.as_ref().and_then(|f| f.window.as_ref()) {
            Some(w) => w.pace_ips(),
            None => self.law.pace_ips(),
        }
    }
}

#[cfg(test)]
#[path = "scheme_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "scheme_fallback_tests.rs"]
mod fallback_tests;
