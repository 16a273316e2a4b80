//! A run directory a person reads: `summary.txt` (the table),
//! `results.json`, one CSV per time series, SVG plots and `report.html`.

mod csv;
pub mod html;
mod plot;
pub mod series;

use std::path::Path;

use serde::Serialize;

use crate::results::{table_header, table_row, RunResult};
use crate::scenario::Scenario;
use crate::LabError;
pub use html::ReportMeta;

/// `results.json`: the scenario as read, how it ran, and every run.
#[derive(Debug, Serialize)]
struct ResultsFile<'a> {
    scenario: &'a Scenario,
    mode: &'a str,
    command: &'a str,
    runs: &'a [RunResult],
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), LabError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| LabError::Write { path, source })
}

/// The table of `runs`, as printed.
pub fn summary(runs: &[RunResult]) -> String {
    let mut s = table_header();
    for r in runs {
        s.push('\n');
        s.push_str(&table_row(r));
    }
    s.push('\n');
    if let Some(d) = crate::delivery::table(runs) {
        s.push('\n');
        s.push_str(&d);
    }
    if let Some(m) = crate::multicast::table(runs) {
        s.push('\n');
        s.push_str(&m);
    }
    s
}

/// Writes the run directory of `runs` (one run, or one per scheme) into `dir`.
pub fn write_dir(dir: &Path, meta: &ReportMeta<'_>, runs: &[RunResult]) -> Result<(), LabError> {
    std::fs::create_dir_all(dir).map_err(|source| LabError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    write(dir, "summary.txt", &summary(runs))?;
    let json = serde_json::to_string_pretty(&ResultsFile {
        scenario: meta.scenario,
        mode: &meta.mode,
        command: &meta.command,
        runs,
    })
    .map_err(|e| LabError::Write {
        path: dir.join("results.json"),
        source: e.into(),
    })?;
    write(dir, "results.json", &json)?;
    let mut plots = Vec::new();
    for f in series::figures(runs) {
        write(dir, &format!("{}.csv", f.stem), &csv::csv(&f))?;
        if f.plotted {
            let svg = plot::svg(&f)?;
            write(dir, &format!("{}.svg", f.stem), &svg)?;
            plots.push((f.title, svg));
        }
    }
    write(dir, "report.html", &html::page(meta, runs, &plots))
}
