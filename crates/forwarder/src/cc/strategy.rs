//! The forwarding strategy of every scheme,
//! `/localhost/nfd/strategy/<scheme>/v=1`: retransmission suppression and
//! next-hop eligibility here, the decision in the scheme's module (reached
//! through the engine's typed congestion-control extension).

use icn_tlv::NackReason;

use super::config::CcScheme;
use super::dispatch::{decide_ctx, SchemeHooks};
use super::{fib_prefix_key, prefix_key};
use crate::engine::strategy::{
    nack_when_all_upstreams_failed, RetxDecision, RetxSuppression, StrategyName,
};
use crate::engine::{Action, FaceId, IncomingInterest, NextHop, PitEntry, Strategy, StrategyCtx};

/// The strategy of one congestion-control scheme.
pub struct CcStrategy {
    name: StrategyName,
    scheme: CcScheme,
    retx: RetxSuppression,
    /// Eligible next hops of the Interest at hand (reused: no allocation
    /// per packet).
    cands: Vec<FaceId>,
}

impl CcStrategy {
    /// Version component of every scheme strategy name.
    pub const VERSION: u64 = 1;

    /// The strategy of `scheme` (None for `none`).
    pub fn new(scheme: CcScheme) -> Option<Self> {
        let name = super::strategy_name(scheme)?;
        Some(CcStrategy {
            name: StrategyName(name.0.append(icn_tlv::Component::version(Self::VERSION))),
            scheme,
            retx: RetxSuppression::default(),
            cands: Vec::new(),
        })
    }
}

impl Strategy<SchemeHooks> for CcStrategy {
    fn name(&self) -> &StrategyName {
        &self.name
    }

    fn after_receive_interest(
        &mut self,
        ctx: &mut StrategyCtx<'_, SchemeHooks>,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        nexthops: &[NextHop],
    ) {
        if self.retx.decide(ctx.now, pit) == RetxDecision::Suppress {
            return;
        }
        let hop = interest.hop_limit;
        let mut cands = core::mem::take(&mut self.cands);
        cands.clear();
        cands.extend(
            nexthops
                .iter()
                .filter(|nh| ctx.can_forward_to(pit, nh.face, hop))
                .map(|nh| nh.face),
        );
        if cands.is_empty() {
            self.cands = cands;
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
        pit.strategy_state[1] = fib_prefix_key(ctx.fib_prefix);
        let now = ctx.now;
        let (hooks, mut d) = decide_ctx(ctx);
        let done = hooks.decide(now, self.scheme, |part, facts| {
            let Some(f) = facts.get(&interest.face) else {
                return false;
            };
            part.on_interest(&mut d, f, interest, pit, prefix, &cands);
            true
        });
        if done != Some(true) {
            // No state for the scheme (cannot happen once enabled) or the
            // downstream face is gone: forward unchanged to the first hop.
            d.push(Action::Forward { face: cands[0] });
        }
        self.cands = cands;
    }

    fn after_receive_data(
        &mut self,
        ctx: &mut StrategyCtx<'_, SchemeHooks>,
        in_face: FaceId,
        pit: &PitEntry,
    ) {
        let prefix = prefix_key(&pit.name_value);
        let now = ctx.now;
        let (hooks, mut d) = decide_ctx(ctx);
        let done = hooks.decide(now, self.scheme, |part, facts| {
            part.on_data(&mut d, facts.get(&in_face), in_face, pit, prefix);
        });
        if done.is_none() {
            d.send_data_to_downstreams(in_face, pit);
        }
    }

    fn after_receive_nack(
        &mut self,
        ctx: &mut StrategyCtx<'_, SchemeHooks>,
        in_face: FaceId,
        reason: NackReason,
        pit: &PitEntry,
        nexthops: &[NextHop],
    ) {
        let _ = (reason, nexthops);
        let prefix = prefix_key(&pit.name_value);
        let now = ctx.now;
        {
            let (hooks, mut d) = decide_ctx(ctx);
            hooks.decide(now, self.scheme, |part, _| {
                part.on_nack(&mut d, in_face, pit, prefix);
            });
        }
        nack_when_all_upstreams_failed(ctx, pit);
    }

    fn on_interest_timeout(
        &mut self,
        now: cc_core::Timestamp,
        pit: &PitEntry,
        hooks: &mut SchemeHooks,
    ) {
        let prefix = prefix_key(&pit.name_value);
        hooks.decide(now, self.scheme, |part, _| {
            part.on_timeout(now, pit, prefix);
        });
    }
}
