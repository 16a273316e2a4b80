//! Virtual-time simulation for icnfwd's tests, benches and `icnlab run --sim`.
//!
//! Kept out of the production crates so that the `icnfwd`, `icncat` and
//! `icnput` binaries link none of it; the forwarder, multicast and lab crates
//! use it as a (dev-)dependency.
//!
//! - [`net`]: a virtual-time network of real [`icn_forwarder::engine::Forwarder`]s
//!   joined by simulated links, with in-memory applications and closed-loop
//!   virtual consumers ([`net::flows::LawFlow`]).
//! - [`mcast`]: a virtual-time multicast tree of `icn_multicast` nodes,
//!   sources and receivers ([`mcast::router::RouterHost`] is the engine's
//!   dispatch recipe).
//! - [`envelope`]: the operating envelope's bounds (shares, queue floors,
//!   the check), one definition for the virtual-time grid and `icnlab sweep`.
//! - [`fluid`]: a fluid model of one bottleneck for the explicit-rate laws.
//! - [`response`]: settling and overshoot of rate series after a step, the
//!   one definition every runner reports.
//!
//! Nothing here reads a clock: every run is deterministic for its seed.

pub mod envelope;
pub mod fluid;
pub mod mcast;
pub mod net;
pub mod response;
