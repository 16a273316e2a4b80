//! Congestion control inside the engine, wired through cc-core.
//!
//! [`SchemeHooks`] is the engine's congestion-control extension (the `C` of
//! `Forwarder<C, M>`): it keeps what every scheme may know of a face and
//! dispatches each hook to the schemes enabled on the node. Each scheme
//! lives in one module ([`scheme::SchemePart`]: its per-face machinery and
//! its strategy's tables): `pcon`, `rcp_mircc`, `ccc`, `wincm`, `qsccp`.
//! [`build`] makes the extension and the factory of the scheme strategies
//! `/localhost/nfd/strategy/{pcon,rcp,mircc,ccc,wincm,qsccp}` (version 1);
//! [`install`] registers the factory and gives `/` the `[cc] scheme`'s
//! strategy. A `[[strategy]]` entry naming another scheme's strategy
//! enables that scheme too (its state is built at its first use).

mod ccc;
mod config;
mod config_profiled;
mod dispatch;
mod marking;
mod observe;
mod pcon;
mod qsccp;
mod rate;
mod rcp_mircc;
mod scheme;
mod strategy;
#[cfg(test)]
mod test_rig;
mod wincm;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub use config::{
    CcConfig, CcScheme, CccParams, MirccParams, PconParams, QsccpParams, RcpParams, WincmParams,
};
pub use dispatch::SchemeHooks;
pub use observe::{uiw_summary, UiwSummary};
pub use strategy::CcStrategy;

use crate::engine::{Forwarder, MulticastHook, StrategyBuilder, StrategyName};
use icn_tlv::Name;

/// `/localhost/nfd/strategy/<scheme>` (unversioned), None for `none`.
pub fn strategy_name(scheme: CcScheme) -> Option<StrategyName> {
    if scheme == CcScheme::None {
        return None;
    }
    StrategyName::parse(&format!("/localhost/nfd/strategy/{}", scheme.name()))
}

/// The scheme a strategy name belongs to.
pub fn scheme_of(name: &StrategyName) -> Option<CcScheme> {
    let base = name.unversioned();
    CcScheme::ALL
        .into_iter()
        .find(|s| strategy_name(*s).is_some_and(|n| n.0 == base))
}

/// The strategy `/` gets under `cfg` (None: keep the engine default).
pub fn default_strategy(cfg: &CcConfig) -> Option<StrategyName> {
    strategy_name(cfg.scheme)
}

/// The congestion-control extension of `cfg` and the factory of the scheme
/// strategies, which enables a scheme on the extension when its strategy
/// is first instantiated.
pub fn build(cfg: &CcConfig, seed: u64) -> (SchemeHooks, StrategyBuilder<SchemeHooks>) {
    let enabled = Arc::new(AtomicU32::new(match cfg.scheme {
        CcScheme::None => 0,
        s => s.bit(),
    }));
    let hooks = SchemeHooks::new(cfg.clone(), enabled.clone(), seed);
    let builder: StrategyBuilder<SchemeHooks> = Box::new(move |name: &StrategyName| {
        let scheme = scheme_of(name)?;
        if name.version().is_some_and(|v| v != CcStrategy::VERSION) {
            return None;
        }
        enabled.fetch_or(scheme.bit(), Ordering::Relaxed);
        let s = CcStrategy::new(scheme)?;
        Some(Box::new(s) as Box<dyn crate::engine::Strategy<SchemeHooks>>)
    });
    (hooks, builder)
}

/// Registers `builder` (from [`build`]) with `fwd` and gives `/` the
/// strategy of `cfg.scheme` (unless it is `none`).
pub fn install<M: MulticastHook>(
    fwd: &mut Forwarder<SchemeHooks, M>,
    cfg: &CcConfig,
    builder: StrategyBuilder<SchemeHooks>,
) {
    fwd.register_strategy_builder(builder);
    if let Some(name) = default_strategy(cfg) {
        if fwd.set_strategy(&Name::root(), &name).is_err() {
            tracing::debug!(strategy = %name, "scheme strategy could not be installed on /");
        }
    }
}

/// A flow key: hash of a name TLV-VALUE without its last component (the
/// segment), so that one content object's segments share per-prefix state.
pub fn prefix_key(name_value: &[u8]) -> u64 {
    fnv1a(crate::engine::name_table::without_last_component(
        name_value,
    ))
}

/// [`prefix_key`] of a bare Interest or Data wire (a queued packet's),
/// its name read in place; 0 on malformed input. Every scheme that keys
/// per-flow state on a packet it holds (QSCCP's scheduler and store
/// answers, CCC's pacers, RCP/MIRCC's store answers) reads it here.
pub(crate) fn flow_prefix_of(packet_wire: &[u8]) -> u64 {
    use icn_tlv::{element::Element, types};
    let name = Element::parse(packet_wire)
        .ok()
        .filter(|(p, _)| matches!(p.typ(), types::INTEREST | types::DATA))
        .and_then(|(p, _)| Element::parse(p.value()).ok())
        .filter(|(n, _)| n.typ() == types::NAME);
    name.map_or(0, |(n, _)| prefix_key(n.value()))
}

/// A per-FIB-prefix key: hash of the FIB prefix an Interest matched
/// (`StrategyCtx::fib_prefix`). The scheme strategy keeps it in the PIT
/// entry ([`fib_key_of`]) for the entry's Data, Nack and timeout, which
/// do not look the FIB up again.
pub fn fib_prefix_key(fib_prefix_value: &[u8]) -> u64 {
    fnv1a(fib_prefix_value)
}

/// The [`fib_prefix_key`] the scheme strategy stored in `pit`
/// (`strategy_state[1]`; `[0]` is retransmission suppression's).
pub(crate) fn fib_key_of(pit: &crate::engine::PitEntry) -> u64 {
    pit.strategy_state[1]
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
        (h ^ u64::from(*x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Parses a prefix; used by tests and the daemon config.
pub fn parse_prefix(s: &str) -> Option<Name> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_prefix_reads_the_name_in_place() {
        let n: Name = "/a/b/seg=9".parse().unwrap();
        let i = icn_tlv::Interest::new("/a/b/seg=3".parse::<Name>().unwrap()).encode();
        let d = icn_tlv::Data::new(n.clone(), bytes::Bytes::new()).encode();
        assert_eq!(flow_prefix_of(&i), prefix_key(n.value()));
        assert_eq!(flow_prefix_of(&d), prefix_key(n.value()));
        assert_eq!(flow_prefix_of(&i[..3]), 0);
        assert_eq!(flow_prefix_of(b"\x06\x00"), 0);
    }

    #[test]
    fn prefix_key_drops_the_last_component() {
        let a: Name = "/a/b/seg=1".parse().unwrap();
        let b: Name = "/a/b/seg=2".parse().unwrap();
        let c: Name = "/a/c/seg=1".parse().unwrap();
        assert_eq!(prefix_key(a.value()), prefix_key(b.value()));
        assert_ne!(prefix_key(a.value()), prefix_key(c.value()));
    }

    #[test]
    fn strategy_names_round_trip() {
        for s in CcScheme::ALL {
            let n = strategy_name(s).unwrap();
            assert_eq!(scheme_of(&n), Some(s));
        }
        assert_eq!(strategy_name(CcScheme::None), None);
    }
}
