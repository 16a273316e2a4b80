//! The engine as icnfwd runs it: the sans-IO [`Forwarder`] with this
//! crate's congestion control ([`SchemeHooks`]) and multicast groups
//! ([`SrmccGroups`]) installed. The engine itself knows neither; this is the
//! one place that puts them together, for the node, the daemon and tests.

use crate::cc::{self, CcConfig, SchemeHooks};
use crate::engine::{EngineConfig, Forwarder};
use crate::groups::{self, GroupsConfig, SrmccGroups};

/// The engine with congestion control and multicast groups.
pub type Router = Forwarder<SchemeHooks, Option<SrmccGroups>>;

/// What a [`Router`] is built from: the engine's tables and timers, `[cc]`
/// and `[multicast_groups]`.
#[derive(Debug, Clone, Default)]
pub struct RouterConfig {
    /// Tables, queues and timers of the engine.
    pub engine: EngineConfig,
    /// Congestion control: scheme and parameters (`[cc]`).
    pub cc: CcConfig,
    /// Multicast groups (SRMCC tree node): `[multicast_groups]`.
    pub multicast_groups: GroupsConfig,
}

impl From<EngineConfig> for RouterConfig {
    /// An engine configuration with no congestion control and no groups.
    fn from(engine: EngineConfig) -> Self {
        RouterConfig {
            engine,
            ..RouterConfig::default()
        }
    }
}

/// Builds a router: the engine with both extensions, the scheme strategies
/// registered and `/` on the `[cc] scheme`'s strategy. `rng_seed` seeds
/// the engine and every extension (a constant in tests).
pub fn build(cfg: &RouterConfig, rng_seed: u64) -> Router {
    let (hooks, strategies) = cc::build(&cfg.cc, rng_seed);
    let groups = groups::hook(&cfg.multicast_groups, rng_seed);
    let mut fwd = Forwarder::with_extensions(cfg.engine.clone(), rng_seed, hooks, groups);
    cc::install(&mut fwd, &cfg.cc, strategies);
    fwd
}
