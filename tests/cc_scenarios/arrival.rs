//! Scenario 2, a flow arrival: each scheme's shares afterwards, and how
//! MIRCC's stamped rate reaches the new fair share against RCP's.

use icn_lab::results::RunResult;
use icn_sim::response::{Blip, Grid, Response};

use super::checks::{check_flows_ran, mbps};

/// Scenario 2 for one scheme: the four flows end up sharing fairly.
/// (Settling is compared between the schemes, below.)
pub fn check_arrival(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    if r.jain < 0.90 {
        e.push(format!(
            "{}: Jain {:.3} < 0.90 after the arrival",
            r.scheme, r.jain
        ));
    }
    e
}

/// Mean of a flow's windowed rates after `from` s (0 when there are none).
fn mean_rate_after(rates: &[(f64, f64)], from: f64) -> f64 {
    let last: Vec<f64> = rates
        .iter()
        .filter(|(t, _)| *t > from)
        .map(|x| x.1)
        .collect();
    last.iter().sum::<f64>() / last.len().max(1) as f64
}

/// The last flow's start (the arrival; 0 when every flow starts at once).
pub fn join_time(r: &RunResult) -> f64 {
    r.flows.iter().map(|f| f.start_s).fold(0.0, f64::max)
}

/// The arrival's time span: the last join to the first flow stop.
pub fn arrival_span(r: &RunResult) -> (f64, f64) {
    let end = r
        .flows
        .iter()
        .map(|f| f.stop_s)
        .fold(f64::INFINITY, f64::min);
    (join_time(r), end)
}

/// Prints each flow's windowed rate (Mbit/s) from the join on, with the
/// time after the join at which its peak above its final rate falls.
pub fn show_arrival(r: &RunResult) {
    let tj = join_time(r);
    let tail = r.duration_s - (r.duration_s - tj) / 4.0;
    for f in &r.flows {
        let fin = mean_rate_after(&f.rates, tail);
        let after: Vec<(f64, f64)> = f.rates.iter().copied().filter(|(t, _)| *t > tj).collect();
        let peak = after
            .iter()
            .map(|&(t, x)| (x / fin.max(1.0) - 1.0, t - tj))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        let first: Vec<String> = after
            .iter()
            .take(8)
            .map(|(_, x)| format!("{:.2}", x / 1e6))
            .collect();
        // Windows later than 2 s after the join outside ±20 % of the
        // equal share (what keeps a flow from counting as settled).
        let share =
            r.links.first().map_or(0.0, |l| l.capacity_bps as f64) / r.flows.len().max(1) as f64;
        let late: Vec<String> = after
            .iter()
            .filter(|(t, x)| *t > tj + 2.0 && (x - share).abs() > 0.2 * share)
            .map(|(t, x)| format!("{:.2}@+{:.1}", x / 1e6, t - tj))
            .collect();
        println!(
            "  {} {}: final {:.2} Mbit/s, peak +{:.0}% at +{:.1} s; first 4 s: {}; late out of band: [{}] (last window ends +{:.1} s)",
            r.scheme,
            f.name,
            fin / 1e6,
            peak.0 * 100.0,
            peak.1,
            first.join(" "),
            late.join(" "),
            after.last().map_or(0.0, |x| x.0 - tj)
        );
    }
}

/// Overshoot of the joining flows as a group: the highest 0.5 s window of
/// their summed rate after the join, above the sum of their final rates
/// (means over the last quarter of the run), relative; at least 0.
pub fn joiners_overshoot(r: &RunResult) -> Option<f64> {
    let tj = join_time(r);
    let tail = r.duration_s - (r.duration_s - tj) / 4.0;
    let joiners: Vec<_> = r.flows.iter().filter(|f| f.start_s > 1.0).collect();
    let mut finals = 0.0;
    let mut series: Vec<Vec<f64>> = Vec::new();
    for f in &joiners {
        finals += mean_rate_after(&f.rates, tail);
        series.push(
            f.rates
                .iter()
                .filter(|(t, _)| *t > tj)
                .map(|x| x.1)
                .collect(),
        );
    }
    // Windows are per flow (from its own start); align them on the last.
    let n = series.iter().map(Vec::len).min()?;
    if finals.is_nan() || finals <= 0.0 {
        return None;
    }
    let peak = (0..n)
        .map(|k| series.iter().map(|s| s[s.len() - n + k]).sum::<f64>())
        .fold(0.0, f64::max);
    Some((peak / finals - 1.0).max(0.0))
}

