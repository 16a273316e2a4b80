//! The forwarding strategies of the schemes, `/localhost/nfd/strategy/<scheme>/v=1`.
//! Each keeps its own per-prefix tables from cc-core and shares per-face
//! state with the engine hook through `StrategyCtx::cc`.

use std::collections::HashMap;

use cc_core::mircc::path::{choose_by_bandwidth, steer};
use cc_core::pcon::{PconConfig, PconSplit};
use cc_core::qsccp::{MultipathConfig, MultipathTable, ServiceClass};
use cc_core::wincm::{UiwConfig, UiwTable};
use icn_tlv::{CcFields, NackReason};

use super::ccc::{ips_to_wire, wire_to_ips};
use super::config::{CcConfig, CcScheme};
use super::hooks::SchemeHooks;
use super::prefix_key;
use super::qsccp::class_of;
use crate::engine::strategy::{
    nack_when_all_upstreams_failed, RetxDecision, RetxSuppression, StrategyName,
};
use crate::engine::{Action, FaceId, IncomingInterest, NextHop, PitEntry, Strategy, StrategyCtx};

/// Target rates at or above this (1 Tbit/s) mean "no limit known yet".
const MAX_TARGET_BPS: f64 = 1e12;

/// Bound on per-prefix PCON splits kept by one strategy instance.
const MAX_SPLITS: usize = 4096;

enum State {
    Pcon(HashMap<u64, PconSplit>, PconConfig),
    Rate,
    Wincm(UiwTable),
    /// The multipath table and the class each prefix's Interests carried
    /// (Data need not echo it).
    Qsccp(MultipathTable, HashMap<u64, ServiceClass>),
    Ccc,
}

impl CcStrategy {
    /// WinCM's UIN/UIW table, if this is the wincm strategy.
    pub(crate) fn uiw_table(&self) -> Option<&UiwTable> {
        match &self.state {
            State::Wincm(t) => Some(t),
            _ => None,
        }
    }
}

/// The strategy of one congestion-control scheme.
pub struct CcStrategy {
    name: StrategyName,
    retx: RetxSuppression,
    state: State,
}

impl CcStrategy {
    /// Version component of every scheme strategy name.
    pub const VERSION: u64 = 1;

    /// The strategy of `scheme` (None for `none`).
    pub fn new(scheme: CcScheme, cfg: &CcConfig, seed: u64) -> Option<Self> {
        let state = match scheme {
            CcScheme::None => return None,
            CcScheme::Pcon => State::Pcon(
                HashMap::new(),
                PconConfig {
                    change_per_mark: cfg.pcon.change_per_mark,
                    probing_probability: cfg.pcon.probing_probability,
                    ..PconConfig::default()
                },
            ),
            CcScheme::Rcp | CcScheme::Mircc => State::Rate,
            CcScheme::Wincm => State::Wincm(UiwTable::new(
                UiwConfig {
                    d: cfg.wincm.d,
                    prefer_unsaturated: cfg.wincm.prefer_unsaturated,
                    ..UiwConfig::default()
                },
                seed,
            )),
            CcScheme::Qsccp => State::Qsccp(
                MultipathTable::new(
                    MultipathConfig {
                        probe_probability: cfg.qsccp.probe_probability,
                        default_upstream_bps: cfg.qsccp.default_upstream_bps,
                        ..MultipathConfig::default()
                    },
                    seed,
                ),
                HashMap::new(),
            ),
            CcScheme::Ccc => State::Ccc,
        };
        let name = super::strategy_name(scheme)?;
        Some(CcStrategy {
            name: StrategyName(name.0.append(icn_tlv::Component::version(Self::VERSION))),
            retx: RetxSuppression::default(),
            state,
        })
    }
}

/// CCC on a Data from `in_face`: the upstream constraint updates each
/// downstream's flow (Algorithm 2, eq. 9) and each downstream gets its own
/// flow's constraint.
fn ccc_data(ctx: &mut StrategyCtx<'_>, in_face: FaceId, pit: &PitEntry, prefix: u64) {
    let (now, lp) = (ctx.now, ctx.lp);
    let constraint = lp.cc.pace_constraint_milli_ips.map(wire_to_ips);
    for r in &pit.in_records {
        if r.expiry <= now || r.face == in_face {
            continue;
        }
        let out = ctx
            .cc
            .as_any_mut()
            .downcast_mut::<SchemeHooks>()
            .and_then(|h| {
                let up_bps = h
                    .faces
                    .get(&in_face)
                    .and_then(|f| f.data_in_bps)
                    .filter(|c| *c > 0);
                h.ccc
                    .on_data(now, prefix, in_face, constraint, lp.bytes, r.face, up_bps)
            });
        match out {
            Some(c) => {
                let mut cc: CcFields = lp.cc;
                cc.pace_constraint_milli_ips = Some(ips_to_wire(c));
                ctx.push(Action::SendDataCc {
                    face: r.face,
                    cc: Box::new(cc),
                });
            }
            None => ctx.push(Action::SendData { face: r.face }),
        }
    }
}

