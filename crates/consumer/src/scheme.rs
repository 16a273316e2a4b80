//! `--cc` wiring: builds the cc-core consumer law for a [`LawKind`] and the
//! per-Interest header fields the scheme needs (MIRCC class and steering
//! hint, CCC pace objective, QSCCP service class and downstream rate).
//!
//! CCC and QSCCP consumers are small enough to live here: cc-core had no
//! consumer half for them when this was written (see the crate README).

use crate::rate::{RateSpec, SizeEwma};
use cc_core::aimd::{Aimd, AimdConfig};
use cc_core::cubic::{Cubic, CubicConfig};
use cc_core::fixed::{FixedRate, FixedRateConfig, FixedWindow, FixedWindowConfig};
use cc_core::mircc::{MirccConsumer, MirccConsumerConfig, TrafficClass as MirccClass};
use cc_core::rcp::{RateConsumer, RateConsumerConfig};
use cc_core::wincm::{WincmConsumer, WincmConsumerConfig};
use cc_core::{ConsumerLaw, DataFeedback, LawKind, NackFeedback, SendLimit, Timestamp};
use icn_tlv::{CcFields, ServiceClass, TrafficClass};
use rand::rngs::StdRng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// CLI-level choices that shape the law.
#[derive(Debug, Clone)]
pub struct SchemeOptions {
    pub kind: LawKind,
    /// `--rate` (fixed rate; initial rate of rate laws).
    pub rate: Option<RateSpec>,
    /// `--pipeline-size` / `--init-cwnd` for fixed windows and window laws.
    pub init_cwnd: Option<f64>,
    pub ignore_marks: bool,
    pub disable_cwa: bool,
    /// CCC objective.
    pub objective: Option<RateSpec>,
    /// QSCCP class.
    pub class: ServiceClass,
    /// Hard bound on Interests outstanding.
    pub max_outstanding: u32,
    /// Data size assumed before the first Data arrives (bytes).
    pub initial_data_size_bytes: f64,
}

