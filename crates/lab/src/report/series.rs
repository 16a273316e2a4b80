//! The time series of one or more runs, named once and shared by the CSV
//! files and the plots, so a plotted line is always a line of a CSV.

use crate::results::RunResult;

/// One line: what (`entity`: a flow, a link) under which scheme.
#[derive(Debug, Clone)]
pub struct Series {
    pub scheme: String,
    pub entity: String,
    /// (x, y) in the figure's units.
    pub points: Vec<(f64, f64)>,
}

/// A set of series with one meaning, one CSV file and maybe one plot.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem of the CSV (and of the SVG when plotted).
    pub stem: &'static str,
    pub title: &'static str,
    /// CSV column of the value (with its unit).
    pub column: &'static str,
    pub x_label: &'static str,
    pub y_label: &'static str,
    /// Plotted as a CDF of the values (x: value, y: fraction).
    pub cdf: bool,
    pub plotted: bool,
    pub series: Vec<Series>,
}

impl Figure {
    fn new(stem: &'static str, title: &'static str, column: &'static str) -> Figure {
        Figure {
            stem,
            title,
            column,
            x_label: "time (s)",
            y_label: column,
            cdf: false,
            plotted: false,
            series: Vec::new(),
        }
    }

    fn plot(mut self, y_label: &'static str) -> Figure {
        self.plotted = true;
        self.y_label = y_label;
        self
    }

    fn push(&mut self, r: &RunResult, entity: String, points: Vec<(f64, f64)>) {
        self.series.push(Series {
            scheme: r.scheme.clone(),
            entity,
            points,
        });
    }
}

fn scaled(v: &[(f64, f64)], k: f64) -> Vec<(f64, f64)> {
    v.iter().map(|&(t, x)| (t, x * k)).collect()
}

/// Every figure of `runs` (one run, or several schemes of one scenario).
pub fn figures(runs: &[RunResult]) -> Vec<Figure> {
    let mut goodput =
        Figure::new("flow_goodput", "Throughput per flow", "goodput_mbps").plot("goodput (Mbit/s)");
    let mut rtt = Figure::new("flow_rtt", "RTT samples per flow", "rtt_ms");
    let mut rtt_cdf = Figure::new("rtt_cdf", "CDF of RTT samples", "rtt_ms").plot("fraction");
    rtt_cdf.cdf = true;
    rtt_cdf.x_label = "RTT (ms)";
    let mut send = Figure::new(
        "flow_send_rate",
        "Consumer sending rate (rate laws)",
        "interests_per_s",
    );
    let mut queue = Figure::new("link_queue", "Queueing delay on measured links", "queue_ms")
        .plot("queue (ms)");
    let mut util = Figure::new("link_utilisation", "Link utilisation", "utilisation");
    let mut rates = Figure::new(
        "link_rates",
        "Stamped and target rates on measured links",
        "rate_mbps",
    )
    .plot("rate (Mbit/s)");
    let mut drops = Figure::new(
        "link_drops",
        "Congestion drops at the sending node",
        "drops",
    );
    let mut delivery = Figure::new(
        "delivery",
        "CDF of sized flows' delivery times (completed flows)",
        "delivery_s",
    )
    .plot("fraction");
    delivery.cdf = true;
    delivery.x_label = "delivery time (s)";
    let mut mc_goodput = Figure::new(
        "mcast_goodput",
        "Multicast goodput per receiver",
        "goodput_mbps",
    )
    .plot("goodput (Mbit/s)");
    let mut mc_source = Figure::new(
        "mcast_source_rate",
        "Multicast source rate (Algorithm 1's choice, and sent)",
        "rate_mbps",
    )
    .plot("rate (Mbit/s)");
    for r in runs {
        for g in &r.groups {
            mc_source.push(
                r,
                format!("{} chosen", g.name),
                scaled(&g.source_rates, 1e-6),
            );
            mc_source.push(r, format!("{} sent", g.name), scaled(&g.source_sent, 1e-6));
            for x in &g.receivers {
                let name = format!("{}@{}", g.name, x.node);
                mc_goodput.push(r, name, scaled(&x.goodput, 1e-6));
            }
        }
        // x: the flow's start, y: its delivery time.
        let done: Vec<(f64, f64)> = r
            .flows
            .iter()
            .filter_map(|f| Some((f.start_s, f.delivery_s?)))
            .collect();
        if !done.is_empty() {
            delivery.push(r, "flows".to_string(), done);
        }
        for f in &r.flows {
            goodput.push(r, f.name.clone(), scaled(&f.rates, 1e-6));
            rtt.push(r, f.name.clone(), f.rtt_series_ms.clone());
            rtt_cdf.push(r, f.name.clone(), f.rtt_series_ms.clone());
            if !f.send_rates.is_empty() {
                send.push(r, f.name.clone(), f.send_rates.clone());
            }
        }
        for l in &r.links {
            let name = format!("{}->{}", l.from, l.to);
            queue.push(r, name.clone(), l.queue_series_ms.clone());
            util.push(r, name.clone(), l.utilisation_series.clone());
            drops.push(r, name.clone(), l.drops_series.clone());
            if !l.stamped_rates.is_empty() {
                rates.push(r, format!("{name} stamped"), scaled(&l.stamped_rates, 1e-6));
            }
            if !l.target_rates.is_empty() {
                rates.push(r, format!("{name} target"), scaled(&l.target_rates, 1e-6));
            }
        }
    }
    let mut all = vec![goodput, queue, rates, rtt_cdf, rtt, send, util, drops];
    if !delivery.series.is_empty() {
        all.insert(0, delivery);
    }
    if !mc_goodput.series.is_empty() {
        all.insert(0, mc_source);
        all.insert(0, mc_goodput);
    }
    all
}