/// The QSCCP PECN rate R of a flow at face `face`, from the shared hook.
fn local_rate(
    ctx: &mut StrategyCtx<'_>,
    face: FaceId,
    class: ServiceClass,
    prefix: u64,
) -> Option<f64> {
    let hooks = ctx.cc.as_any_mut().downcast_mut::<SchemeHooks>()?;
    hooks
        .faces
        .get(&face)?
        .cds
        .as_ref()?
        .flow_rate_bps(class, prefix)
}

impl Strategy for CcStrategy {
    fn name(&self) -> &StrategyName {
        &self.name
    }

    fn as_any(&self) -> Option<&dyn core::any::Any> {
        Some(self)
    }

    fn after_receive_interest(
        &mut self,
        ctx: &mut StrategyCtx<'_>,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        nexthops: &[NextHop],
    ) {
        if self.retx.decide(ctx.now, pit) == RetxDecision::Suppress {
            return;
        }
        let hop = interest.hop_limit;
        let cands: Vec<u64> = nexthops
            .iter()
            .filter(|nh| ctx.can_forward_to(pit, nh.face, hop))
            .map(|nh| nh.face.0)
            .collect();
        if cands.is_empty() {
            ctx.push(Action::Nack {
                face: interest.face,
                reason: NackReason::NoRoute,
            });
            if pit.in_records.len() <= 1 {
                ctx.push(Action::Reject);
            }
            return;
        }
        let prefix = prefix_key(&pit.name_value);
        let cc_in = ctx.lp.cc;
        match &mut self.state {
            State::Pcon(splits, cfg) => {
                if splits.len() >= MAX_SPLITS && !splits.contains_key(&prefix) {
                    splits.clear();
                }
                let split = splits.entry(prefix).or_insert_with(|| PconSplit::new(*cfg));
                if let Some(c) = split.choose(&cands, ctx.rng) {
                    ctx.push(Action::Forward {
                        face: FaceId(c.face),
                    });
                    if c.probe_others {
                        for &o in cands.iter().filter(|&&o| o != c.face) {
                            ctx.push(Action::Forward { face: FaceId(o) });
                        }
                    }
                }
            }
            State::Rate => {
                let mut cc = cc_in;
                let idx = match cc_in.steering_hint {
                    Some(h) if cands.len() > 1 => steer(h, cands.len()).map(|(i, rest)| {
                        cc.steering_hint = Some(rest);
                        i
                    }),
                    _ if cands.len() > 1 => {
                        let bw: Vec<f64> = cands
                            .iter()
                            .map(|&f| {
                                ctx.faces
                                    .face_info(FaceId(f))
                                    .and_then(|i| i.params.data_in_capacity_bps())
                                    .map_or(1.0, |c| c as f64)
                            })
                            .collect();
                        choose_by_bandwidth(&bw, ctx.rng)
                    }
                    _ => Some(0),
                };
                let face = FaceId(cands[idx.unwrap_or(0).min(cands.len() - 1)]);
                ctx.push(Action::ForwardCc {
                    face,
                    cc: Box::new(cc),
                });
            }
            State::Wincm(uiw) => {
                if let Some(f) = uiw.choose(ctx.now, prefix, &cands, Some(interest.face.0), ctx.rng)
                {
                    ctx.push(Action::Forward { face: FaceId(f) });
                }
            }
            State::Qsccp(mp, classes) => {
                let class = class_of(&cc_in);
                if classes.len() >= MAX_SPLITS && !classes.contains_key(&prefix) {
                    classes.clear();
                }
                classes.insert(prefix, class);
                let down = cc_in.downstream_rate_bps.map(|d| d as f64);
                mp.on_interest(ctx.now, class, prefix, interest.face.0, down);
                if let Some(f) = mp.choose_next_hop(class, prefix, &cands, ctx.rng) {
                    let local = local_rate(ctx, FaceId(f), class, prefix);
                    let d = mp.downstream_rate(class, prefix, f, &cands, local);
                    let mut cc = cc_in;
                    if d.is_finite() && d < MAX_TARGET_BPS {
                        cc.downstream_rate_bps = Some(d.max(0.0) as u64);
                    }
                    ctx.push(Action::ForwardCc {
                        face: FaceId(f),
                        cc: Box::new(cc),
                    });
                }
            }
            State::Ccc => {
                let objective = cc_in.pace_objective_milli_ips.map(wire_to_ips);
                let faces: Vec<FaceId> = cands.iter().map(|&f| FaceId(f)).collect();
                let (now, in_face) = (ctx.now, interest.face);
                let picked = match ctx.cc.as_any_mut().downcast_mut::<SchemeHooks>() {
                    Some(h) => h.ccc_interest(now, prefix, in_face, objective, &faces),
                    None => None,
                };
                match picked {
                    Some((face, hop_objective)) => {
                        let mut cc = cc_in;
                        cc.pace_objective_milli_ips = Some(ips_to_wire(hop_objective));
                        ctx.push(Action::ForwardCc {
                            face,
                            cc: Box::new(cc),
                        });
                    }
                    // Flow table full: forward unchanged to the first hop.
                    None => ctx.push(Action::Forward { face: faces[0] }),
                }
            }
        }
    }