impl Default for SchemeOptions {
    fn default() -> Self {
        SchemeOptions {
            kind: LawKind::Cubic,
            rate: None,
            init_cwnd: None,
            ignore_marks: false,
            disable_cwa: false,
            objective: None,
            class: ServiceClass::Be,
            max_outstanding: 512,
            initial_data_size_bytes: 8100.0,
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

/// Builds the law and its Interest tagger.
pub fn build(opts: &SchemeOptions) -> (Box<dyn ConsumerLaw + Send>, Tagger) {
    let max_out = opts.max_outstanding.max(1);
    let size0 = opts.initial_data_size_bytes;
    let rate_bps = |default_bps: f64| match opts.rate {
        Some(RateSpec::BitsPerSec(b)) => b,
        Some(RateSpec::InterestsPerSec(p)) => p * 8.0 * size0,
        None => default_bps,
    };
    let plain = Tagger {
        kind: opts.kind,
        inner: TagKind::Plain,
    };
    match opts.kind {
        LawKind::None | LawKind::Fixed => match opts.rate {
            None => {
                let w = opts.init_cwnd.unwrap_or(if opts.kind == LawKind::None {
                    64.0
                } else {
                    1.0
                });
                (
                    Box::new(FixedWindow::new(FixedWindowConfig {
                        window_interests: w,
                    })),
                    plain,
                )
            }
            Some(RateSpec::InterestsPerSec(ips)) => {
                let cfg = FixedRateConfig {
                    interests_per_sec: ips,
                    max_outstanding: max_out,
                };
                (Box::new(FixedRate::new(cfg)), plain)
            }
            Some(RateSpec::BitsPerSec(bps)) => {
                (Box::new(DeflatedRate::new(bps, size0, max_out)), plain)
            }
        },
        LawKind::Aimd | LawKind::Pcon => {
            let cfg = AimdConfig {
                init_cwnd: opts.init_cwnd.unwrap_or(2.0),
                ignore_marks: opts.ignore_marks,
                disable_cwa: opts.disable_cwa,
                max_window: f64::from(max_out),
                ..AimdConfig::default()
            };
            (Box::new(Aimd::new(cfg)), plain)
        }
        LawKind::Cubic => {
            let cfg = CubicConfig {
                init_cwnd: opts.init_cwnd.unwrap_or(2.0),
                ignore_marks: opts.ignore_marks,
                disable_cwa: opts.disable_cwa,
                max_window: f64::from(max_out),
                ..CubicConfig::default()
            };
            (Box::new(Cubic::new(cfg)), plain)
        }
        LawKind::Wincm => {
            let cfg = WincmConsumerConfig {
                init_cwnd: opts.init_cwnd.unwrap_or(1.0),
                disable_cwa: opts.disable_cwa,
                max_window: f64::from(max_out),
                ..WincmConsumerConfig::default()
            };
            (
                Box::new(MarksGate::new(WincmConsumer::new(cfg), opts.ignore_marks)),
                plain,
            )
        }
        LawKind::Rcp => {
            let cfg = RateConsumerConfig {
                initial_rate_bps: rate_bps(RateConsumerConfig::default().initial_rate_bps),
                initial_data_size_bytes: size0,
                max_outstanding: max_out,
                ..RateConsumerConfig::default()
            };
            // RCP is single-class MIRCC: mark Interests primary so that
            // producers and forwarders stamp rates on the Data.
            (
                Box::new(RateConsumer::new(cfg)),
                Tagger {
                    kind: opts.kind,
                    inner: TagKind::Primary,
                },
            )
        }
        LawKind::Mircc => {
            let cfg = MirccConsumerConfig {
                initial_rate_bps: rate_bps(MirccConsumerConfig::default().initial_rate_bps),
                initial_data_size_bytes: size0,
                max_outstanding: max_out,
                ..MirccConsumerConfig::default()
            };
            let shared = Arc::new(Mutex::new(MirccConsumer::new(cfg)));
            let tagger = Tagger {
                kind: opts.kind,
                inner: TagKind::Mircc {
                    law: shared.clone(),
                    hints: HashMap::new(),
                },
            };
            (Box::new(SharedMircc(shared)), tagger)
        }
        LawKind::Ccc => {
            let objective = opts
                .objective
                .unwrap_or(RateSpec::BitsPerSec(rate_bps(1e9)));
            let law = CccConsumer::new(objective, size0, max_out);
            let tagger = Tagger {
                kind: opts.kind,
                inner: TagKind::Ccc {
                    objective,
                    size: SizeEwma::new(size0),
                },
            };
            (Box::new(law), tagger)
        }
        LawKind::Qsccp => {
            let law = QsccpConsumer::new(rate_bps(100_000.0), size0, max_out);
            (
                Box::new(law),
                Tagger {
                    kind: opts.kind,
                    inner: TagKind::Qsccp { class: opts.class },
                },
            )
        }
    }
}

/// Adds the scheme's Interest fields and reads its Data fields.
pub struct Tagger {
    kind: LawKind,
    inner: TagKind,
}

enum TagKind {
    Plain,
    Primary,
    Mircc {
        law: Arc<Mutex<MirccConsumer>>,
        hints: HashMap<u64, u64>,
    },
    Ccc {
        objective: RateSpec,
        size: SizeEwma,
    },
    Qsccp {
        class: ServiceClass,
    },
}

/// Most steering hints remembered for outstanding segments.
const MAX_HINTS: usize = 1 << 17;

impl Tagger {
    /// A tagger that adds nothing.
    pub fn plain(kind: LawKind) -> Self {
        Tagger {
            kind,
            inner: TagKind::Plain,
        }
    }

    /// The scheme's CLI name.
    pub fn scheme_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Header fields for the Interest of `segment`, if the scheme has any.
    pub fn tag(
        &mut self,
        _now: Timestamp,
        segment: u64,
        _limit: SendLimit,
        rng: &mut StdRng,
    ) -> Option<CcFields> {
        match &mut self.inner {
            TagKind::Plain => None,
            TagKind::Primary => Some(CcFields {
                traffic_class: Some(TrafficClass::Primary),
                ..CcFields::default()
            }),
            TagKind::Mircc { law, hints } => {
                let plan = law
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .next_interest(rng);
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
            TagKind::Ccc { objective, size } => Some(CcFields {
                pace_objective_milli_ips: Some(ips_to_wire(
                    objective.interests_per_sec(size.get()),
                )),
                ..CcFields::default()
            }),
            TagKind::Qsccp { class } => Some(CcFields {
                service_class: Some(*class),
                downstream_rate_bps: Some(u64::MAX),
                ..CcFields::default()
            }),
        }
    }

    /// The CCC constraint of a Data, in Interests/s.
    pub fn pace_constraint(&self, cc: &CcFields) -> Option<f64> {
        cc.pace_constraint_milli_ips.map(ips_from_wire)
    }

    /// Sees each Data before the law does.
    pub fn on_data(&mut self, now: Timestamp, segment: u64, fb: &DataFeedback, cc: &CcFields) {
        match &mut self.inner {
            TagKind::Mircc { law, hints } => {
                let sent = hints.remove(&segment);
                let reflected = cc.steering_hint.or(sent);
                law.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .on_path_data(now, fb, reflected);
            }
            TagKind::Ccc { size, .. } => size.add(f64::from(fb.data_size_bytes)),
            _ => {}
        }
    }
}

/// CCC paces travel as milli-Interests per second (algorithms.md §3.3 [D]).
fn ips_to_wire(ips: f64) -> u64 {
    (ips * 1000.0).clamp(0.0, u64::MAX as f64) as u64
}

fn ips_from_wire(v: u64) -> f64 {
    v as f64 / 1000.0
}

/// A fixed bit rate turned into Interests/s by the measured Data size.
pub struct DeflatedRate {
    rate_bps: f64,
    size: SizeEwma,
    max_outstanding: u32,
}

impl DeflatedRate {
    pub fn new(rate_bps: f64, initial_size_bytes: f64, max_outstanding: u32) -> Self {
        DeflatedRate {
            rate_bps,
            size: SizeEwma::new(initial_size_bytes),
            max_outstanding,
        }
    }
}

impl ConsumerLaw for DeflatedRate {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        self.size.add(f64::from(fb.data_size_bytes));
    }
    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: RateSpec::BitsPerSec(self.rate_bps)
                .interests_per_sec(self.size.get()),
            max_outstanding: self.max_outstanding,
        }
    }
}

/// WinCM's law has no ignore-marks switch; this strips marks when asked.
struct MarksGate<L> {
    law: L,
    ignore_marks: bool,
}

impl<L: ConsumerLaw> MarksGate<L> {
    fn new(law: L, ignore_marks: bool) -> Self {
        MarksGate { law, ignore_marks }
    }
}

impl<L: ConsumerLaw> ConsumerLaw for MarksGate<L> {
    fn on_interest_sent(&mut self, now: Timestamp, retx: bool) {
        self.law.on_interest_sent(now, retx);
    }
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        if self.ignore_marks {
            let fb = DataFeedback {
                congestion_mark: 0,
                ..*fb
            };
            self.law.on_data(now, &fb);
        } else {
            self.law.on_data(now, fb);
        }
    }
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        self.law.on_nack(now, fb);
    }
    fn on_timeout(&mut self, now: Timestamp) {
        self.law.on_timeout(now);
    }
    fn limit(&self) -> SendLimit {
        self.law.limit()
    }
}

