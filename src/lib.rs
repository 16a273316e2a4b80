//! Umbrella crate of the icnfwd workspace.
//!
//! It exists so that the top-level `benches/` (criterion) and `tests/`
//! (end-to-end runs across crates) belong to a package. It re-exports the
//! member crates under short names for those benches and tests.

pub use cc_core;
pub use icn_consumer as consumer;
pub use icn_forwarder as forwarder;
pub use icn_multicast as multicast;
pub use icn_tlv as tlv;
