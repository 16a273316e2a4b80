//! CSV files of the time series: one long-format file per figure
//! (`scheme,entity,t_s,<value>`), which spreadsheet and pandas users pivot.

use std::fmt::Write as _;

use super::series::Figure;

/// The CSV text of one figure.
pub fn csv(f: &Figure) -> String {
    let mut s = format!("scheme,entity,t_s,{}\n", f.column);
    for l in &f.series {
        for (t, v) in &l.points {
            let _ = writeln!(s, "{},{},{t:.3},{v}", l.scheme, l.entity);
        }
    }
    s
}
