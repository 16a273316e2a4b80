//! The operating envelope's bounds, one definition for every runner: the
//! topology a bound needs (links with capacity, delay and whether they are
//! measured; flows with their links and base RTT), the shares flows are
//! owed (max-min, proportional-fair), the queue floors physics leaves (a
//! window's one Data in flight per flow, unaligned paced flows), and
//! [`check`], the list of bounds a run's figures break.
//!
//! The forwarder's virtual-time grid (`tests/cc_envelope.rs`) and
//! `icnlab sweep` (virtual time and namespaces) both judge their runs here,
//! so a point cannot pass on one side under a bound the other does not
//! apply.
//!
//! A topology is routers and links (capacity in the Data direction, one-way
//! delay), plus flows that each follow a fixed router path from their
//! consumer's access router to their producer's. Every flow has its own
//! consumer node and producer node, joined to its end routers by access
//! links of 1 ms each (the grid runs them at ten times the largest
//! bottleneck capacity), which are not links of the topology.

mod check;

pub use check::{check, max_min_deviation, Family, Figures};

/// A link between routers `a` and `b`: `a` is nearer the consumers, so
/// Data crosses it from `b` to `a`.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub capacity_bps: u64,
    pub delay_ms: u64,
    /// A link whose queue and utilisation the sweep measures.
    pub bottleneck: bool,
}

/// A flow over router `path[0]` (consumer side) … `path[last]` (producer
/// side), with extra one-way delay on its consumer's access link.
#[derive(Debug, Clone)]
pub struct Flow {
    pub path: Vec<usize>,
    pub access_delay_ms: u64,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub name: String,
    pub routers: usize,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
}

impl Topology {
    /// The link joining routers `x` and `y`, either way round.
    pub fn link_between(&self, x: usize, y: usize) -> Option<usize> {
        self.links
            .iter()
            .position(|l| (l.a, l.b) == (x, y) || (l.a, l.b) == (y, x))
    }

    /// Indices of the links flow `f` crosses.
    pub fn links_of(&self, f: &Flow) -> Vec<usize> {
        f.path
            .windows(2)
            .filter_map(|w| self.link_between(w[0], w[1]))
            .collect()
    }

    /// The base round-trip time of `f`, ms: access links, then its path.
    pub fn base_rtt_ms(&self, f: &Flow) -> u64 {
        let path: u64 = self
            .links_of(f)
            .iter()
            .map(|&l| self.links[l].delay_ms)
            .sum();
        2 * (path + 1 + 1 + f.access_delay_ms)
    }

