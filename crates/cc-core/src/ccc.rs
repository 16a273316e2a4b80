//! CCC: Cooperative Congestion Control (Thibaud et al., ICC 2020, §IV;
//! docs/algorithms.md §3).
//!
//! Each node keeps, per flow, the pace *objective* received from downstream
//! (Interests carry it) and the pace *constraints* received from each
//! upstream next hop (Data carry them), and answers with its own objectives
//! upstream and its own constraint downstream. Paces are in Interests/s.
//!
//! * [`CccFlow::on_objective`]: Algorithm 1, equal split `p_o,k_obj =
//!   p_i_obj / n` (eq. 11), so `Σ p_o,k_obj = p_i_obj` (eq. 8).
//! * [`CccFlow::set_incoming_pace`], [`CccFlow::on_constraint`]:
//!   Algorithm 2, load balancing of the incoming pace up to each next hop's
//!   constraint (eq. 10), with overflow redistribution when a constraint
//!   drops; the outgoing constraint is kept `≤ Σ p_i,k_max` (eq. 9).
//! * [`CccSupervisor::supervise`]: Algorithm 3 every supervision period on a
//!   downstream output interface: congested iff a packet was dropped in the
//!   period (Algorithm 4); then every active flow's constraint becomes
//!   `0.9 · p_i` (Algorithm 5); otherwise the spare bandwidth `C − Σ p_o_max
//!   · data_size` (eq. 12) is shared equally among active flows (Algorithm 6).
//! * [`CccConsumer`]: announces its objective, obeys the constraint.
//!
//! Readings (docs/algorithms.md §3.4-3.5): Algorithm 5 follows the text (90% of
//! the incoming pace) rather than the pseudo-code (90% of the constraint),
//! but never raises a constraint (a pace measured above it is noise);
//! Algorithm 2 fills next hops in decreasing order of spare constraint;
//! Algorithm 6 caps each flow at its objective unless every active flow is
//! satisfied, always at `Σ p_i,k_max`, and recycles capped flows' shares
//! among the others (water-filling); data sizes are EWMAs (gain 1/8,
//! 8400 bytes before the first Data); τ = 100 ms; a flow is active when it
//! saw an Interest or Data in the last τ. [`Augmentation::MaxMinShare`] is
//! an optional reading of Algorithm 6 that restores per-link max-min
//! fairness, which the literal one does not (see [`Augmentation`]).
//!
//! Start-up and starvation guards [D] (measured on real links: without them
//! three flows starting together on a 20 Mbit/s dumbbell each got the whole
//! link, ~4000 Data were dropped and two flows starved at a zero
//! constraint): a flow's first constraint at a supervised interface is an
//! equal share of it ([`CccSupervisor::admit`]); Algorithm 5 never cuts
//! below half a flow's max-min share; the consumer keeps a small window in
//! flight until its first Data and never paces below 1 Interest/s; next
//! hops are chosen by smooth weighted round robin
//! ([`CccFlow::next_hop_smooth`]) rather than at random.

use crate::rcp::sanitize;

/// What a producer's network layer stamps as its constraint before it knows
/// more: its link capacity divided by the Data size.
pub fn producer_constraint_ips(capacity_bps: f64, data_size_bytes: f64) -> f64 {
    if data_size_bytes > 0.0 {
        sanitize(capacity_bps) / (8.0 * data_size_bytes)
    } else {
        0.0
    }
}

mod config;
mod consumer;
mod flow;
pub mod pacer;
mod supervisor;

pub use config::{Augmentation, CccConfig, CccError, InterestPace};
pub use flow::{CccFlow, NextHop};
pub(crate) use flow::{DEMAND_WINDOW_INTERESTS, DEMAND_WINDOW_MAX, EPS};

pub use consumer::{CccConsumer, CccConsumerConfig};
pub use supervisor::{CccSupervisor, Supervision};

#[cfg(test)]
mod tests;
