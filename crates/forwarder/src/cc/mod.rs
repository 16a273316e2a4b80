//! Congestion control inside the engine, wired through cc-core.
//!
//! [`install`] (called by `Forwarder::new` with `EngineConfig::cc`) puts a
//! [`SchemeHooks`] object into the engine's CC hook slot and registers the
//! scheme strategies `/localhost/nfd/strategy/{pcon,rcp,mircc,ccc,wincm,qsccp}`
//! (version 1). The `[cc] scheme` becomes the strategy of `/`; a
//! `[[strategy]]` entry naming another scheme's strategy enables that
//! scheme's per-face machinery too (lazily, on first use).

mod ccc;
mod config;
mod hooks;
mod marking;
mod observe;
mod qsccp;
mod rate;
mod strategy;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub use config::{
    CcConfig, CcScheme, CccParams, MirccParams, PconParams, QsccpParams, RcpParams, WincmParams,
};
pub use hooks::SchemeHooks;
pub use observe::{uiw_summary, UiwSummary};
pub use strategy::CcStrategy;

use crate::engine::{Forwarder, StrategyName};
use cc_core::Timestamp;
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

/// Installs the hooks and strategy factory of `cfg` into `fwd`.
pub fn install(fwd: &mut Forwarder, cfg: &CcConfig, seed: u64) {
    let enabled = Arc::new(AtomicU32::new(match cfg.scheme {
        CcScheme::None => 0,
        s => s.bit(),
    }));
    let hooks = SchemeHooks::new(cfg.clone(), enabled.clone(), seed);
    fwd.set_cc_hooks(Timestamp::ZERO, Box::new(hooks));
    let cfg = cfg.clone();
    fwd.register_strategy_builder(Box::new(move |name: &StrategyName| {
        let scheme = scheme_of(name)?;
        if name.version().is_some_and(|v| v != CcStrategy::VERSION) {
            return None;
        }
        enabled.fetch_or(scheme.bit(), Ordering::Relaxed);
        let s = CcStrategy::new(scheme, &cfg, seed ^ scheme.bit() as u64)?;
        Some(Box::new(s) as Box<dyn crate::engine::Strategy>)
    }));
}

/// A flow key: hash of a name TLV-VALUE without its last component (the
/// segment), so that one content object's segments share per-prefix state.
pub fn prefix_key(name_value: &[u8]) -> u64 {
    fnv1a(crate::engine::name_table::without_last_component(
        name_value,
    ))
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
