//! Congestion-control laws, sans-IO.
#![cfg_attr(not(any(test, feature = "std")), no_std)]
extern crate alloc;

pub mod any;
pub mod chance_queue;
pub mod law;
pub mod link;
pub mod pace_jitter;
pub mod profile;
mod splitmix;
pub mod time;

// Rate-based laws (their fluid bottleneck model is `icn_sim::fluid`).
pub mod ccc;
pub mod mircc;
pub mod rate_link;
pub mod rcp;
pub mod srmcc;

// Queue, window and scheduler laws.
pub mod aimd;
pub mod codel;
pub mod cubic;
pub mod fixed;
pub mod fq;
pub mod growth_limit;
pub mod pcon;
pub mod qsccp;
pub mod rtt;
pub mod token_bucket;
pub mod wincm;
mod window;

pub use any::{AnyConsumerLaw, ConsumerLawConfig, FixedLawConfig};
pub use law::{ConsumerLaw, DataFeedback, LawKind, NackFeedback, SendLimit};
pub use link::{
    control_period, AnyLinkLaw, LinkLaw, LinkLawConfig, LinkRates, LinkSample, PeriodBounds,
};
pub use profile::Profile;
pub use time::{Duration, Timestamp};
