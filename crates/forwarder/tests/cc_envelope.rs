//! The operating-envelope sweep: every scheme over a grid of Data sizes,
//! bottleneck capacities, base RTTs, flow counts, mixed RTTs and
//! multi-bottleneck paths, in the virtual-time network with the real
//! engines and icncat's scheme consumers, each point checked against the
//! bounds every user's network should get (docs/testbed.md, "Envelope").
//!
//! - CI (plain `cargo test`): the grid's corners, `ci_grid`.
//! - Full grid, table and CSV:
//!   `cargo test --release -p icn-forwarder --test cc_envelope -- --ignored --nocapture full_grid`
//!   (CSV to `$ICN_ENVELOPE_CSV`, default `target/cc_envelope.csv`;
//!   `ICN_ENVELOPE_SCHEMES=mircc,rcp` narrows the schemes).
//!
//! A failing point is a defect to find in the code, not a bound to move.

mod cc_common;
#[path = "cc_envelope/run.rs"]
mod run;
#[path = "cc_envelope/topo.rs"]
mod topo;

use std::fmt::Write as _;

use icn_forwarder::cc::CcScheme;
use run::Figures;
use topo::Topology;

/// One grid point: a topology and a Data content size.
#[derive(Debug, Clone)]
struct Point {
    label: String,
    topo: Topology,
    content_bytes: usize,
}

const SIZES: [usize; 3] = [1200, 4400, 8000];
const CAPS_MBPS: [u64; 3] = [2, 10, 50];
const RTTS_MS: [u64; 3] = [10, 50, 150];
const FLOWS: [usize; 3] = [1, 3, 10];

fn dumbbell_point(size: usize, cap: u64, rtt: u64, n: usize) -> Point {
    Point {
        label: format!("dumbbell size={size} cap={cap}M rtt={rtt}ms flows={n}"),
        topo: topo::dumbbell(cap * 1_000_000, rtt, n),
        content_bytes: size,
    }
}

fn shaped_point(size: usize, cap: u64, t: Topology) -> Point {
    Point {
        label: format!("{} size={size} cap={cap}M", t.name),
        topo: t,
        content_bytes: size,
    }
}

/// Every axis crossed on the dumbbell, plus mixed RTTs and both parking
/// lots at every size and capacity.
fn full_points() -> Vec<Point> {
    let mut v = Vec::new();
    for size in SIZES {
        for cap in CAPS_MBPS {
            for rtt in RTTS_MS {
                for n in FLOWS {
                    v.push(dumbbell_point(size, cap, rtt, n));
                }
            }
            v.push(shaped_point(size, cap, topo::mixed_rtt(cap * 1_000_000)));
            v.push(shaped_point(
                size,
                cap,
                topo::parking_lot_2(cap * 1_000_000),
            ));
            v.push(shaped_point(
                size,
                cap,
                topo::parking_lot_3(cap * 1_000_000),
            ));
        }
    }
    v
}

/// The corners CI runs: the highest packet rate (smallest Data, highest
/// capacity, most flows), the slowest feedback (largest Data, lowest
/// capacity, longest RTT), a middle point, mixed RTTs, a parking lot.
fn ci_points() -> Vec<Point> {
    vec![
        dumbbell_point(1200, 50, 10, 10),
        dumbbell_point(8000, 2, 150, 1),
        dumbbell_point(4400, 10, 50, 3),
        shaped_point(1200, 10, topo::mixed_rtt(10_000_000)),
        shaped_point(4400, 10, topo::parking_lot_2(10_000_000)),
    ]
}

fn is_rate_based(s: CcScheme) -> bool {
    matches!(
        s,
        CcScheme::Rcp | CcScheme::Mircc | CcScheme::Ccc | CcScheme::Qsccp
    )
}

