//! `icnlab`: run a scenario file in virtual time (`--sim`, no root) or on
//! network namespaces (`--real`, root) and write a run directory with the
//! table, results.json, CSVs, SVG plots and report.html.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use cc_core::Profile;
use clap::{Args, Parser, Subcommand};
use icn_lab::agree::Agreement;
use icn_lab::bounds;
use icn_lab::report::{self, ReportMeta};
use icn_lab::results::RunResult;
use icn_lab::scenario::SCHEMES;
use icn_lab::sim::SimOptions;
use icn_lab::sweep::SweepPoint;
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
    /// Runs generated scenarios over the operating envelope (Data size,
    /// capacity, RTT, flows, mixed RTTs, two bottlenecks) under each scheme:
    /// in virtual time, on namespaces, or both with `--agree`.
    Sweep {
        /// Points: `dumbbell,SIZE,CAP_MBPS,RTT_MS,FLOWS`,
        /// `mixed-rtt,SIZE,CAP_MBPS` or `parking-lot,SIZE,CAP_MBPS`
        /// (repeatable); default: the testbed set (14 points covering each
        /// axis's extremes).
        #[arg(long = "point")]
        points: Vec<String>,
        /// Comma-separated schemes; default: pcon, rcp, mircc, ccc, wincm, qsccp.
        #[arg(long, value_delimiter = ',')]
        schemes: Vec<String>,
        #[command(flatten)]
        mode: Mode,
        /// Both runners at every point, and a check that they agree
        /// (exit status 1 when a scheme-point does not).
        #[arg(long, conflicts_with_all = ["sim", "real"])]
        agree: bool,
        /// Exit status 1 when a namespace run (with `--real` or `--agree`;
        /// the virtual-time run with `--sim`) breaks an envelope bound.
        /// Every run's verdict is printed and written either way.
        #[arg(long)]
        bounds: bool,
        /// Seed of the virtual-time runs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Run length per scheme-point in seconds (default 30).
        #[arg(long)]
        duration: Option<f64>,
        /// Sweep directory; default lab-runs/sweep-<UTC time>.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Parameters of every scheme: `tuned` or `paper`.
        #[arg(long, default_value = "tuned")]
        profile: Profile,
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

#[derive(Args, Clone)]
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
    /// Parameters of every scheme's forwarders and consumers: `tuned`
    /// (icnfwd's defaults) or `paper` (docs/deviations.md).
    #[arg(long, default_value = "tuned")]
    profile: Profile,
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
    let what = format!(
        "{} {}/{scheme} ({})",
        if real { "real" } else { "sim" },
        sc.name,
        sc.profile
    );
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

/// A sweep's failed runs: `(scheme/runner, error)`. A sweep records them
/// and goes on (one namespace run that failed to start used to end a
/// 40-minute sweep at its seventh point); the exit status reports them.
type RunErrors = Vec<(String, String)>;

/// `run` and `compare`: each scheme with one runner. With `errors`, a
/// scheme whose run failed is recorded there and left out (a sweep goes
/// on), else the error ends the command.
fn run_schemes(
    sc: &Scenario,
    schemes: &[String],
    c: &Common,
    real: bool,
    mut errors: Option<&mut RunErrors>,
) -> Result<Vec<RunResult>> {
    let runner = if real { "real" } else { "sim" };
    let mut runs = Vec::new();
    for s in schemes {
        match (run_one(sc, s, c, real), errors.as_deref_mut()) {
            (Ok(r), _) => runs.push(r),
            (Err(e), Some(errors)) => errors.push((format!("{s}/{runner}"), format!("{e:#}"))),
            (Err(e), None) => return Err(e.context(format!("{}/{s}", sc.name))),
        }
    }
    Ok(runs)
}

/// `agree`: each scheme both ways; the runs (named `scheme/sim`,
/// `scheme/real`) and the agreement table.
fn agree(sc: &Scenario, schemes: &[String], c: &Common) -> Result<(Vec<RunResult>, String)> {
    agree_inner(sc, schemes, c, None)
}

/// [`agree`]; with `errors`, a scheme whose run failed is recorded there
/// and left out (a sweep goes on), else the error ends the command.
fn agree_inner(
    sc: &Scenario,
    schemes: &[String],
    c: &Common,
    mut errors: Option<&mut RunErrors>,
) -> Result<(Vec<RunResult>, String)> {
    let mut runs = Vec::new();
    let mut table = Agreement::header();
    for s in schemes {
        let pair = run_one(sc, s, c, false)
            .map_err(|e| (format!("{s}/sim"), e))
            .and_then(|sim| {
                run_one(sc, s, c, true)
                    .map(|real| (sim, real))
                    .map_err(|e| (format!("{s}/real"), e))
            });
        let (mut sim, mut real) = match (pair, errors.as_deref_mut()) {
            (Ok(p), _) => p,
            (Err((which, e)), Some(errors)) => {
                errors.push((which, format!("{e:#}")));
                continue;
            }
            (Err((_, e)), None) => return Err(e),
        };
        table.push('\n');
        table.push_str(&Agreement::of(&sim, &real).row());
        sim.scheme = format!("{s}/sim");
        real.scheme = format!("{s}/real");
        runs.extend([sim, real]);
    }
    table.push('\n');
    Ok((runs, table))
}

/// What a sweep found: whether every scheme-point agreed (always true
/// without `--agree`) and whether every run the exit status judges held
/// the envelope's bounds.
struct SweepOutcome {
    all_agree: bool,
    all_within_bounds: bool,
    /// Runs that failed (recorded in sweep.txt, sweep.csv and the point's
    /// `errors.txt`).
    failed_runs: usize,
}

/// `sweep`: every point under every scheme; one report directory per
/// point, `sweep.txt` and `sweep.csv` over all, each run held to the
/// envelope's bounds (`icn_lab::bounds`).
fn sweep(
    points: Vec<SweepPoint>,
    schemes: &[String],
    c: &Common,
    real: bool,
    agree_both: bool,
    out: &std::path::Path,
) -> Result<SweepOutcome> {
    let mut text = String::new();
    let mut csv = String::from(
        "point,scheme,runner,utilisation_pct,jain,p95_queue_ms,drops,agrees,bounds_ok,bounds\n",
    );
    let mut all_agree = true;
    let mut all_within_bounds = true;
    let mut failed_runs = 0;
    for (k, p) in points.iter().enumerate() {
        eprintln!("[sweep] point {}/{}: {}", k + 1, points.len(), p.label);
        let mut sc = p.scenario()?;
        sc.profile = c.profile;
        let topo = bounds::topology(&sc)?;
        let c = Common {
            scenario: p.label.clone(),
            ..c.clone()
        };
        let mut errors = RunErrors::new();
        let (runs, table) = if agree_both {
            let (runs, table) = agree_inner(&sc, schemes, &c, Some(&mut errors))?;
            (runs, Some(table))
        } else {
            (
                run_schemes(&sc, schemes, &c, real, Some(&mut errors))?,
                None,
            )
        };
        let dir = out.join(&p.label);
        let meta = ReportMeta {
            scenario: &sc,
            mode: format!("sweep point {}", p.label),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        };
        report::write_dir(&dir, &meta, &runs)?;
        std::fs::write(dir.join("scenario.toml"), &p.toml)
            .with_context(|| format!("writing {}", dir.display()))?;
        let _ = writeln!(text, "## {}\n\n{}", p.label, report::summary(&runs));
        let verdicts: Vec<(String, bool)> = if agree_both {
            runs.chunks(2)
                .map(|w| (w[0].scheme.clone(), Agreement::of(&w[0], &w[1]).ok()))
                .collect()
        } else {
            Vec::new()
        };
        let mut bounds_table = format!("{:<7} {:<5} bounds\n", "scheme", "run");
        for r in &runs {
            let (scheme, runner) = r
                .scheme
                .split_once('/')
                .unwrap_or((r.scheme.as_str(), if real { "real" } else { "sim" }));
            let agrees = verdicts
                .iter()
                .find(|(s, _)| s.split('/').next() == Some(scheme))
                .map_or(String::new(), |(_, ok)| ok.to_string());
            let v = bounds::check(&sc, &topo, r);
            let within = v.as_ref().is_none_or(Vec::is_empty);
            // The exit status judges the namespace runs when there are any.
            if !within && (runner == "real" || !(real || agree_both)) {
                all_within_bounds = false;
            }
            let verdict = bounds::verdict_text(&v);
            let _ = writeln!(bounds_table, "{scheme:<7} {runner:<5} {verdict}");
            let b = r.bottleneck();
            let _ = writeln!(
                csv,
                "{},{scheme},{runner},{:.1},{:.3},{:.1},{},{agrees},{},\"{verdict}\"",
                p.label,
                b.utilisation * 100.0,
                r.jain,
                b.queue_p95_ms,
                r.drops,
                v.as_ref()
                    .map_or(String::new(), |e| e.is_empty().to_string()),
            );
        }
        let _ = writeln!(text, "{bounds_table}");
        std::fs::write(dir.join("bounds.txt"), &bounds_table)
            .with_context(|| format!("writing {}", dir.display()))?;
        if !errors.is_empty() {
            failed_runs += errors.len();
            let mut e_text = String::new();
            for (which, e) in &errors {
                eprintln!("[sweep] {}: {which} failed: {e}", p.label);
                let _ = writeln!(e_text, "{which}: {e}");
                let (scheme, runner) = which.split_once('/').unwrap_or((which, ""));
                let first = e.lines().next().unwrap_or("").replace('"', "'");
                let _ = writeln!(
                    csv,
                    "{},{scheme},{runner},,,,,,,\"run failed: {first}\"",
                    p.label
                );
            }
            let _ = writeln!(text, "run failures:\n{e_text}");
            std::fs::write(dir.join("errors.txt"), &e_text)
                .with_context(|| format!("writing {}", dir.display()))?;
        }
        if let Some(t) = table {
            all_agree &= verdicts.iter().all(|(_, ok)| *ok);
            let _ = writeln!(text, "{t}");
            std::fs::write(dir.join("agreement.txt"), &t)
                .with_context(|| format!("writing {}", dir.display()))?;
        }
    }
    std::fs::write(out.join("sweep.txt"), &text)
        .with_context(|| format!("writing {}", out.display()))?;
    std::fs::write(out.join("sweep.csv"), &csv)
        .with_context(|| format!("writing {}", out.display()))?;
    print!("{text}");
    println!("sweep: {}", out.display());
    Ok(SweepOutcome {
        all_agree,
        all_within_bounds,
        failed_runs,
    })
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cmd = Cli::parse().cmd;
    if let Cmd::Sweep {
        points,
        schemes,
        mode,
        agree,
        bounds: bounds_exit,
        seed,
        duration,
        out,
        profile,
    } = cmd
    {
        let points = if points.is_empty() {
            icn_lab::sweep::testbed_points()
        } else {
            points
                .iter()
                .map(|s| icn_lab::sweep::parse_point(s))
                .collect::<Result<Vec<_>, _>>()?
        };
        let schemes = if schemes.is_empty() {
            SCHEMES
                .iter()
                .filter(|s| **s != "none")
                .map(|s| s.to_string())
                .collect()
        } else {
            schemes
        };
        let c = Common {
            scenario: String::new(),
            seed,
            duration,
            sample_ms: 100,
            segment_bytes: None,
            out: None,
            profile,
        };
        let out =
            out.unwrap_or_else(|| PathBuf::from("lab-runs").join(format!("sweep-{}", utc_stamp())));
        let o = sweep(points, &schemes, &c, mode.real, agree, &out)?;
        if o.failed_runs > 0 {
            bail!(
                "{} runs failed (errors.txt in their point's directory, sweep.txt)",
                o.failed_runs
            );
        }
        match (o.all_agree, !bounds_exit || o.all_within_bounds) {
            (true, true) => return Ok(()),
            (false, true) => bail!("some scheme-points did not agree (sweep.txt)"),
            (true, false) => bail!("some runs broke an envelope bound (sweep.txt)"),
            (false, false) => {
                bail!("some scheme-points did not agree and some runs broke an envelope bound (sweep.txt)")
            }
        }
    }
    let (common, schemes, mode) = match cmd {
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
        Cmd::Sweep { .. } => unreachable!("handled above"),
    };
    let mut sc = Scenario::load(&scenario_path(&common.scenario))?;
    sc.profile = common.profile;
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
            run_schemes(&sc, &schemes, &common, m.real, None)?,
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
        PathBuf::from("lab-runs").join(format!(
            "{}-{}-{}-{}",
            sc.name,
            schemes.join("+"),
            sc.profile,
            utc_stamp()
        ))
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
