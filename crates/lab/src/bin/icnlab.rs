//! `icnlab`: run a scenario file in virtual time (`--sim`, no root) or on
//! network namespaces (`--real`, root) and write a run directory with the
//! table, results.json, CSVs, SVG plots and report.html.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use icn_lab::agree::Agreement;
use icn_lab::report::{self, ReportMeta};
use icn_lab::results::RunResult;
use icn_lab::scenario::SCHEMES;
use icn_lab::sim::SimOptions;
use icn_lab::{real, scenario_path, sim, Scenario};

#[derive(Parser)]
#[command(
    name = "icnlab",
    version,
    about = "Scenario lab of icnfwd: one scenario file, virtual time or real hosts, tables and plots"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Runs one scheme on a scenario.
    Run {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        mode: Mode,
        /// The scheme (none, pcon, rcp, mircc, ccc, wincm, qsccp).
        #[arg(long)]
        scheme: String,
    },
    /// Runs several schemes on a scenario and reports them side by side.
    Compare {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        mode: Mode,
        /// Comma-separated schemes; default: the scenario's `schemes`.
        #[arg(long, value_delimiter = ',')]
        schemes: Vec<String>,
    },
    /// Runs each scheme in virtual time and on namespaces (root) and checks
    /// they agree (utilisation within 5 points, flow rates within 10 %,
    /// p95 queue within 10 ms or 2x).
    Agree {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schemes; default: the scenario's `schemes`.
        #[arg(long, value_delimiter = ',')]
        schemes: Vec<String>,
    },
}

#[derive(Args)]
struct Mode {
    /// Virtual-time network with real engines (the default; no root).
    #[arg(long, conflicts_with = "real")]
    sim: bool,
    /// icnfwd/icnput/icncat in network namespaces (root, iproute2).
    #[arg(long)]
    real: bool,
}

#[derive(Args)]
struct Common {
    /// A scenario file, or the name of one in configs/scenarios.
    scenario: String,
    /// Seed of the virtual-time run (links' loss, consumers' choices).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run length in seconds (flow times scale with it); default: the file's `duration_s`.
    #[arg(long)]
    duration: Option<f64>,
    /// Sampling period of the virtual-time series, ms.
    #[arg(long, default_value_t = 100)]
    sample_ms: u64,
    /// Data content bytes (the file's `segment_bytes` otherwise).
    #[arg(long)]
    segment_bytes: Option<u32>,
    /// Run directory; default lab-runs/<scenario>-<scheme(s)>-<UTC time>.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `YYYYmmddTHHMMSSZ` of now (UTC), for run directory names.
fn utc_stamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// One `\r`-rewritten progress line on stderr.
fn progress_line(what: &str, t: f64, total: f64, wall: f64) {
    let mut e = std::io::stderr().lock();
    let _ = write!(
        e,
        "\r[{what}] {t:5.1} / {total:.1} s  (wall {wall:.1} s)   "
    );
    let _ = e.flush();
}

fn run_one(sc: &Scenario, scheme: &str, c: &Common, real: bool) -> Result<RunResult> {
    if !SCHEMES.contains(&scheme) {
        bail!("unknown scheme {scheme:?} (known: {SCHEMES:?})");
    }
    let duration_s = c.duration.unwrap_or(sc.duration_s);
    if !(duration_s > 0.0 && duration_s <= 600.0) {
        bail!("--duration must be in (0, 600] s");
    }
    let what = format!("{} {}/{scheme}", if real { "real" } else { "sim" }, sc.name);
    let wall = Instant::now();
    let r = if real {
        if !real::netns::available() {
            bail!("--real needs root and a working `ip netns` (iproute2); --sim runs without");
        }
        let bins = real::bins::bins().map_err(anyhow::Error::msg)?;
        // The namespace runner sleeps through its timeline; a thread tells
        // the time meanwhile.
        let done = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (done, what) = (Arc::clone(&done), what.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let t = wall.elapsed().as_secs_f64();
                    progress_line(&what, t.min(duration_s), duration_s, t);
                    std::thread::sleep(std::time::Duration::from_millis(500));
                }
            })
        };
        let r = real::run::run(sc, scheme, duration_s, &bins);
        done.store(true, Ordering::Relaxed);
        let _ = ticker.join();
        r?
    } else {
        let opts = SimOptions {
            seed: c.seed,
            duration_s,
            sample_ms: c.sample_ms,
        };
        sim::run(sc, scheme, &opts, &mut |t, total| {
            progress_line(&what, t, total, wall.elapsed().as_secs_f64());
        })?
    };
    eprintln!(
        "\r[{what}] done in {:.1} s{:30}",
        wall.elapsed().as_secs_f64(),
        ""
    );
    Ok(r)
}

/// `run` and `compare`: each scheme with one runner.
fn run_schemes(
    sc: &Scenario,
    schemes: &[String],
    c: &Common,
    real: bool,
) -> Result<Vec<RunResult>> {
    schemes
        .iter()
        .map(|s| run_one(sc, s, c, real).with_context(|| format!("{}/{s}", sc.name)))
        .collect()
}

/// `agree`: each scheme both ways; the runs (named `scheme/sim`,
/// `scheme/real`) and the agreement table.
fn agree(sc: &Scenario, schemes: &[String], c: &Common) -> Result<(Vec<RunResult>, String)> {
    let mut runs = Vec::new();
    let mut table = Agreement::header();
    for s in schemes {
        let mut sim = run_one(sc, s, c, false)?;
        let mut real = run_one(sc, s, c, true)?;
        table.push('\n');
        table.push_str(&Agreement::of(&sim, &real).row());
        sim.scheme = format!("{s}/sim");
        real.scheme = format!("{s}/real");
        runs.extend([sim, real]);
    }
    table.push('\n');
    Ok((runs, table))
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let (common, schemes, mode) = match Cli::parse().cmd {
        Cmd::Run {
            common,
            mode,
            scheme,
        } => (common, vec![scheme], Some(mode)),
        Cmd::Compare {
            common,
            mode,
            schemes,
        } => (common, schemes, Some(mode)),
        Cmd::Agree { common, schemes } => (common, schemes, None),
    };
    let mut sc = Scenario::load(&scenario_path(&common.scenario))?;
    let schemes = if schemes.is_empty() {
        sc.schemes.clone()
    } else {
        schemes
    };
    if let Some(b) = common.segment_bytes {
        sc.segment_bytes = b;
    }
    let (runs, agreement, mode) = match mode {
        Some(m) => (
            run_schemes(&sc, &schemes, &common, m.real)?,
            None,
            if m.real {
                "network namespaces (real icnfwd, icnput, icncat)".to_string()
            } else {
                format!("virtual time, real engines (seed {})", common.seed)
            },
        ),
        None => {
            let (runs, table) = agree(&sc, &schemes, &common)?;
            (
                runs,
                Some(table),
                format!("virtual time (seed {}) and network namespaces", common.seed),
            )
        }
    };
    let out = common.out.clone().unwrap_or_else(|| {
        PathBuf::from("lab-runs").join(format!("{}-{}-{}", sc.name, schemes.join("+"), utc_stamp()))
    });
    let meta = ReportMeta {
        scenario: &sc,
        mode,
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    report::write_dir(&out, &meta, &runs)?;
    print!("{}", report::summary(&runs));
    if let Some(t) = agreement {
        std::fs::write(out.join("agreement.txt"), &t)
            .with_context(|| format!("writing {}", out.display()))?;
        print!("\n{t}");
    }
    println!("report: {}", out.join("report.html").display());
    Ok(())
}
