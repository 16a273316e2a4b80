//! The namespace runner: a scenario built as Linux network namespaces
//! joined by veth pairs, one real icnfwd per node, icnput/icncat per flow,
//! figures from the forwarders' counters. Needs root and iproute2;
//! docs/testbed.md describes how to run it.

pub mod bins;
mod derive;
mod mcast;
pub mod mgmt;
pub mod netns;
pub mod run;
pub mod topo;

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