    fn after_receive_data(&mut self, ctx: &mut StrategyCtx<'_>, in_face: FaceId, pit: &PitEntry) {
        let prefix = prefix_key(&pit.name_value);
        let marked = ctx.lp.congestion_mark > 0;
        let mut qsccp_class = None;
        match &mut self.state {
            State::Pcon(splits, _) => {
                if marked {
                    if let Some(s) = splits.get_mut(&prefix) {
                        s.on_marked_data(in_face.0);
                    }
                }
            }
            State::Wincm(uiw) => uiw.on_data(ctx.now, prefix, in_face.0, marked),
            State::Qsccp(_, classes) => {
                qsccp_class = Some(match ctx.lp.cc.service_class {
                    Some(_) => class_of(&ctx.lp.cc),
                    None => classes.get(&prefix).copied().unwrap_or(ServiceClass::Be),
                })
            }
            State::Rate => {}
            State::Ccc => {
                ccc_data(ctx, in_face, pit, prefix);
                return;
            }
        }
        if let (Some(class), State::Qsccp(..)) = (qsccp_class, &self.state) {
            let local = local_rate(ctx, in_face, class, prefix);
            let State::Qsccp(mp, _) = &mut self.state else {
                return;
            };
            let target = ctx.lp.cc.target_rate_bps.map(|t| t as f64);
            mp.on_data(ctx.now, class, prefix, in_face.0, target, local);
            for r in &pit.in_records {
                if r.expiry <= ctx.now || r.face == in_face {
                    continue;
                }
                let mut cc: CcFields = ctx.lp.cc;
                // Before any rate is known upstream the target is MAX_RATE:
                // leave the field as it came rather than invite a flood.
                if let Some(t) = mp
                    .target_rate(class, prefix, r.face.0)
                    .filter(|t| t.is_finite() && *t < MAX_TARGET_BPS)
                {
                    cc.target_rate_bps = Some(t.max(0.0) as u64);
                }
                ctx.push(Action::SendDataCc {
                    face: r.face,
                    cc: Box::new(cc),
                });
            }
            return;
        }
        for r in &pit.in_records {
            if r.expiry > ctx.now && r.face != in_face {
                ctx.push(Action::SendData { face: r.face });
            }
        }
    }

    fn after_receive_nack(
        &mut self,
        ctx: &mut StrategyCtx<'_>,
        in_face: FaceId,
        reason: NackReason,
        pit: &PitEntry,
        nexthops: &[NextHop],
    ) {
        let _ = (reason, nexthops);
        let prefix = prefix_key(&pit.name_value);
        match &mut self.state {
            State::Pcon(splits, _) if ctx.lp.congestion_mark > 0 => {
                if let Some(s) = splits.get_mut(&prefix) {
                    s.on_marked_nack(ctx.now, in_face.0);
                }
            }
            State::Wincm(uiw) => uiw.on_unsatisfied(prefix, in_face.0),
            _ => {}
        }
        nack_when_all_upstreams_failed(ctx, pit);
    }

    fn on_interest_timeout(&mut self, now: cc_core::Timestamp, pit: &PitEntry) {
        let _ = now;
        let prefix = prefix_key(&pit.name_value);
        match &mut self.state {
            State::Pcon(splits, _) => {
                if let Some(s) = splits.get_mut(&prefix) {
                    for o in &pit.out_records {
                        s.on_expiry(o.face.0);
                    }
                }
            }
            State::Wincm(uiw) => {
                for o in pit.out_records.iter().filter(|o| o.nack.is_none()) {
                    uiw.on_unsatisfied(prefix, o.face.0);
                }
            }
            _ => {}
        }
    }
}
