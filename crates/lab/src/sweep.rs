//! `icnlab sweep`: scenario files generated for points of the operating
//! envelope (Data size, bottleneck capacity, base RTT, flow count, mixed
//! RTTs, several bottlenecks), each run with the same runners as `run`.
//!
//! The virtual-time grid of every scheme lives in the forwarder's
//! `tests/cc_envelope.rs`; this module is its counterpart on real hosts:
//! [`testbed_points`] covers each axis's extremes (the smallest Data at the
//! highest capacity included, where the packet rate is highest), and
//! `icnlab sweep --agree` runs every point in virtual time and on network
//! namespaces and checks that the two agree.

use std::fmt::Write as _;

use crate::error::LabError;
use crate::scenario::Scenario;

/// Access links: fast enough never to queue (10 × the largest bottleneck
/// of the grid), 1 ms.
const ACCESS_MBPS: u64 = 500;

/// One generated point.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// `dumbbell-1200B-50M-10ms-3f` and the like: the run directory name.
    pub label: String,
    /// The scenario file's text.
    pub toml: String,
}

impl SweepPoint {
    /// The parsed scenario.
    pub fn scenario(&self) -> Result<Scenario, LabError> {
        Scenario::parse_named(&self.toml, &format!("<sweep {}>", self.label))
    }
}

fn header(out: &mut String, name: &str, title: &str, size: u32, measure: &[(&str, &str)]) {
    let m: Vec<String> = measure
        .iter()
        .map(|(a, b)| format!("[\"{a}\", \"{b}\"]"))
        .collect();
    let _ = writeln!(
        out,
        "name = \"{name}\"\ntitle = \"{title}\"\nduration_s = 30\nci_duration_s = 16\n\
         schemes = [\"pcon\", \"rcp\", \"mircc\", \"ccc\", \"wincm\", \"qsccp\"]\n\
         measure = [{}]\nsegment_bytes = {size}\n",
        m.join(", ")
    );
}

fn node(out: &mut String, name: &str) {
    let _ = writeln!(out, "[[node]]\nname = \"{name}\"");
}

fn link(out: &mut String, a: &str, b: &str, mbps: u64, delay_ms: u64) {
    let _ = writeln!(
        out,
        "[[link]]\na = \"{a}\"\nb = \"{b}\"\ncapacity_mbps = {mbps}\ndelay_ms = {delay_ms}"
    );
}

fn flow(out: &mut String, name: &str, consumer: &str, producer: &str) {
    let _ = writeln!(
        out,
        "[[flow]]\nname = \"{name}\"\nconsumer = \"{consumer}\"\nproducer = \"{producer}\"\nobjective_mbps = 1000"
    );
}

/// `n` long flows through one bottleneck of `cap_mbps` with a base RTT of
/// `rtt_ms` (2 ms of it on the access links), or, with `access_ms`, one
/// extra one-way access delay per flow (flows of different RTTs).
fn dumbbell_with(
    label: String,
    size: u32,
    cap_mbps: u64,
    rtt_ms: u64,
    access_ms: &[u64],
) -> SweepPoint {
    let mut t = String::new();
    let n = access_ms.len();
    header(
        &mut t,
        &label,
        &format!("{n} flows, {cap_mbps} Mbit/s bottleneck, {rtt_ms} ms base RTT, {size}-byte Data"),
        size,
        &[("r2", "r1")],
    );
    for i in 1..=n {
        node(&mut t, &format!("c{i}"));
        node(&mut t, &format!("p{i}"));
    }
    node(&mut t, "r1");
    node(&mut t, "r2");
    let core_ms = (rtt_ms / 2).saturating_sub(2).max(1);
    link(&mut t, "r1", "r2", cap_mbps, core_ms);
    for (i, extra) in access_ms.iter().enumerate() {
        let i = i + 1;
        link(&mut t, &format!("c{i}"), "r1", ACCESS_MBPS, 1 + extra);
        link(&mut t, "r2", &format!("p{i}"), ACCESS_MBPS, 1);
        flow(&mut t, &format!("f{i}"), &format!("c{i}"), &format!("p{i}"));
    }
    SweepPoint { label, toml: t }
}

/// A dumbbell point: `flows` long flows, one bottleneck.
pub fn dumbbell(size: u32, cap_mbps: u64, rtt_ms: u64, flows: usize) -> SweepPoint {
    dumbbell_with(
        format!("dumbbell-{size}B-{cap_mbps}M-{rtt_ms}ms-{flows}f"),
        size,
        cap_mbps,
        rtt_ms,
        &vec![0; flows.max(1)],
    )
}

/// Three flows of 10, 50 and 150 ms base RTT on one bottleneck.
pub fn mixed_rtt(size: u32, cap_mbps: u64) -> SweepPoint {
    dumbbell_with(
        format!("mixed-rtt-{size}B-{cap_mbps}M"),
        size,
        cap_mbps,
        10,
        &[0, 20, 70],
    )
}