/// The bounds of the envelope; every unmet one, as text.
fn check(p: &Point, scheme: CcScheme, f: &Figures) -> Vec<String> {
    let mut e = Vec::new();
    for (k, u) in f.utilisation.iter().enumerate() {
        if *u < 0.90 {
            e.push(format!("link {k} utilisation {:.1}% < 90%", u * 100.0));
        }
    }
    let single = p.topo.links.len() == 1;
    if is_rate_based(scheme) {
        // Two serialisations of the largest frame at the slowest bottleneck,
        // or what unaligned paced flows queue at the load measured
        // (`paced_queue_floor_ms`, physics like the window floor).
        let slowest = p
            .topo
            .links
            .iter()
            .map(|l| l.capacity_bps)
            .min()
            .unwrap_or(1) as f64;
        let two_data_ms = 2.0 * f.frame_bytes * 8.0 / slowest * 1e3;
        let paced_ms = bottlenecks(p)
            .zip(&f.utilisation)
            .map(|(l, rho)| p.topo.paced_queue_floor_ms(l, f.frame_bytes, *rho))
            .fold(0.0, f64::max);
        let bound = two_data_ms.max(paced_ms).max(10.0);
        if f.p95_queue_ms > bound {
            e.push(format!(
                "p95 queue {:.1} ms > {bound:.1} ms",
                f.p95_queue_ms
            ));
        }
        if f.drops > 0 {
            e.push(format!("{} congestion drops", f.drops));
        }
        if single {
            if f.jain < 0.95 {
                e.push(format!("Jain {:.3} < 0.95", f.jain));
            }
        } else {
            for (i, (r, s)) in f.flow_bps.iter().zip(p.topo.max_min_shares()).enumerate() {
                if (r - s).abs() > 0.10 * s {
                    e.push(format!(
                        "flow {i} {:.2} Mbit/s vs max-min {:.2} (> 10% off)",
                        r / 1e6,
                        s / 1e6
                    ));
                }
            }
        }
    } else {
        // 25 ms, or what the links' Data size makes the least a window can
        // queue (two Data times; one Data per flow beyond the BDP): below
        // that no window law can go (`window_queue_floor_ms`).
        let floor = (0..p.topo.links.len())
            .map(|l| {
                let c = p.topo.links[l].capacity_bps as f64;
                let two_data = 2.0 * f.frame_bytes * 8.0 / c * 1e3;
                two_data.max(p.topo.window_queue_floor_ms(l, f.frame_bytes))
            })
            .fold(0.0, f64::max);
        let bound = floor.max(25.0);
        if f.p95_queue_ms > bound {
            e.push(format!(
                "p95 queue {:.1} ms > {bound:.1} ms",
                f.p95_queue_ms
            ));
        }
        for (i, (r, s)) in f
            .flow_bps
            .iter()
            .zip(p.topo.proportional_fair_shares())
            .enumerate()
        {
            if *r < 0.75 * s {
                e.push(format!(
                    "flow {i} {:.2} Mbit/s < 0.75 x proportional-fair {:.2}",
                    r / 1e6,
                    s / 1e6
                ));
            }
        }
    }
    e
}

/// The bottleneck links, in the order of `Figures::utilisation`.
fn bottlenecks(p: &Point) -> impl Iterator<Item = usize> + '_ {
    (0..p.topo.links.len()).filter(|&l| p.topo.links[l].bottleneck)
}

/// Largest relative deviation of a flow from its max-min share.
fn max_min_deviation(p: &Point, f: &Figures) -> f64 {
    f.flow_bps
        .iter()
        .zip(p.topo.max_min_shares())
        .map(|(r, s)| (r - s).abs() / s)
        .fold(0.0, f64::max)
}

const SCHEMES: [CcScheme; 6] = [
    CcScheme::Rcp,
    CcScheme::Mircc,
    CcScheme::Ccc,
    CcScheme::Qsccp,
    CcScheme::Pcon,
    CcScheme::Wincm,
];

fn schemes() -> Vec<CcScheme> {
    match std::env::var("ICN_ENVELOPE_SCHEMES") {
        Ok(s) => s
            .split(',')
            .filter_map(|n| SCHEMES.iter().copied().find(|c| c.name() == n.trim()))
            .collect(),
        Err(_) => SCHEMES.to_vec(),
    }
}

struct Row {
    scheme: CcScheme,
    point: usize,
    figures: Figures,
    errors: Vec<String>,
}

