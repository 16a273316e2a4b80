//! Multicast (NFD multicast v4): send the Interest to every eligible next
//! hop; retransmissions inside the suppression interval are suppressed.

use icn_tlv::NackReason;

use super::best_route::versioned;
use super::{
    Action, IncomingInterest, RetxDecision, RetxSuppression, Strategy, StrategyCtx, StrategyName,
};
use crate::engine::fib::NextHop;
use crate::engine::pit::PitEntry;

/// The multicast strategy.
#[derive(Debug, Clone)]
pub struct Multicast {
    name: StrategyName,
    retx: RetxSuppression,
}

impl Multicast {
    /// Version number in the strategy name.
    pub const VERSION: u64 = 4;

    /// Creates an instance with NFD's retransmission-suppression defaults.
    pub fn new() -> Self {
        Multicast {
            name: StrategyName(versioned(&StrategyName::multicast().0, Self::VERSION)),
            retx: RetxSuppression::default(),
        }
    }
}

impl Default for Multicast {
    fn default() -> Self {
        Multicast::new()
    }
}

impl<C> Strategy<C> for Multicast {
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
        if self.retx.decide(ctx.now, pit) == RetxDecision::Suppress {
            return;
        }
        let before = ctx.actions.len();
        for nh in nexthops {
            if ctx.can_forward_to(pit, nh.face, interest.hop_limit) {
                ctx.push(Action::Forward { face: nh.face });
            }
        }
        if ctx.actions.len() == before && pit.out_records.is_empty() {
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
