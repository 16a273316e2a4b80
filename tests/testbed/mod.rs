//! The congestion-control testbed: scenario files (configs/scenarios/*.toml)
//! built as Linux network namespaces joined by veth pairs, one real icnfwd
//! per node, icnput/icncat per flow, figures from the forwarders' counters.
//! docs/testbed.md describes the format and how to run it.

#![allow(dead_code)]

pub mod bins;
pub mod metrics;
pub mod mgmt;
pub mod minitoml;
pub mod netns;
pub mod results;
pub mod run;
pub mod scenario;
pub mod topo;

use std::path::PathBuf;

/// `configs/scenarios/<name>.toml`, or `name` itself when it names a file
/// (a user's own scenario: `ICN_TESTBED_SCENARIO=path/to/file.toml`).
pub fn scenario_path(name: &str) -> PathBuf {
    if name.ends_with(".toml") {
        return PathBuf::from(name);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/scenarios"))
        .join(format!("{name}.toml"))
}

/// Whether namespaces can be built here; prints why not, loudly.
pub fn available_or_explain(test: &str) -> bool {
    if netns::available() {
        return true;
    }
    eprintln!(
        "\n*** SKIPPED {test}: the testbed needs root and a working `ip netns` (iproute2). ***\n\
         *** Nothing was measured; run as root to exercise it.                         ***\n"
    );
    false
}