    /// The links whose queue and utilisation are measured, in the order a
    /// run reports them ([`Figures::utilisation`]).
    pub fn bottlenecks(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.links.len()).filter(|&l| self.links[l].bottleneck)
    }

    pub fn max_capacity_bps(&self) -> u64 {
        self.links.iter().map(|l| l.capacity_bps).max().unwrap_or(0)
    }

    /// Max-min fair shares (water filling), bit/s per flow.
    pub fn max_min_shares(&self) -> Vec<f64> {
        let routes: Vec<Vec<usize>> = self.flows.iter().map(|f| self.links_of(f)).collect();
        let mut share = vec![0.0; self.flows.len()];
        let mut frozen = vec![false; self.flows.len()];
        let mut left: Vec<f64> = self.links.iter().map(|l| l.capacity_bps as f64).collect();
        while frozen.iter().any(|f| !f) {
            // The tightest link: least capacity left per unfrozen flow.
            let mut best: Option<(usize, f64)> = None;
            for (l, cap) in left.iter().enumerate() {
                let n = routes
                    .iter()
                    .zip(&frozen)
                    .filter(|(r, fz)| !**fz && r.contains(&l))
                    .count();
                if n > 0 {
                    let s = cap / n as f64;
                    if best.is_none_or(|(_, b)| s < b) {
                        best = Some((l, s));
                    }
                }
            }
            let Some((l, s)) = best else {
                break;
            };
            for (i, r) in routes.iter().enumerate() {
                if !frozen[i] && r.contains(&l) {
                    share[i] = s;
                    frozen[i] = true;
                    for &k in r {
                        left[k] -= s;
                    }
                }
            }
        }
        share
    }

    /// Proportionally fair shares (maximise Σ log x subject to the link
    /// capacities), bit/s per flow, by dual descent on link prices.
    pub fn proportional_fair_shares(&self) -> Vec<f64> {
        let routes: Vec<Vec<usize>> = self.flows.iter().map(|f| self.links_of(f)).collect();
        let caps: Vec<f64> = self.links.iter().map(|l| l.capacity_bps as f64).collect();
        let scale = caps.iter().cloned().fold(1.0, f64::max);
        let c: Vec<f64> = caps.iter().map(|x| x / scale).collect();
        let mut price = vec![1.0; c.len()];
        let mut x = vec![0.0; routes.len()];
        for _ in 0..200_000 {
            for (i, r) in routes.iter().enumerate() {
                let p: f64 = r.iter().map(|&l| price[l]).sum();
                x[i] = 1.0 / p.max(1e-9);
            }
            for (l, p) in price.iter_mut().enumerate() {
                let load: f64 = routes
                    .iter()
                    .zip(&x)
                    .filter(|(r, _)| r.contains(&l))
                    .map(|(_, v)| v)
                    .sum();
                *p = (*p * (1.0 + 0.01 * (load - c[l]) / c[l])).max(0.0);
            }
        }
        x.iter().map(|v| v * scale).collect()
    }
}

impl Topology {
    /// The least p95 queue, ms, a window scheme can keep on link `l` with
    /// Data frames of `frame_bytes`: each flow crossing it keeps at least
    /// one Data in flight (a window never goes below one Interest), so
    /// whatever of those Data the link's bandwidth-delay product cannot
    /// hold waits in its queue, and one more Data may be in service. Ten
    /// flows of 8 KB Data (8075-byte frames) on 2 Mbit/s at 10 ms RTT
    /// keep 9.7 Data (313 ms) beyond the BDP however well the law works;
    /// with the Data in service the floor is 345 ms.
    pub fn window_queue_floor_ms(&self, l: usize, frame_bytes: f64) -> f64 {
        let link = &self.links[l];
        let c = link.capacity_bps as f64;
        let on_link: Vec<&Flow> = self
            .flows
            .iter()
            .filter(|f| self.links_of(f).contains(&l))
            .collect();
        let min_rtt_ms = on_link
            .iter()
            .map(|f| self.base_rtt_ms(f))
            .min()
            .unwrap_or(0) as f64;
        let bdp_bytes = c / 8.0 * min_rtt_ms / 1e3;
        let in_flight = on_link.len() as f64 * frame_bytes;
        let waiting = (in_flight - bdp_bytes).max(0.0);
        (waiting + frame_bytes) * 8.0 / c * 1e3
    }

    /// The p95 queue, ms, that `n` flows each paced at a steady rate put on
    /// link `l` at load `rho` (its measured utilisation) when nothing
    /// aligns their phases: the N·D/D/1 queue
    /// (`cc_core::chance_queue::paced_chance_queue_data`, the same root CCC's
    /// standing-queue test allows for). Its tail is
    /// P(Q > k) ≈ exp(−2k(k + n(1 − ρ))/n) (Roberts and Virtamo, "The
    /// superposition of periodic cell arrival streams in an ATM
    /// multiplexer", IEEE Trans. Commun. 1991), so the p95 is the root of
    /// k² + k·n(1 − ρ) − n·ln(20)/2 = 0, in Data: 2.1 for three flows and
    /// 3.9 for ten at full load. Ten rcp or mircc flows on 2 Mbit/s queue
    /// 3.0 Data at p95 in the sweep; no rate law can remove that queue,
    /// only the phases could, and nothing in these schemes sets them.
    /// The queue holds whole Data, so its p95 is the least whole k the
    /// tail puts under 5 %: the root rounded up (3.6 for ten flows at
    /// ρ = 0.95 is 4 Data: the model's P(Q > 3) is 12 %).
    pub fn paced_queue_floor_ms(&self, l: usize, frame_bytes: f64, rho: f64) -> f64 {
        let c = self.links[l].capacity_bps as f64;
        let n = self
            .flows
            .iter()
            .filter(|f| self.links_of(f).contains(&l))
            .count() as f64;
        let k = cc_core::chance_queue::paced_chance_queue_data(n, rho);
        k.ceil() * frame_bytes * 8.0 / c * 1e3
    }
}