/// Two bottlenecks of `cap_mbps` in a row (r1 = r2 = r3), one long flow
/// across both, one cross flow on the first and two on the second
/// (max-min shares C/3, 2C/3, C/3, C/3).
pub fn parking_lot(size: u32, cap_mbps: u64) -> SweepPoint {
    let label = format!("parking-lot-{size}B-{cap_mbps}M");
    let mut t = String::new();
    header(
        &mut t,
        &label,
        &format!("two {cap_mbps} Mbit/s bottlenecks in a row, one long and three cross flows, {size}-byte Data"),
        size,
        &[("r2", "r1"), ("r3", "r2")],
    );
    for n in [
        "c0", "c1", "c2", "c3", "r1", "r2", "r3", "p0", "p1", "p2", "p3",
    ] {
        node(&mut t, n);
    }
    link(&mut t, "r1", "r2", cap_mbps, 5);
    link(&mut t, "r2", "r3", cap_mbps, 5);
    link(&mut t, "c0", "r1", ACCESS_MBPS, 1);
    link(&mut t, "r3", "p0", ACCESS_MBPS, 1);
    flow(&mut t, "long", "c0", "p0");
    // Cross flow on the first bottleneck (r1 -> r2).
    link(&mut t, "c1", "r1", ACCESS_MBPS, 1);
    link(&mut t, "r2", "p1", ACCESS_MBPS, 1);
    flow(&mut t, "x1", "c1", "p1");
    // Two cross flows on the second (r2 -> r3).
    for i in [2, 3] {
        link(&mut t, &format!("c{i}"), "r2", ACCESS_MBPS, 1);
        link(&mut t, "r3", &format!("p{i}"), ACCESS_MBPS, 1);
        flow(&mut t, &format!("x{i}"), &format!("c{i}"), &format!("p{i}"));
    }
    SweepPoint { label, toml: t }
}

/// The testbed subset: every axis at its extremes, the smallest Data at
/// the highest capacity among them, plus mixed RTTs and two bottlenecks.
/// Fourteen points.
pub fn testbed_points() -> Vec<SweepPoint> {
    vec![
        dumbbell(1200, 50, 10, 3),
        dumbbell(1200, 50, 150, 10),
        dumbbell(1200, 2, 10, 10),
        dumbbell(1200, 2, 150, 1),
        dumbbell(1200, 10, 150, 3),
        dumbbell(4400, 10, 50, 3),
        dumbbell(4400, 10, 50, 10),
        dumbbell(4400, 2, 50, 1),
        dumbbell(8000, 2, 10, 3),
        dumbbell(8000, 2, 150, 1),
        dumbbell(8000, 50, 10, 10),
        dumbbell(8000, 50, 150, 3),
        mixed_rtt(1200, 10),
        parking_lot(4400, 10),
    ]
}

/// A point from `dumbbell,SIZE,CAP_MBPS,RTT_MS,FLOWS`,
/// `mixed-rtt,SIZE,CAP_MBPS` or `parking-lot,SIZE,CAP_MBPS`.
pub fn parse_point(spec: &str) -> Result<SweepPoint, LabError> {
    let bad = || {
        LabError::Sweep(format!(
        "bad point {spec:?}: dumbbell,SIZE,CAP_MBPS,RTT_MS,FLOWS | mixed-rtt,SIZE,CAP_MBPS | parking-lot,SIZE,CAP_MBPS"
    ))
    };
    let v: Vec<&str> = spec.split(',').map(str::trim).collect();
    let num = |i: usize| -> Result<u64, LabError> {
        v.get(i)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|x| *x > 0)
            .ok_or_else(bad)
    };
    let size = u32::try_from(num(1)?).map_err(|_| bad())?;
    if !(64..=8800).contains(&size) {
        return Err(bad());
    }
    let cap = num(2)?;
    if cap > 10_000 {
        return Err(bad());
    }
    match (v[0], v.len()) {
        ("dumbbell", 5) => {
            let (rtt, flows) = (num(3)?, num(4)?);
            if rtt > 2_000 || flows > 64 {
                return Err(bad());
            }
            Ok(dumbbell(size, cap, rtt, flows as usize))
        }
        ("mixed-rtt", 3) => Ok(mixed_rtt(size, cap)),
        ("parking-lot", 3) => Ok(parking_lot(size, cap)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_testbed_point_parses_as_a_scenario() {
        let points = testbed_points();
        assert!(points.len() >= 12);
        for p in &points {
            let sc = p.scenario().unwrap_or_else(|e| panic!("{}: {e}", p.label));
            assert_eq!(sc.name, p.label);
        }
        let sizes: Vec<u32> = points
            .iter()
            .map(|p| p.scenario().unwrap().segment_bytes)
            .collect();
        assert!(sizes.contains(&1200) && sizes.contains(&8000));
    }

    #[test]
    fn points_parse_and_bad_ones_say_why() {
        let p = parse_point("dumbbell,1200,50,10,3").unwrap();
        assert_eq!(p.label, "dumbbell-1200B-50M-10ms-3f");
        assert_eq!(p.scenario().unwrap().flows.len(), 3);
        assert_eq!(
            parse_point("parking-lot,4400,10")
                .unwrap()
                .scenario()
                .unwrap()
                .flows
                .len(),
            4
        );
        for bad in [
            "dumbbell,1200,50",
            "ring,1200,5",
            "dumbbell,0,5,5,5",
            "mixed-rtt,9000,5",
        ] {
            let e = parse_point(bad).unwrap_err().to_string();
            assert!(e.contains("bad point"), "{bad}: {e}");
        }
    }
}
