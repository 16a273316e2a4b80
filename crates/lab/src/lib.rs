//! icnlab: one scenario format ([`scenario`]) and two runners over it, the
//! deterministic virtual-time network with real engines ([`sim`]) and real
//! icnfwd/icnput/icncat processes in network namespaces ([`real`]), with
//! the same table ([`results`]) and a report a person reads ([`report`]);
//! [`sweep`] generates scenarios over the operating envelope and [`bounds`]
//! holds their runs to the envelope's bounds.

pub mod agree;
pub mod bounds;
pub mod delivery;
mod error;
pub mod metrics;
pub mod multicast;
pub mod real;
pub mod report;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod sweep;

pub use error::LabError;
pub use scenario::{scenario_path, Scenario};