/// `n` long flows through one bottleneck of `cap_bps`; base RTT `rtt_ms`
/// (2 ms of it on the access links).
pub fn dumbbell(cap_bps: u64, rtt_ms: u64, n: usize) -> Topology {
    Topology {
        name: format!("dumbbell/{n}f"),
        routers: 2,
        links: vec![Link {
            a: 0,
            b: 1,
            capacity_bps: cap_bps,
            delay_ms: (rtt_ms / 2).saturating_sub(2).max(1),
            bottleneck: true,
        }],
        flows: (0..n)
            .map(|_| Flow {
                path: vec![0, 1],
                access_delay_ms: 0,
            })
            .collect(),
    }
}

/// Three flows of base RTT 10, 50 and 150 ms on one bottleneck.
pub fn mixed_rtt(cap_bps: u64) -> Topology {
    let mut t = dumbbell(cap_bps, 10, 3);
    t.name = "mixed-rtt/3f".into();
    for (f, extra) in t.flows.iter_mut().zip([0, 20, 70]) {
        f.access_delay_ms = extra;
    }
    t
}

/// Two bottlenecks of `cap_bps` in a row (routers 0-1-2): one long flow
/// over both, one cross flow on the first, two on the second. Max-min
/// shares C/3 (long), 2C/3, C/3, C/3.
pub fn parking_lot_2(cap_bps: u64) -> Topology {
    let link = |a, b| Link {
        a,
        b,
        capacity_bps: cap_bps,
        delay_ms: 5,
        bottleneck: true,
    };
    let flow = |path: Vec<usize>| Flow {
        path,
        access_delay_ms: 0,
    };
    Topology {
        name: "parking-lot-2".into(),
        routers: 3,
        links: vec![link(0, 1), link(1, 2)],
        flows: vec![
            flow(vec![0, 1, 2]),
            flow(vec![0, 1]),
            flow(vec![1, 2]),
            flow(vec![1, 2]),
        ],
    }
}

/// Three congested links in a row (routers 0-1-2-3) of C, C/2 and C, with
/// different delays: one flow over all three, one over the first two, and
/// one cross flow on each link. The middle link decides the long flows'
/// shares (C/6 each); the outer cross flows take what is left.
pub fn parking_lot_3(cap_bps: u64) -> Topology {
    let link = |a, b, capacity_bps, delay_ms| Link {
        a,
        b,
        capacity_bps,
        delay_ms,
        bottleneck: true,
    };
    let flow = |path: Vec<usize>| Flow {
        path,
        access_delay_ms: 0,
    };
    Topology {
        name: "parking-lot-3".into(),
        routers: 4,
        links: vec![
            link(0, 1, cap_bps, 3),
            link(1, 2, cap_bps / 2, 10),
            link(2, 3, cap_bps, 6),
        ],
        flows: vec![
            flow(vec![0, 1, 2, 3]),
            flow(vec![0, 1, 2]),
            flow(vec![0, 1]),
            flow(vec![1, 2]),
            flow(vec![2, 3]),
        ],
    }
}

#[cfg(test)]
mod tests;
