//! Consumer and producer for icnfwd: `icncat` fetches a segmented object,
//! `icnput` publishes one.
//!
//! The protocol logic is sans-IO (every call takes `now`): [`pipeline`]
//! decides which segment to request and when, driven by any cc-core
//! [`cc_core::ConsumerLaw`] ([`scheme`] builds cc-core's law for `--cc`);
//! [`fetch`] adds version discovery and packets, [`feedback`] maps the
//! received congestion-control fields onto the law's feedback;
//! [`publisher`] answers Interests. [`transport`] and [`run`] are the tokio
//! shell that only moves bytes.

pub mod content;
pub mod feedback;
pub mod fetch;
pub mod logs;
pub mod manpage;
pub mod mgmt;
pub mod multicast;
pub mod output;
pub mod pipeline;
pub mod publisher;
pub mod rate;
pub mod run;
pub mod scheme;
pub mod segment;
pub mod stats;
pub mod transport;

pub use fetch::{Discovery, FetchConfig, FetchError, Fetcher};
pub use pipeline::{LogEvent, NackKind, Pipeline, PipelineConfig, PipelineError, Request};
pub use publisher::{Content, Publisher, PublisherConfig, Reply};
pub use rate::RateSpec;
pub use scheme::{Scheme, SchemeOptions};
pub use stats::FetchStats;
