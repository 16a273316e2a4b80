//! Forwarding strategies: the per-prefix decision of where an Interest goes.
//!
//! A strategy never sees a clock, a socket or a global RNG: every callback
//! gets a [`StrategyCtx`] with `now`, a seeded RNG, a read-only view of the
//! faces (queue lengths, capacity, counters) and an action buffer. The
//! engine applies the actions afterwards, so strategies stay pure decision
//! code; congestion-control strategies (MIRCC, CCC, WinCM, PCON, QSCCP) plug
//! in through the same trait and keep their own measurements inside.

mod best_route;
mod multicast;

pub use best_route::BestRoute;
pub use multicast::Multicast;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::{NackReason, Name};
use rand::rngs::SmallRng;

use icn_tlv::CcFields;

use super::cc_hooks::{CcHooks, IncomingLp, NoCc};
use super::face::{FaceId, FaceInfo, FaceScope, LinkType};
use super::fib::NextHop;
use super::pit::PitEntry;

/// A strategy's NFD name, e.g. `/localhost/nfd/strategy/best-route/v=5`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StrategyName(pub Name);

impl StrategyName {
    /// `/localhost/nfd/strategy/best-route`.
    pub const BEST_ROUTE: &'static str = "/localhost/nfd/strategy/best-route";
    /// `/localhost/nfd/strategy/multicast`.
    pub const MULTICAST: &'static str = "/localhost/nfd/strategy/multicast";

    /// Parses an NDN URI.
    pub fn parse(uri: &str) -> Option<StrategyName> {
        uri.parse::<Name>().ok().map(StrategyName)
    }

    /// The best-route strategy name (unversioned).
    pub fn best_route() -> StrategyName {
        StrategyName::parse(Self::BEST_ROUTE).unwrap_or_else(|| StrategyName(Name::root()))
    }

    /// The multicast strategy name (unversioned).
    pub fn multicast() -> StrategyName {
        StrategyName::parse(Self::MULTICAST).unwrap_or_else(|| StrategyName(Name::root()))
    }

    /// The name without a trailing version component.
    pub fn unversioned(&self) -> Name {
        match self.0.get(self.0.len().wrapping_sub(1)) {
            Some(c) if c.as_version().is_some() => self.0.prefix(self.0.len() - 1),
            _ => self.0.clone(),
        }
    }

    /// The version component, if any.
    pub fn version(&self) -> Option<u64> {
        self.0.get(self.0.len().wrapping_sub(1))?.as_version()
    }
}

impl core::fmt::Display for StrategyName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}

/// Where a name may travel (NFD scope control).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameScope {
    /// Under `/localhost`: local faces only.
    Localhost,
    /// Under `/localhop`: at most one hop from the originating host.
    Localhop,
    /// Everything else.
    Global,
}

/// A strategy decision, applied by the engine after the callback returns.
/// Kept unboxed: actions go to a buffer the engine reuses, and a boxed
/// `CcFields` was one heap allocation per forwarded packet of a rate scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Forward the PIT entry's Interest to an upstream face.
    Forward {
        /// Upstream face.
        face: FaceId,
    },
    /// Send a Nack to one downstream and drop its in-record.
    Nack {
        /// Downstream face.
        face: FaceId,
        /// Reason carried in the Nack.
        reason: NackReason,
    },
    /// Send a Nack to every downstream.
    NackAll {
        /// Reason carried in the Nacks.
        reason: NackReason,
    },
    /// Send the Data being processed to a downstream.
    SendData {
        /// Downstream face.
        face: FaceId,
    },
    /// Forward with these CC fields instead of the incoming Interest's.
    ForwardCc {
        /// Upstream face.
        face: FaceId,
        /// CC fields of the outgoing Interest.
        cc: CcFields,
    },
    /// Send the Data with these CC fields instead of the incoming ones.
    SendDataCc {
        /// Downstream face.
        face: FaceId,
        /// CC fields of the outgoing Data.
        cc: CcFields,
    },
    /// Give up on the PIT entry now (delete it).
    Reject,
}

/// Read access to face state for strategies.
pub trait FaceLookup {
    /// The face's properties, counters and queue occupancy.
    fn face_info(&self, id: FaceId) -> Option<&FaceInfo>;
}

