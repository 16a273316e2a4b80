//! Best-route (NFD best-route v5): send a new Interest to the cheapest
//! eligible next hop; a retransmission outside the suppression interval goes
//! to the cheapest next hop not yet tried, else to the one tried longest ago.

use icn_tlv::{NackReason, Name};

use super::{
    Action, IncomingInterest, RetxDecision, RetxSuppression, Strategy, StrategyCtx, StrategyName,
};
use crate::engine::fib::NextHop;
use crate::engine::pit::PitEntry;

/// The best-route strategy.
#[derive(Debug, Clone)]
pub struct BestRoute {
    name: StrategyName,
    retx: RetxSuppression,
}

impl BestRoute {
    /// Version number in the strategy name.
    pub const VERSION: u64 = 5;

    /// Creates an instance with NFD's retransmission-suppression defaults.
    pub fn new() -> Self {
        let base = StrategyName::best_route().0;
        BestRoute {
            name: StrategyName(versioned(&base, Self::VERSION)),
            retx: RetxSuppression::default(),
        }
    }
}

impl Default for BestRoute {
    fn default() -> Self {
        BestRoute::new()
    }
}

pub(super) fn versioned(base: &Name, v: u64) -> Name {
    base.append(icn_tlv::Component::version(v))
}

impl<C> Strategy<C> for BestRoute {
    fn name(&self) -> &StrategyName {
        &self.name
    }

    fn after_receive_interest(
        &mut self,
        ctx: &mut StrategyCtx<'_, C>,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        nexthops: &[NextHop],
    ) {
        let hop = interest.hop_limit;
        match self.retx.decide(ctx.now, pit) {
            RetxDecision::Suppress => {}
            RetxDecision::New => {
                match nexthops
                    .iter()
                    .find(|nh| ctx.can_forward_to(pit, nh.face, hop))
                {
                    Some(nh) => ctx.push(Action::Forward { face: nh.face }),
                    None => {
                        ctx.push(Action::Nack {
                            face: interest.face,
                            reason: NackReason::NoRoute,
                        });
                        if pit.in_records.len() <= 1 {
                            ctx.push(Action::Reject);
                        }
                    }
                }
            }
            RetxDecision::Forward => {
                let unused = nexthops.iter().find(|nh| {
                    pit.out_record(nh.face).is_none() && ctx.can_forward_to(pit, nh.face, hop)
                });
                let chosen = unused.or_else(|| {
                    nexthops
                        .iter()
                        .filter(|nh| ctx.can_forward_to(pit, nh.face, hop))
                        .min_by_key(|nh| pit.out_record(nh.face).map(|o| o.last_sent))
                });
                if let Some(nh) = chosen {
                    ctx.push(Action::Forward { face: nh.face });
                }
            }
        }
    }
}