/// Runs every scheme × point on both cores; rows in grid order.
fn sweep(points: &[Point]) -> Vec<Row> {
    let jobs: Vec<(CcScheme, usize)> = schemes()
        .into_iter()
        .flat_map(|s| (0..points.len()).map(move |p| (s, p)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let rows = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(scheme, p)) = jobs.get(i) else {
                    break;
                };
                let pt = &points[p];
                let figures = run::run(&pt.topo, scheme, pt.content_bytes, 1 + p as u64);
                let errors = check(pt, scheme, &figures);
                eprintln!(
                    "[{}/{}] {:<6} {} {}",
                    i + 1,
                    jobs.len(),
                    scheme.name(),
                    pt.label,
                    if errors.is_empty() { "ok" } else { "FAIL" }
                );
                rows.lock().unwrap_or_else(|e| e.into_inner()).push(Row {
                    scheme,
                    point: p,
                    figures,
                    errors,
                });
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_else(|e| e.into_inner());
    rows.sort_by_key(|r| (r.scheme as u32, r.point));
    rows
}

fn table(points: &[Point], rows: &[Row]) -> (String, String) {
    let mut t = String::from(
        "| scheme | point | util % (per bottleneck) | Jain | max-min dev % | p95 queue ms | drops | Nacks | verdict |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut csv = String::from(
        "scheme,point,content_bytes,util_min,jain,maxmin_dev,p95_queue_ms,drops,nacks,ok,errors\n",
    );
    for r in rows {
        let p = &points[r.point];
        let f = &r.figures;
        let utils: Vec<String> = f
            .utilisation
            .iter()
            .map(|u| format!("{:.1}", u * 100.0))
            .collect();
        let umin = f.utilisation.iter().cloned().fold(f64::INFINITY, f64::min);
        let dev = max_min_deviation(p, f);
        let verdict = if r.errors.is_empty() {
            "ok".to_string()
        } else {
            format!("FAIL: {}", r.errors.join("; "))
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {:.3} | {:.1} | {:.1} | {} | {} | {} |",
            r.scheme.name(),
            p.label,
            utils.join(" / "),
            f.jain,
            dev * 100.0,
            f.p95_queue_ms,
            f.drops,
            f.nacks,
            verdict
        );
        let _ = writeln!(
            csv,
            "{},\"{}\",{},{:.4},{:.4},{:.4},{:.2},{},{},{},\"{}\"",
            r.scheme.name(),
            p.label,
            p.content_bytes,
            umin,
            f.jain,
            dev,
            f.p95_queue_ms,
            f.drops,
            f.nacks,
            r.errors.is_empty(),
            r.errors.join("; ")
        );
    }
    (t, csv)
}

fn run_and_report(points: &[Point], csv_default: &str) {
    let rows = sweep(points);
    let (t, csv) = table(points, &rows);
    eprintln!("\n{t}");
    let path = std::env::var("ICN_ENVELOPE_CSV")
        .unwrap_or_else(|_| format!("{}/../../target/{csv_default}", env!("CARGO_MANIFEST_DIR")));
    match std::fs::write(&path, csv) {
        Ok(()) => eprintln!("CSV written to {path}"),
        Err(e) => eprintln!("could not write {path}: {e}"),
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.errors.is_empty())
        .map(|r| {
            format!(
                "{} {}: {}",
                r.scheme.name(),
                points[r.point].label,
                r.errors.join("; ")
            )
        })
        .collect();
    eprintln!(
        "{} of {} scheme-points within the bounds",
        rows.len() - failed.len(),
        rows.len()
    );
    assert!(
        failed.is_empty(),
        "outside the envelope:\n{}",
        failed.join("\n")
    );
}

/// One point with a trace: `ICN_ENVELOPE_POINT=dumbbell,8000,2,10,10`
/// (topology, content bytes, Mbit/s, RTT ms, flows; the last two only for
/// the dumbbell) and `ICN_ENVELOPE_SCHEMES=qsccp`.
#[test]
#[ignore = "one traced point: ICN_ENVELOPE_POINT=dumbbell,8000,2,10,10 ICN_ENVELOPE_SCHEMES=qsccp"]
fn one_point() {
    let spec = std::env::var("ICN_ENVELOPE_POINT").expect("ICN_ENVELOPE_POINT");
    let v: Vec<&str> = spec.split(',').collect();
    let num = |i: usize| {
        v.get(i)
            .and_then(|x| x.parse::<u64>().ok())
            .expect("number")
    };
    let (size, cap) = (num(1) as usize, num(2));
    let p = match v[0] {
        "dumbbell" => dumbbell_point(size, cap, num(3), num(4) as usize),
        "mixed-rtt" => shaped_point(size, cap, topo::mixed_rtt(cap * 1_000_000)),
        "parking-lot-2" => shaped_point(size, cap, topo::parking_lot_2(cap * 1_000_000)),
        _ => shaped_point(size, cap, topo::parking_lot_3(cap * 1_000_000)),
    };
    for s in schemes() {
        let f = run::run_traced(&p.topo, s, p.content_bytes, 1, true);
        eprintln!("{} {}: {f:?}\n  {:?}", s.name(), p.label, check(&p, s, &f));
    }
}

/// Scheme-points of [`ci_points`] outside the envelope at this commit:
/// open defects (docs/testbed.md, "Envelope", says why each fails). The
/// virtual network is deterministic, so CI fails when any other point
/// leaves the envelope (a regression) and when one of these enters it (the
/// list must then shrink).
const CI_KNOWN_OUTSIDE: &[(&str, &str)] = &[
    ("pcon", "dumbbell size=8000 cap=2M rtt=150ms flows=1"),
    ("pcon", "dumbbell size=4400 cap=10M rtt=50ms flows=3"),
    ("pcon", "parking-lot-2 size=4400 cap=10M"),
    ("wincm", "dumbbell size=8000 cap=2M rtt=150ms flows=1"),
    ("wincm", "dumbbell size=4400 cap=10M rtt=50ms flows=3"),
    ("wincm", "parking-lot-2 size=4400 cap=10M"),
];

#[test]
fn ci_grid() {
    let points = ci_points();
    let rows = sweep(&points);
    let (t, _) = table(&points, &rows);
    eprintln!("\n{t}");
    let known = |r: &Row| {
        CI_KNOWN_OUTSIDE
            .iter()
            .any(|(s, l)| *s == r.scheme.name() && *l == points[r.point].label)
    };
    let mut wrong = Vec::new();
    for r in &rows {
        let label = &points[r.point].label;
        match (r.errors.is_empty(), known(r)) {
            (false, false) => wrong.push(format!(
                "{} {label} left the envelope: {}",
                r.scheme.name(),
                r.errors.join("; ")
            )),
            (true, true) => wrong.push(format!(
                "{} {label} is inside the envelope now: drop it from CI_KNOWN_OUTSIDE",
                r.scheme.name()
            )),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
#[ignore = "full envelope grid: cargo test --release -p icn-forwarder --test cc_envelope -- --ignored --nocapture full_grid"]
fn full_grid() {
    run_and_report(&full_points(), "cc_envelope.csv");
}
