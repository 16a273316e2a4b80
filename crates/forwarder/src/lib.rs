//! icnfwd: a sans-IO NDN forwarding engine and the daemon around it.
//!
//! - [`cc`]: congestion-control schemes wired into the engine through cc-core.
//! - [`engine`]: the deterministic forwarding state machine (FIB, PIT, CS,
//!   strategies, per-face queues). No socket, clock or thread inside.
//! - [`groups`]: multicast groups (SRMCC tree node) behind the engine's multicast hook.
//! - [`mgmt`]: the NFD management protocol subset, answering through the engine.
//! - [`router`]: the engine with congestion control and multicast installed.
//! - [`node`]: router + manager as one object driven by the shell or by tests.
//! - [`config`]: the TOML configuration.
//! - [`limits`]: the `[limits]` section (face table, memory budgets).
//! - [`ratelog`]: rate-limited warnings for repeated conditions.
//! - [`daemon`]: the tokio shell: faces over UDP/TCP/Unix/Ethernet, timers, signals.
//!
//! The virtual-time network of engines that tests, benches and `icnlab run
//! --sim` drive lives in `icn-sim` (crates/sim), which the binaries do not link.

pub mod cc;
pub mod config;
mod config_checks;
pub mod daemon;
pub mod engine;
pub mod groups;
pub mod limits;
pub mod mgmt;
pub mod node;
pub mod ratelog;
pub mod router;
