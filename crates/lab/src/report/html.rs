//! The self-contained `report.html`: the table and every plot inline
//! (no external file, script or font), so it can be mailed or archived.

use std::fmt::Write as _;

use crate::results::{table_cells, table_suffix, RunResult, TABLE_COLUMNS};
use crate::scenario::Scenario;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The summary table as an HTML `<table>`.
pub fn table(runs: &[RunResult]) -> String {
    let mut s = String::from("<table>\n<tr>");
    for c in TABLE_COLUMNS {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>\n");
    for r in runs {
        s.push_str("<tr>");
        let cells = table_cells(r);
        let last = cells.len() - 1;
        for (i, c) in cells.iter().enumerate() {
            let text = if i == last {
                format!("{c}{}", table_suffix(r))
            } else {
                c.clone()
            };
            let _ = write!(s, "<td>{}</td>", esc(&text));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

/// What the report says about how the runs were made.
pub struct ReportMeta<'a> {
    pub scenario: &'a Scenario,
    /// "virtual time (seed 1)" or "network namespaces".
    pub mode: String,
    /// The command line that made it.
    pub command: String,
}

/// The whole page: heading, table, then (title, SVG text) per plot.
pub fn page(meta: &ReportMeta<'_>, runs: &[RunResult], plots: &[(&str, String)]) -> String {
    let sc = meta.scenario;
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>icnlab: {name}</title>\n\
         <style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #bbb;padding:3px 8px;\
         text-align:right}}th{{background:#eee}}figure{{margin:1.5em 0}}</style></head><body>\n\
         <h1>{name}: {title}</h1>\n<p>Runner: {mode}. Command: <code>{cmd}</code>.</p>\n\
         <h2>Summary</h2>\n",
        name = esc(&sc.name),
        title = esc(&sc.title),
        mode = esc(&meta.mode),
        cmd = esc(&meta.command),
    );
    s.push_str(&table(runs));
    if let Some(d) = crate::delivery::table(runs) {
        let _ = write!(s, "<h2>Delivery times</h2>\n<pre>{}</pre>\n", esc(&d));
    }
    if let Some(m) = crate::multicast::table(runs) {
        let _ = write!(s, "<h2>Multicast groups</h2>\n<pre>{}</pre>\n", esc(&m));
    }
    s.push_str(
        "<p>util%: bottleneck (first measured link) utilisation over the last half; \
         p95q_ms: its 95th-percentile queueing delay (Data backlog plus held Interests); \
         rttq_ms: worst flow's p95 RTT above its minimum; flows: each flow's rate over \
         the last half.</p>\n<h2>Plots</h2>\n",
    );
    for (title, svg) in plots {
        // The inline SVG without its XML declaration.
        let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
        let _ = writeln!(
            s,
            "<figure>{body}<figcaption>{}</figcaption></figure>",
            esc(title)
        );
    }
    s.push_str("</body></html>\n");
    s
}