/// Facts about the Interest that triggered `after_receive_interest`.
#[derive(Debug, Clone)]
pub struct IncomingInterest {
    /// The face it arrived on.
    pub face: FaceId,
    /// Its nonce.
    pub nonce: u32,
    /// HopLimit after the decrement (None when absent).
    pub hop_limit: Option<u8>,
    /// Scope class of its name.
    pub scope: NameScope,
    /// Its wire (bare Interest TLV).
    pub wire: Bytes,
}

/// Everything a strategy callback may use. `C` is the engine's
/// congestion-control extension, handed over typed.
pub struct StrategyCtx<'a, C> {
    /// The current time.
    pub now: Timestamp,
    /// Seeded RNG owned by the engine.
    pub rng: &'a mut SmallRng,
    /// Faces, for queue lengths, capacities and counters.
    pub faces: &'a dyn FaceLookup,
    /// Scope class of the entry's name.
    pub scope: NameScope,
    /// Decisions to apply.
    pub actions: &'a mut Vec<Action>,
    /// The engine's congestion-control extension (scheme state shared with
    /// the per-face machinery), typed.
    pub cc: &'a mut C,
    /// LP header facts of the packet being processed.
    pub lp: IncomingLp,
    /// TLV-VALUE of the FIB prefix the Interest matched (its forwarding
    /// hint's when that had a route); empty outside
    /// `after_receive_interest` and when no route matched. Per-prefix
    /// strategy state (WinCM's UIN/UIW) keys on it.
    pub fib_prefix: &'a [u8],
}

impl<C> StrategyCtx<'_, C> {
    /// Queues an action.
    pub fn push(&mut self, a: Action) {
        self.actions.push(a);
    }

    /// True when the entry may be forwarded to `upstream`: the face exists,
    /// it is not the (non-ad-hoc) face of a pending downstream and scope
    /// rules allow it (NFD `isNextHopEligible` minus the unused check).
    pub fn can_forward_to(&self, pit: &PitEntry, upstream: FaceId, hop_limit: Option<u8>) -> bool {
        let Some(info) = self.faces.face_info(upstream) else {
            return false;
        };
        let local = info.params.scope == FaceScope::Local;
        if pit
            .in_records
            .iter()
            .any(|r| r.face == upstream && r.expiry > self.now)
            && info.params.link_type != LinkType::AdHoc
        {
            return false;
        }
        if hop_limit == Some(0) && !local {
            return false;
        }
        match self.scope {
            NameScope::Localhost => local,
            NameScope::Localhop => {
                local
                    || pit.in_records.iter().any(|r| {
                        self.faces
                            .face_info(r.face)
                            .is_some_and(|f| f.params.scope == FaceScope::Local)
                    })
            }
            NameScope::Global => true,
        }
    }
}

/// A forwarding strategy, typed by the engine's congestion-control
/// extension `C`. Callbacks default to NFD's base-class behaviour.
pub trait Strategy<C = NoCc>: Send {
    /// The instance's full name (with version).
    fn name(&self) -> &StrategyName;

    /// An Interest was accepted into `pit` (a new entry or a retransmission);
    /// decide where it goes. `nexthops` are the FIB entry's, cheapest first.
    fn after_receive_interest(
        &mut self,
        ctx: &mut StrategyCtx<'_, C>,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        nexthops: &[NextHop],
    );

    /// Data from `in_face` satisfies `pit`; the default returns it to every
    /// pending downstream (NFD `Strategy::afterReceiveData`).
    fn after_receive_data(
        &mut self,
        ctx: &mut StrategyCtx<'_, C>,
        in_face: FaceId,
        pit: &PitEntry,
    ) {
        for r in &pit.in_records {
            if r.expiry <= ctx.now {
                continue;
            }
            let adhoc = ctx
                .faces
                .face_info(r.face)
                .is_some_and(|f| f.params.link_type == LinkType::AdHoc);
            if r.face != in_face || adhoc {
                ctx.push(Action::SendData { face: r.face });
            }
        }
    }

    /// A Nack from `in_face` was recorded on its out-record; the default
    /// Nacks the downstreams once no upstream is left pending, with the least
    /// severe reason received (NFD best-route `processNack`).
    fn after_receive_nack(
        &mut self,
        ctx: &mut StrategyCtx<'_, C>,
        in_face: FaceId,
        reason: NackReason,
        pit: &PitEntry,
        nexthops: &[NextHop],
    ) {
        let _ = (in_face, reason, nexthops);
        nack_when_all_upstreams_failed(ctx, pit);
    }