/// Band of a [`Response`]'s settling, relative to the final value.
pub const RESPONSE_BAND: f64 = 0.10;
/// Excursions this short and this shallow do not unsettle a rate: one
/// control period (T = 100 ms, one face-state sample) plus sampling
/// jitter, up to twice the band. On the testbed a consumer that stalls for
/// a moment (12 processes on 2 cores) sends a period's Interests late;
/// MIRCC's Rp, whose excess term follows each period's input (eqs. 4-5,
/// halved by the EWMA), answers with a 10-13 % step (measured) and is back
/// the next. RCP's R swings by single periods too, but 23-62 % below the
/// share (6 runs with a busy core, session 14): its law, not a stall. With
/// length alone as the allowance, such a swing passed as a blip, and RCP
/// "settled" at its first crossing of the band on the way down (0.48 s,
/// a tie with MIRCC in one of six runs) while it strayed for another 8-15
/// s. Overshoot and undershoot still count every excursion.
pub const RESPONSE_BLIP: Blip = Blip {
    max_s: 0.15,
    max_dev: 2.0 * RESPONSE_BAND,
};

/// [`Response`] of step series ((time s, value) at each change or sample)
/// on a 10 ms grid from `from` (the last join) to `to`; a series' final
/// value is its mean over the last quarter of that.
pub fn response(series: &[&[(f64, f64)]], from: f64, to: f64) -> Option<Response> {
    let g = grid(series, from, to)?;
    Some(g.response(&g.tail_means(0.25), RESPONSE_BAND, RESPONSE_BLIP))
}

/// Step series on a 10 ms grid over `[from, to)`; `None` for a span of
/// a second or less.
pub fn grid(series: &[&[(f64, f64)]], from: f64, to: f64) -> Option<Grid> {
    if to <= from + 1.0 {
        return None;
    }
    Grid::from_steps(series, from, to, 0.01)
}

pub fn show_response(x: &Response) -> String {
    let s = |x: Option<f64>| x.map_or("never".to_owned(), |s| format!("{s:.2} s"));
    format!(
        "settling {} (±{:.0} %; {} counting blips), overshoot {:.1} %, undershoot {:.1} %",
        s(x.settling_s),
        RESPONSE_BAND * 100.0,
        s(x.settling_strict_s),
        x.over * 100.0,
        x.under * 100.0
    )
}

/// The target utilisation η of RCP (eq. 1) and MIRCC (eq. 3): both
/// schemes' default, what they share among the flows.
pub const TARGET_UTILISATION: f64 = 0.95;

/// The new fair share each flow is told after the arrival: η·C/N.
pub fn fair_share_bps(r: &RunResult) -> f64 {
    TARGET_UTILISATION * r.bottleneck().capacity_bps as f64 / r.flows.len().max(1) as f64
}

/// [`Response`] of the bottleneck's stamped rate (RCP R, MIRCC Rp: eq. 1
/// against eqs. 3-5, as icnfwd's face state reports it every 100 ms)
/// towards the new fair share, from the join.
pub fn fair_share_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    let g = grid(&[r.bottleneck().stamped_rates.as_slice()], tj, end)?;
    Some(g.response(&[fair_share_bps(r)], RESPONSE_BAND, RESPONSE_BLIP))
}

/// [`Response`] of the same stamped rate towards its own final value (mean
/// over the last quarter): the dynamics alone, whatever rate a scheme ends
/// at.
pub fn stamped_rate_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    response(&[r.bottleneck().stamped_rates.as_slice()], tj, end)
}

/// [`Response`] of the consumers' sending rates (their `--log-cwnd`: R, or
/// Rp + Rs, at every change), towards their final values.
pub fn send_rate_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    let s: Vec<&[(f64, f64)]> = r.flows.iter().map(|f| f.send_rates.as_slice()).collect();
    response(&s, tj, end)
}

