//! The scenario as a graph: links, hop distances, path delays and the
//! static routes both runners install.

use std::collections::{BTreeMap, VecDeque};

use super::{Flow, Link, Route, Scenario};

impl Scenario {
    /// The link between two nodes.
    pub fn link(&self, a: &str, b: &str) -> Option<&Link> {
        self.links
            .iter()
            .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
    }

    pub fn neighbours<'a>(&'a self, n: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.links.iter().filter_map(move |l| {
            if l.a == n {
                Some(l.b.as_str())
            } else if l.b == n {
                Some(l.a.as_str())
            } else {
                None
            }
        })
    }

    /// Hop distance of every node to `dst` (BFS).
    pub fn distances_to(&self, dst: &str) -> BTreeMap<String, u32> {
        let mut d = BTreeMap::new();
        d.insert(dst.to_string(), 0);
        let mut q = VecDeque::from([dst.to_string()]);
        while let Some(n) = q.pop_front() {
            let dn = d[&n];
            for m in self.neighbours(&n) {
                if !d.contains_key(m) {
                    d.insert(m.to_string(), dn + 1);
                    q.push_back(m.to_string());
                }
            }
        }
        d
    }

    /// One-way propagation delay of a fewest-hops path from `from` to `to`
    /// (the smallest among equal-hop paths), ms.
    pub fn path_delay_ms(&self, from: &str, to: &str) -> Option<f64> {
        let d = self.distances_to(to);
        let mut best: BTreeMap<String, f64> = BTreeMap::new();
        best.insert(to.to_string(), 0.0);
        let mut order: Vec<(&String, &u32)> = d.iter().collect();
        order.sort_by_key(|(_, h)| **h);
        for (n, &h) in order {
            if h == 0 {
                continue;
            }
            let via = self
                .neighbours(n)
                .filter(|m| d.get(*m) == Some(&(h - 1)))
                .filter_map(|m| Some(best.get(m)? + self.link(n, m)?.delay_ms))
                .fold(f64::INFINITY, f64::min);
            best.insert(n.clone(), via);
        }
        best.get(from).copied().filter(|x| x.is_finite())
    }

    /// Hops from `from` to `to`, if connected.
    pub fn hops(&self, from: &str, to: &str) -> Option<u32> {
        self.distances_to(to).get(from).copied()
    }

    /// Static routes towards a producer: at every node, each neighbour one
    /// hop closer to `producer` (so equal-length paths are all offered, and
    /// the strategy picks; only the first with `single_path`), with cost
    /// 10 × the hops left.
    pub fn routes_towards(&self, producer: &str) -> Vec<(String, String, u64)> {
        let d = self.distances_to(producer);
        let mut out = Vec::new();
        for n in &self.nodes {
            let Some(&dn) = d.get(&n.name) else { continue };
            let mut next: Vec<&str> = self
                .neighbours(&n.name)
                .filter(|m| d.get(*m).is_some_and(|&dm| dm + 1 == dn))
                .collect();
            if self.single_path {
                // The first in file order: deterministic, and the same in
                // both runners.
                next.truncate(1);
            }
            for m in next {
                out.push((n.name.clone(), m.to_string(), 10 * u64::from(dn)));
            }
        }
        out
    }

    /// The routes of one flow, (node, next hop, cost): the file's
    /// `[[route]]`s for it, and the computed ones ([`routes_towards`]) at
    /// every node the file gives none for it.
    ///
    /// [`routes_towards`]: Scenario::routes_towards
    pub fn routes_for(&self, flow: &Flow) -> Vec<(String, String, u64)> {
        let given: Vec<&Route> = self.routes.iter().filter(|r| r.flow == flow.name).collect();
        let mut out: Vec<(String, String, u64)> = self
            .routes_towards(&flow.producer)
            .into_iter()
            .filter(|(n, _, _)| !given.iter().any(|r| &r.node == n))
            .collect();
        out.extend(
            given
                .iter()
                .map(|r| (r.node.clone(), r.via.clone(), r.cost)),
        );
        out
    }
}