/// The MIRCC law, shared with the tagger that plans each Interest. Data go
/// to the law through the tagger (with the steering hint), not here.
struct SharedMircc(Arc<Mutex<MirccConsumer>>);

impl ConsumerLaw for SharedMircc {
    fn on_data(&mut self, _now: Timestamp, _fb: &DataFeedback) {}
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .on_nack(now, fb);
    }
    fn on_timeout(&mut self, now: Timestamp) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .on_timeout(now);
    }
    fn limit(&self) -> SendLimit {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .limit()
    }
}

/// CCC consumer (algorithms.md §3.2 "Consumer"): pace = min(objective,
/// latest constraint carried by Data).
pub struct CccConsumer {
    objective: RateSpec,
    constraint_ips: Option<f64>,
    size: SizeEwma,
    max_outstanding: u32,
}

impl CccConsumer {
    pub fn new(objective: RateSpec, initial_size_bytes: f64, max_outstanding: u32) -> Self {
        CccConsumer {
            objective,
            constraint_ips: None,
            size: SizeEwma::new(initial_size_bytes),
            max_outstanding,
        }
    }
}

impl ConsumerLaw for CccConsumer {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        self.size.add(f64::from(fb.data_size_bytes));
        if let Some(c) = fb.pace_constraint_ips.filter(|c| c.is_finite() && *c > 0.0) {
            self.constraint_ips = Some(c);
        }
    }
    fn limit(&self) -> SendLimit {
        let obj = self.objective.interests_per_sec(self.size.get());
        let ips = self.constraint_ips.map_or(obj, |c| c.min(obj));
        SendLimit::Rate {
            interests_per_sec: ips,
            max_outstanding: self.max_outstanding,
        }
    }
}

/// QSCCP consumer rate adaptation (algorithms.md §1.7, eq. 13): smooth the
/// TargetRate with β = 0.8, adopt the first one directly, and deflate by the
/// measured Data size.
pub struct QsccpConsumer {
    rate_bps: f64,
    seen_target: bool,
    size: SizeEwma,
    max_outstanding: u32,
}

/// QSCCP consumer smoothing β.
pub const QSCCP_BETA: f64 = 0.8;

impl QsccpConsumer {
    pub fn new(initial_rate_bps: f64, initial_size_bytes: f64, max_outstanding: u32) -> Self {
        QsccpConsumer {
            rate_bps: initial_rate_bps,
            seen_target: false,
            size: SizeEwma::new(initial_size_bytes),
            max_outstanding,
        }
    }
    /// The smoothed rate (bit/s).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
}

impl ConsumerLaw for QsccpConsumer {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        self.size.add(f64::from(fb.data_size_bytes));
        if let Some(tr) = fb.target_rate_bps.filter(|r| r.is_finite() && *r > 0.0) {
            self.rate_bps = if self.seen_target {
                QSCCP_BETA * self.rate_bps + (1.0 - QSCCP_BETA) * tr
            } else {
                tr
            };
            self.seen_target = true;
        }
    }
    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.rate_bps / (8.0 * self.size.get()),
            max_outstanding: self.max_outstanding,
        }
    }
}

#[cfg(test)]
#[path = "scheme_tests.rs"]
mod tests;