    /// The PIT entry expired unsatisfied; `cc` is the engine's
    /// congestion-control extension (the scheme state a strategy updates).
    fn on_interest_timeout(&mut self, now: Timestamp, pit: &PitEntry, cc: &mut C) {
        let _ = (now, pit, cc);
    }
}

/// Severity order of Nack reasons (ndn-cxx `isLessSevere`):
/// Congestion < Duplicate < NoRoute < None/other.
pub fn nack_severity(r: NackReason) -> u8 {
    match r {
        NackReason::Congestion => 0,
        NackReason::Duplicate => 1,
        NackReason::NoRoute => 2,
        _ => 3,
    }
}

/// When every out-record is Nacked or expired, Nack all downstreams with the
/// least severe reason and reject the entry.
pub fn nack_when_all_upstreams_failed<C>(ctx: &mut StrategyCtx<'_, C>, pit: &PitEntry) {
    let now = ctx.now;
    if pit
        .out_records
        .iter()
        .any(|o| o.nack.is_none() && o.expiry > now)
    {
        return;
    }
    let reason = pit
        .out_records
        .iter()
        .filter_map(|o| o.nack)
        .min_by_key(|r| nack_severity(*r));
    if let Some(reason) = reason {
        ctx.push(Action::NackAll { reason });
        ctx.push(Action::Reject);
    }
}

/// NFD `RetxSuppressionExponential` state kept in `PitEntry::strategy_state[0]`.
#[derive(Debug, Clone, Copy)]
pub struct RetxSuppression {
    /// First suppression interval (NFD: 10 ms).
    pub initial: Duration,
    /// Growth factor per forwarded retransmission (NFD: 2).
    pub multiplier: u32,
    /// Interval cap (NFD: 250 ms).
    pub max: Duration,
}

impl Default for RetxSuppression {
    fn default() -> Self {
        RetxSuppression {
            initial: Duration::from_millis(10),
            multiplier: 2,
            max: Duration::from_millis(250),
        }
    }
}

/// Outcome of the retransmission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetxDecision {
    /// No upstream is pending: a new Interest.
    New,
    /// A retransmission to forward.
    Forward,
    /// A retransmission inside the suppression interval.
    Suppress,
}

impl RetxSuppression {
    /// Decides per PIT entry, updating the interval on `Forward`.
    pub fn decide(&self, now: Timestamp, pit: &mut PitEntry) -> RetxDecision {
        let pending = pit
            .out_records
            .iter()
            .any(|o| o.nack.is_none() && o.expiry > now);
        if !pending {
            return RetxDecision::New;
        }
        let interval_ns = if pit.strategy_state[0] == 0 {
            self.initial.as_nanos() as u64
        } else {
            pit.strategy_state[0]
        };
        let last = pit.last_outgoing().unwrap_or(Timestamp::ZERO);
        if now.saturating_since(last).as_nanos() < u128::from(interval_ns) {
            return RetxDecision::Suppress;
        }
        let next = interval_ns
            .saturating_mul(u64::from(self.multiplier))
            .min(self.max.as_nanos() as u64);
        pit.strategy_state[0] = next;
        RetxDecision::Forward
    }
}

/// Creates a strategy instance from its (possibly versioned) name.
pub type StrategyFactory<C = NoCc> = fn(&StrategyName) -> Option<Box<dyn Strategy<C>>>;

/// A strategy factory that may capture state (scheme parameters).
pub type StrategyBuilder<C = NoCc> =
    Box<dyn Fn(&StrategyName) -> Option<Box<dyn Strategy<C>>> + Send>;

/// The built-in strategies: best-route (v5) and multicast (v4), for any
/// congestion-control extension.
pub fn builtin_factory<C: CcHooks>(name: &StrategyName) -> Option<Box<dyn Strategy<C>>> {
    let base = name.unversioned();
    if base == StrategyName::best_route().0 {
        match name.version() {
            None | Some(BestRoute::VERSION) => Some(Box::new(BestRoute::new())),
            Some(_) => None,
        }
    } else if base == StrategyName::multicast().0 {
        match name.version() {
            None | Some(Multicast::VERSION) => Some(Box::new(Multicast::new())),
            Some(_) => None,
        }
    } else {
        None
    }
}