/// Scenario 2: MIRCC's stamped rate reaches the new fair share (η·C/N,
/// ±10 %) within 1 s of the join and strays from it less than RCP's once
/// it has reacted. Both settling times are printed; their order is not
/// asserted here (below).
///
/// Measured on the rate the bottleneck stamps (RCP's R against MIRCC's Rp,
/// what MIRCC Fig. 3 plots and what each consumer applies), read from
/// icnfwd's face state every 100 ms. Settling leaves out one control
/// period's blips after the first return ([`RESPONSE_BLIP`]); the
/// excursion counts every sample from the reaction on ([`Response`]).
///
/// Why the order of the settling times is not a testbed check: RCP's
/// first cut after the join depends on how the joiners' Interests fall
/// into its period. When the three joiners start together (MIRCC Fig. 3,
/// the virtual-time network) y jumps to four times R, R collapses to
/// 0.65-0.78 Mbit/s (73 % under the share) and climbs back for 1.2 s,
/// while MIRCC's EWMA is in band after 0.5 s. Real icncat processes start
/// over tens of milliseconds (exec, the RDR round trip, a busy core): in
/// virtual time, the same scenario with joiners 50 ms apart cuts R only
/// to 2.02 Mbit/s and RCP is in band before MIRCC (about 0.2 s against
/// 0.5 s); 20 ms apart it still collapses. On the testbed, over 13 runs
/// with a busy core (sessions 20-21), RCP settled in 0.18-1.48 s and
/// MIRCC in 0.38-0.58 s; RCP was in band first in 2 of them (0.18 against
/// 0.57 s, 0.48 against 0.58 s), which failed the order once asserted.
/// The virtual-time test (`cc_arrival`) asserts the order under the
/// paper's simultaneous join; here what holds in every
/// run is asserted: MIRCC within 1 s, and a smaller excursion (MIRCC's
/// worst 5.6-7.8 %, RCP's 13.0-75.0 % in the 8 runs of session 21).
///
/// Goodput in 0.5 s windows (the harness's `settle_s` and `over%`, and
/// [`joiners_overshoot`]) and the consumers' sending rates are printed too.
pub fn check_arrival_pair(mircc: &RunResult, rcp: &RunResult) -> Vec<String> {
    show_arrival(mircc);
    show_arrival(rcp);
    let show = |x: Option<Response>| x.map_or("no series".to_owned(), |x| show_response(&x));
    let towards_share = [fair_share_response(mircc), fair_share_response(rcp)];
    for (r, st) in [mircc, rcp].into_iter().zip(towards_share) {
        println!(
            "  {} stamped rate, towards the fair share {:.2} Mbit/s: {}",
            r.scheme,
            mbps(fair_share_bps(r)),
            show(st)
        );
        println!(
            "  {} stamped rate, towards its own final value: {}",
            r.scheme,
            show(stamped_rate_response(r))
        );
        println!(
            "  {} sending rates, towards their final values: {}",
            r.scheme,
            show(send_rate_response(r))
        );
    }
    let joiners = |r: &RunResult| joiners_overshoot(r).map_or(f64::NAN, |x| x * 100.0);
    println!(
        "joiners' goodput overshoot: mircc {:.1}%, rcp {:.1}%",
        joiners(mircc),
        joiners(rcp)
    );
    let [Some(m), Some(r)] = towards_share else {
        return vec!["no stamped-rate series from the bottleneck".into()];
    };
    let mut e = Vec::new();
    let inf = f64::INFINITY;
    let (sm, sr) = (m.settling_s.unwrap_or(inf), r.settling_s.unwrap_or(inf));
    println!("settling towards the fair share: mircc {sm:.2} s, rcp {sr:.2} s");
    // MIRCC's EWMA takes six periods from the old rate: in band within 1 s.
    if sm > 1.0 {
        e.push(format!(
            "mircc's Rp reaches the fair share {sm:.2} s after the join, expected within 1 s"
        ));
    }
    if m.worst() >= r.worst() {
        e.push(format!(
            "mircc's Rp strays {:.1} % from the fair share, not less than rcp's R ({:.1} %)",
            m.worst() * 100.0,
            r.worst() * 100.0
        ));
    }
    e
}
