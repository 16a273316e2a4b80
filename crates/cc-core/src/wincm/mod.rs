//! WinCM: window-based congestion control for NDN (Wang, Yue, Wu, 2018),
//! docs/algorithms.md §5.
//!
//! Three parts, one per module:
//! * [`aqm`]: CoDel sojourn-time detection with *multi-congestion marking*
//!   (paper §III-A, Algorithm 1, eqs. 1–2): once the sojourn time has stayed
//!   above Target (5 ms) for an Interval, every dequeued packet is marked until
//!   `StopMarkingTime = FirstAboveTime + Interval + s + k`, with
//!   `k = (s − FirstSojourn)/(now − FirstAboveTime)·s`, so the marking lasts
//!   about one current queue delay.
//! * [`consumer`]: the consumer window (§III-B, Algorithm 2): additive
//!   decrease by β per marked Data, BIC increase otherwise, leaving the
//!   congestion state after n = 8 consecutive unmarked Data; multiplicative
//!   BIC decrease on timeouts and congestion Nacks.
//! * [`forwarding`]: UIN/UIW per (prefix, face) (§III-C, Algorithm 3):
//!   ForWeight (eq. 3), eligibility UIW ≥ UIN, roulette choice, UIW + 1 when
//!   a saturated face is chosen, UIW − d per mark, exUIW refreshed
//!   every 100 ms or on a mark.
//!
//! Deviations and readings (all from docs/algorithms.md §5.5): the Interval is
//! 100 ms (CoDel/PCON) rather than the 110 ms of the WinCM text,
//! configurable; Algorithm 1's impossible nesting is read as an else-branch,
//! detection re-arms after each marking episode, and a sojourn at or below
//! Target resets it; `s + k` is clamped at 0; UIW never goes below 1; with
//! no eligible face the one with the largest UIW − UIN is used; UIN also
//! drops on Nack and PIT expiry.
//!
//! Deviations measured on the diamond (one consumer, two 10 Mbit/s paths),
//! each explained where it lives: β = 1.5 instead of 4 and d = 1.1 instead
//! of 1.5 ([`consumer`], [`forwarding`]);
//! bicMin follows the window in BIC's binary search as ConsumerPcon does
//! (`bic`); a face is "saturated" when this Interest takes UIN past UIW
//! (UIW is fractional after a mark), and faces with room are chosen before
//! saturated ones ([`forwarding`]). Before: 15.7 Mbit/s in virtual time (4000-byte
//! Data), 13.4 on the testbed (8000-byte Data, 14 ms RTT); after: 19.6–19.9
//! in virtual time; the testbed (8000-byte Data) 15.99–18.43.
//!
//! The testbed scenarios therefore run WinCM with 1024-byte Data (ndnSIM's
//! default payload; `[segment_bytes]` in configs/scenarios): a window
//! that moves in whole Interests cannot fill a path holding ~2 Data, and
//! WinCM's evaluation ran in ndnSIM. Measured on real links (16 s runs):
//! diamond 18.65–19.58 Mbit/s (9 runs); dumbbell Jain over the last 8 s 0.929–0.999
//! (8 of 10 runs ≥ 0.95): the shares still drift, since BIC regrows each
//! flow in proportion to its own cut.

pub mod aqm;
mod bic;
pub mod consumer;
pub mod forwarding;

pub use aqm::{MultiMarkCodel, MultiMarkConfig, StandingQueue};
pub use bic::BicConfig;
pub use consumer::{WincmConsumer, WincmConsumerConfig};
pub use forwarding::{for_weight, UiwConfig, UiwTable};
