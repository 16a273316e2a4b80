//! icncat: fetch a segmented object (like ndn-tools' ndnget) and write it
//! to stdout or a file.

use anyhow::{bail, Context, Result};
use cc_core::rtt::RttConfig;
use cc_core::{Duration, LawKind};
use clap::{CommandFactory, Parser};
use icn_consumer::logs::FetchLogs;
use icn_consumer::run::{self, RunError};
use icn_consumer::scheme::{ndnget_rtt, parse_service_class, Scheme, SchemeOptions};
use icn_consumer::stats::StopReason;
use icn_consumer::transport::{default_endpoint, Endpoint, Face};
use icn_consumer::{Discovery, FetchConfig, Fetcher, PipelineConfig, RateSpec};
use icn_tlv::Name;
use std::io::{IsTerminal, Write};

/// Largest Data datagram expected over UDP (NFD's and icnfwd's MTU).
const MAX_DATA_DATAGRAM_BYTES: usize = 8800;

#[derive(Debug, Parser)]
#[command(
    name = "icncat",
    version,
    about = "Fetch a segmented NDN object (like ndnget) with any icnfwd congestion-control scheme",
    after_help = "Schemes (--cc): none (fixed window 64), fixed (--pipeline-size window, or --rate), rate (= fixed, --rate required), aimd, cubic (default), pcon (AIMD reacting to marks), rcp, mircc, ccc (--objective), wincm, qsccp (--class).\n\nRate schemes (rcp, mircc, ccc, qsccp) follow what the forwarders stamp on the way back (RCP/MIRCC rates, CCC pace constraint, QSCCP TargetRate); --rate only sets the rate used until the first stamped value arrives (default: the paper's initial rate).\n\nThe summary goes to stderr; the content to stdout unless -o is given.\n\nStopping early: --duration S, SIGINT (Ctrl-C) or SIGTERM end the fetch cleanly: the content received in order so far is written, --log-rtt/--log-cwnd are flushed, --stats-json is written with \"completed\": false and \"stopped_by\", and the summary says the transfer was stopped.\n\nExit status: 0 all segments received (or --subscribe ended); 1 error; 2 usage error; 3 stopped by --duration; 130 stopped by SIGINT; 143 stopped by SIGTERM."
)]
struct Args {
    /// Name of the object; without a version component, the latest version is discovered.
    /// With --subscribe, the multicast group.
    name: String,
    /// Join the SRMCC multicast group NAME and write its stream instead of
    /// fetching an object; prints the received rate, sequence-gap losses
    /// and the rates the source announces.
    #[arg(long)]
    subscribe: bool,
    /// With --subscribe: access-link capacity reported to the tree (SRMCC's
    /// initial fair share), e.g. 1.5Mbps [default: 100Mbps]. The forwarder
    /// caps the report with the capacity of this receiver's face when it
    /// has one, so the flag only matters below that.
    #[arg(long, value_name = "RATE")]
    access_capacity: Option<RateSpec>,
    /// With --subscribe: do not repair lost packets; write what arrives.
    #[arg(long)]
    no_repair: bool,
    /// With --subscribe: the stream starts at sequence 0, for a receiver
    /// that joined before the source began (a whole file): a lost first
    /// packet is repaired. Without it, the first packet that arrives is
    /// the start (a live join mid-stream).
    #[arg(long)]
    from_start: bool,
    /// With --subscribe: how long a lost packet may still be repaired (by
    /// an Interest /GROUP/seq=N) before it is given up, ms.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    repair_window: u64,
    /// With --subscribe: stop after this many seconds without stream Data.
    #[arg(long, default_value_t = 5, value_name = "S")]
    idle_timeout: u64,
    /// Stop after this many seconds (fractions allowed) even if the object
    /// is not complete, then write the summary, logs and --stats-json (exit
    /// status 3). With --subscribe: leave the group after this long.
    #[arg(long, value_name = "S", value_parser = parse_duration_s)]
    duration: Option<f64>,
    /// Write the content to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Forwarder to connect to: unix:///path, tcp://host:port or udp://host:port
    /// [default: $NDN_CLIENT_TRANSPORT, else unix:///run/nfd/nfd.sock].
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
    /// Congestion-control scheme.
    #[arg(long = "cc", visible_alias = "pipeline-type", short = 'p', default_value = "cubic", value_parser = parse_law)]
    cc: CcArg,
    /// Initial window (window schemes), or the window of `fixed`.
    #[arg(long, visible_alias = "pipeline-size", short = 's', value_name = "N")]
    init_cwnd: Option<f64>,
    /// Initial slow-start threshold of aimd/cubic [default: unlimited].
    #[arg(long, value_name = "N")]
    init_ssthresh: Option<f64>,
    /// Count congestion marks but do not react to them (not under pcon,
    /// whose signal they are).
    #[arg(long)]
    ignore_marks: bool,
    /// Decrease on every congestion event, not at most once per RTT.
    #[arg(long)]
    disable_cwa: bool,
    /// AIMD additive increase per RTT, Interests.
    #[arg(long, default_value_t = 1.0, value_name = "N")]
    aimd_step: f64,
    /// AIMD multiplicative decrease factor.
    #[arg(long, default_value_t = 0.5, value_name = "F")]
    aimd_beta: f64,
    /// AIMD's decrease factor on a congestion mark (default: --aimd-beta
    /// for aimd, 0.8 for pcon as RFC 8511's ABE; 0.5 is ndnget's pcon).
    #[arg(long, value_name = "F")]
    aimd_mark_beta: Option<f64>,
    /// After a decrease, AIMD restarts from --init-cwnd instead of ssthresh.
    #[arg(long)]
    reset_cwnd_to_init: bool,
    /// CUBIC multiplicative decrease factor.
    #[arg(long, default_value_t = 0.7, value_name = "F")]
    cubic_beta: f64,
    /// CUBIC fast convergence (RFC 8312).
    #[arg(long)]
    fast_conv: bool,
    /// InterestLifetime in milliseconds.
    #[arg(short, long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Retries per segment on timeout or congestion Nack (-1 = no limit).
    #[arg(
        short,
        long,
        default_value_t = 15,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    retries: i64,
    /// Rate for `fixed`, or the initial rate of rate schemes: e.g. 10Mbps or 1200pps.
    #[arg(long, value_name = "RATE")]
    rate: Option<RateSpec>,
    /// CCC objective (target pace): e.g. 50Mbps or 3000pps.
    #[arg(long, value_name = "RATE")]
    objective: Option<RateSpec>,
    /// QSCCP service class: cs7, cs6, ef, af4, af3, af2, af1, be.
    #[arg(long, default_value = "be", value_name = "CLASS")]
    class: String,
    /// Constants of the scheme's consumer law: paper or tuned (docs/deviations.md).
    #[arg(long, default_value = "tuned", value_name = "PROFILE")]
    profile: cc_core::Profile,
    /// CCC: Interests in flight before the first Data (profile's: tuned 2;
    /// 0 paces at the objective from the start, as the paper).
    #[arg(long, value_name = "N")]
    ccc_initial_window: Option<u32>,
    /// CCC: the lowest pace, Interests/s, whatever constraint arrives
    /// (profile's: tuned 1; 0 as the paper).
    #[arg(long, value_name = "IPS")]
    ccc_min_pace: Option<f64>,
    /// WinCM: in the congestion state, Data whose Interests left before
    /// the last cut add nothing to the window (off in both profiles;
    /// docs/deviations.md W15).
    #[arg(long, value_name = "BOOL")]
    wincm_hold_after_cut: Option<bool>,
    /// WinCM: while the RTT shows the AQM's 5 ms target of queue, BIC's
    /// growth adds at most (cwnd + 1)·target per minimum RTT (on in the
    /// tuned profile, off in the paper's; docs/deviations.md W16).
    #[arg(long, value_name = "BOOL")]
    wincm_queue_growth_limit: Option<bool>,
    /// WinCM: while the RTT shows the 5 ms target of queue, the
    /// congestion state adds target/queue Interests per round trip, not
    /// one (tuned profile on, paper off; W16).
    #[arg(long, value_name = "BOOL")]
    wincm_growth_limit_in_congestion: Option<bool>,
    /// WinCM: a mark's cut stops at what the path delivers per minimum
    /// RTT (tuned profile on, paper off; W17).
    #[arg(long, value_name = "BOOL")]
    wincm_bandwidth_floor: Option<bool>,
    /// Set MustBeFresh on segment Interests.
    #[arg(short, long)]
    fresh: bool,
    /// Version discovery: auto (RDR and CanBePrefix in parallel), rdr, latest, none.
    #[arg(long, default_value = "auto", value_parser = parse_discovery)]
    discovery: Discovery,
    /// Skip version discovery (same as --discovery none).
    #[arg(short = 'D', long)]
    no_version_discovery: bool,
    /// Most Interests in flight, whatever the scheme says [default: 8192;
    /// window laws also keep at most twice the path's measured
    /// bandwidth-delay product, or 512 when that is more].
    #[arg(long)]
    max_outstanding: Option<u32>,
    /// RTO estimator: SRTT gain (RFC 6298 alpha).
    #[arg(long, default_value_t = 0.125, value_name = "F")]
    rto_alpha: f64,
    /// RTO estimator: RTTVAR gain (RFC 6298 beta).
    #[arg(long, default_value_t = 0.25, value_name = "F")]
    rto_beta: f64,
    /// RTO = SRTT + K x RTTVAR.
    #[arg(long, default_value_t = 8.0, value_name = "K")]
    rto_k: f64,
    /// Minimum RTO, ms.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    min_rto: u64,
    /// Maximum RTO, ms.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    max_rto: u64,
    /// Log window (or rate) changes to FILE: time (s) and cwndsize (or rate_ips).
    #[arg(long, value_name = "FILE")]
    log_cwnd: Option<std::path::PathBuf>,
    /// Log RTT samples to FILE: segment, rtt, rttvar, srtt, rto (ms).
    #[arg(long, value_name = "FILE")]
    log_rtt: Option<std::path::PathBuf>,
    /// Write statistics and the per-interval time series as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    stats_json: Option<std::path::PathBuf>,
    /// Time-series interval, ms.
    #[arg(long, default_value_t = 100)]
    sample_interval: u64,
    /// A rate law's Interests leave their slots late by a random fraction
    /// of the gap below this, the slots kept on their grid, so consumers
    /// told one rate never fall into step (0 paces strictly; at most 1).
    #[arg(long, value_name = "FRACTION", default_value_t = cc_core::pace_jitter::PACE_JITTER)]
    pace_jitter: f64,
    /// Suppress the summary and the progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Verbose log on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// `--cc`: a scheme, or `rate` (the name for `fixed` with `--rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CcArg {
    kind: LawKind,
    needs_rate: bool,
}

fn parse_law(s: &str) -> Result<CcArg, String> {
    if s.eq_ignore_ascii_case("rate") {
        return Ok(CcArg {
            kind: LawKind::Fixed,
            needs_rate: true,
        });
    }
    let kind = s
        .parse::<LawKind>()
        .map_err(|e| format!("{e}, or rate (fixed --rate)"))?;
    Ok(CcArg {
        kind,
        needs_rate: false,
    })
}

fn parse_duration_s(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v <= 1e9 {
        Ok(v)
    } else {
        Err("must be a positive number of seconds".into())
    }
}

/// Resolves on the first of: `--duration` expiring, SIGINT, SIGTERM.
async fn stop_signal(
    deadline: Option<tokio::time::Instant>,
    mut int: tokio::signal::unix::Signal,
    mut term: tokio::signal::unix::Signal,
) -> StopReason {
    let timer = async {
        match deadline {
            Some(t) => tokio::time::sleep_until(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = timer => StopReason::Duration,
        _ = int.recv() => StopReason::Sigint,
        _ = term.recv() => StopReason::Sigterm,
    }
}

fn parse_discovery(s: &str) -> Result<Discovery, String> {
    Ok(match s {
        "auto" => Discovery::Auto,
        "rdr" => Discovery::Rdr,
        "latest" => Discovery::Latest,
        "none" => Discovery::None,
        _ => return Err(format!("unknown discovery {s:?} (auto, rdr, latest, none)")),
    })
}

fn main() {
    icn_consumer::manpage::generate_if_asked(Args::command);
    let args = Args::parse();
    if args.verbose {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter("icn_consumer=debug")
            .init();
    }
    match real_main(args) {
        Ok(None) => {}
        Ok(Some(reason)) => std::process::exit(reason.exit_code()),
        Err(e) => {
            eprintln!("ERROR: {e:#}");
            std::process::exit(1);
        }
    }
}

/// `Ok(Some(reason))` when the fetch was stopped before completing.
fn real_main(args: Args) -> Result<Option<StopReason>> {
    let name: Name = args
        .name
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid name {:?}: {e:?}", args.name))?;
    let ep: Endpoint = match &args.transport {
        Some(t) => t.parse().map_err(anyhow::Error::msg)?,
        None => default_endpoint().map_err(anyhow::Error::msg)?,
    };
    if args.subscribe {
        return subscribe_main(&args, &name, &ep).map(|()| None);
    }
    if args.retries < -1 || args.retries > 1024 {
        bail!("--retries must be between -1 and 1024");
    }
    if args.quiet && args.verbose {
        bail!("cannot be quiet and verbose at the same time");
    }
    for (flag, v, lo, hi) in [
        ("--aimd-beta", args.aimd_beta, 0.0, 1.0),
        (
            "--aimd-mark-beta",
            args.aimd_mark_beta.unwrap_or(0.5),
            0.0,
            1.0,
        ),
        ("--cubic-beta", args.cubic_beta, 0.0, 1.0),
        ("--rto-alpha", args.rto_alpha, 0.0, 1.0),
        ("--rto-beta", args.rto_beta, 0.0, 1.0),
    ] {
        if !(v > lo && v < hi) {
            bail!("{flag} must be within ({lo}, {hi})");
        }
    }
    for (flag, v) in [("--aimd-step", args.aimd_step), ("--rto-k", args.rto_k)] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} must be a non-negative number");
        }
    }
    if args.init_cwnd.is_some_and(|w| !(w.is_finite() && w >= 1.0))
        || args.init_ssthresh.is_some_and(|w| w.is_nan() || w < 1.0)
    {
        bail!("--init-cwnd and --init-ssthresh must be at least 1");
    }
    if args
        .ccc_min_pace
        .is_some_and(|p| !(p.is_finite() && p >= 0.0))
    {
        bail!("--ccc-min-pace must be a non-negative number");
    }
    if args.cc.needs_rate && args.rate.is_none() {
        bail!("--cc rate needs --rate (e.g. --rate 8Mbps or --rate 1200pps)");
    }
    if args.ignore_marks && args.cc.kind == LawKind::Pcon && !args.quiet {
        eprintln!(
            "WARNING: --ignore-marks has no effect under pcon (marks are its congestion signal)"
        );
    }
    let rtt = RttConfig {
        alpha: args.rto_alpha,
        beta: args.rto_beta,
        k: args.rto_k,
        min_rto: Duration::from_millis(args.min_rto),
        max_rto: Duration::from_millis(args.max_rto.max(args.min_rto)),
        ..ndnget_rtt()
    };
    let opts = SchemeOptions {
        kind: args.cc.kind,
        rate: args.rate,
        init_cwnd: args.init_cwnd,
        init_ssthresh: args.init_ssthresh,
        ignore_marks: args.ignore_marks,
        disable_cwa: args.disable_cwa,
        aimd_step: args.aimd_step,
        aimd_beta: args.aimd_beta,
        aimd_mark_beta: args.aimd_mark_beta,
        cubic_beta: args.cubic_beta,
        fast_conv: args.fast_conv,
        reset_cwnd_to_init: args.reset_cwnd_to_init,
        objective: args.objective,
        class: parse_service_class(&args.class).map_err(anyhow::Error::msg)?,
        max_outstanding: args.max_outstanding,
        rtt,
        profile: args.profile,
        ccc_initial_window: args.ccc_initial_window,
        ccc_min_pace_ips: args.ccc_min_pace,
        wincm_hold_after_cut: args.wincm_hold_after_cut,
        wincm_queue_growth_limit: args.wincm_queue_growth_limit,
        wincm_growth_limit_in_congestion: args.wincm_growth_limit_in_congestion,
        wincm_bandwidth_floor: args.wincm_bandwidth_floor,
        ..SchemeOptions::default()
    };
    let open_log = |p: &Option<std::path::PathBuf>| -> Result<Option<Box<dyn Write>>> {
        p.as_ref()
            .map(|p| {
                let f = std::fs::File::create(p)
                    .with_context(|| format!("creating {}", p.display()))?;
                Ok(Box::new(std::io::BufWriter::new(f)) as Box<dyn Write>)
            })
            .transpose()
    };
    let mut logs = FetchLogs::new(open_log(&args.log_cwnd)?, open_log(&args.log_rtt)?)?;
    let cfg = FetchConfig {
        pipeline: PipelineConfig {
            lifetime: Duration::from_millis(args.lifetime),
            max_retries: u32::try_from(args.retries).ok(),
            ignore_marks: opts.pipeline_ignores_marks(),
            // cc-core's window laws gate decreases per RTT themselves (and
            // WinCM must see every mark).
            cwa: false,
            rtt,
            max_outstanding: opts.max_outstanding_for_law(),
            sample_interval: Duration::from_millis(args.sample_interval),
            pace_jitter: args.pace_jitter,
            log_events: logs.enabled(),
            ..PipelineConfig::default()
        },
        discovery: if args.no_version_discovery {
            Discovery::None
        } else {
            args.discovery
        },
        must_be_fresh: args.fresh,
        seed: None,
    };
    let mut cfg = cfg;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    // The timer starts here, before connecting: --duration bounds the
    // whole run, discovery included.
    let duration = args.duration.map(std::time::Duration::from_secs_f64);
    let result = rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let stop = stop_signal(
            duration.map(|d| tokio::time::Instant::now() + d),
            signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
            signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
        );
        let mut face = Face::connect(&ep)
            .await
            .with_context(|| format!("cannot connect to the forwarder at {ep}"))?;
        // Over UDP, Interests beyond what the receive buffer holds would
        // only have their Data dropped by the kernel when they arrive
        // together; the law's window is bounded by it.
        if let Some(n) = face.datagrams_buffered(MAX_DATA_DATAGRAM_BYTES) {
            cfg.pipeline.max_outstanding = cfg.pipeline.max_outstanding.min(n);
        }
        let mut fetcher = Fetcher::new(name, cfg, Scheme::new(&opts));
        let mut out: Box<dyn Write> = match &args.output {
            Some(p) => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                icn_consumer::output::OutputFile::new(
                    std::fs::File::create(p)
                        .with_context(|| format!("creating {}", p.display()))?,
                ),
            )),
            None => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                std::io::stdout().lock(),
            )),
        };
        let mut bar = |f: &Fetcher, done: bool| progress(f, done);
        let progress_cb: Option<run::Progress<'_>> =
            if show_progress { Some(&mut bar) } else { None };
        let r = run::fetch_until(
            &mut face,
            &mut fetcher,
            &mut out,
            progress_cb,
            &mut logs,
            stop,
        )
        .await;
        out.flush()?;
        let drops = face.kernel_drops();
        Ok::<_, anyhow::Error>((r, fetcher, drops))
    })?;
    let (result, fetcher, drops) = result;
    let stats = match &result {
        Ok(st) => st.clone(),
        Err(_) => fetcher.stats(),
    };
    if let Some(p) = &args.stats_json {
        write_json(p, &stats)?;
    }
    match result {
        Ok(stats) => {
            if !args.quiet {
                eprint!("\n{}", stats.summary());
                if let Some(d) = drops {
                    // Data the forwarder sent that never reached us: a full
                    // receive buffer (the `drops` column of /proc/net/udp).
                    eprintln!("UDP receive buffer: {d} datagrams dropped by the kernel");
                }
            }
            Ok(stats.stopped_by)
        }
        Err(e) => {
            if !args.quiet {
                eprintln!();
            }
            match e {
                RunError::Fetch(f) => bail!("{f}"),
                other => bail!("{other}"),
            }
        }
    }
}

/// Writes `v` as pretty JSON to `p`, flushed before returning (a harness
/// that waits for the exit reads the whole file).
fn write_json(p: &std::path::Path, v: &impl serde::Serialize) -> Result<()> {
    let f = std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer_pretty(&mut w, v)?;
    w.flush()?;
    Ok(())
}

fn progress(f: &Fetcher, done: bool) {
    let p = f.pipeline();
    let st = p.stats();
    let pct = match p.final_segment() {
        Some(last) => format!(
            "{:5.1}%",
            p.delivered_segments() as f64 * 100.0 / (last + 1) as f64
        ),
        None => "   ?%".to_string(),
    };
    let lim = match p.limit() {
        cc_core::SendLimit::Window { interests } => format!("cwnd {interests:.1}"),
        cc_core::SendLimit::Rate {
            interests_per_sec, ..
        } => format!("rate {interests_per_sec:.0}/s"),
    };
    eprint!(
        "\r{pct} {:>10.1} MB  {lim}  retx {}  marks {}   {}",
        st.bytes_received as f64 / 1e6,
        st.retransmissions,
        st.congestion_marks,
        if done { "\n" } else { "" }
    );
}

/// `icncat --subscribe`: join a multicast group and write its stream.
fn subscribe_main(args: &Args, group: &Name, ep: &Endpoint) -> Result<()> {
    use icn_consumer::multicast::{run_subscriber, SubscribeOptions};
    let access_capacity_bps = match args.access_capacity {
        None => None,
        Some(RateSpec::BitsPerSec(b)) if b >= 1.0 => Some(b as u64),
        Some(_) => bail!("--access-capacity must be a bit rate, e.g. 1.5Mbps"),
    };
    let repair = (!args.no_repair).then(|| icn_multicast::RepairConfig {
        window: Duration::from_millis(args.repair_window),
        ..icn_multicast::RepairConfig::default()
    });
    let opts = SubscribeOptions {
        access_capacity_bps,
        repair,
        from_start: args.from_start,
        idle_timeout: Duration::from_secs(args.idle_timeout.max(1)),
        max_duration: args.duration.map(Duration::from_secs_f64),
        quiet: args.quiet,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(async {
        let mut face = Face::connect(ep)
            .await
            .with_context(|| format!("cannot connect to the forwarder at {ep}"))?;
        let mut out: Box<dyn Write> = match &args.output {
            Some(p) => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            )),
            None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
        };
        let r = run_subscriber(&mut face, group, &mut out, &opts).await?;
        out.flush()?;
        // Let the leave reach the forwarder.
        face.close().await?;
        Ok::<_, anyhow::Error>(r)
    })?;
    if let Some(p) = &args.stats_json {
        write_json(p, &report)?;
    }
    if !args.quiet {
        eprint!("{}", report.summary());
    }
    if report.unrepaired > 0 {
        // Fail clearly: the output holds every other packet in order, but
        // not these.
        let ranges: Vec<String> = report
            .unrepaired_ranges
            .iter()
            .take(20)
            .map(|(a, b)| {
                if a == b {
                    format!("{a}")
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        bail!(
            "{} packets were lost and not repaired (seq {}{}); the output is missing their payloads",
            report.unrepaired,
            ranges.join(", "),
            if report.unrepaired_ranges.len() > 20 { ", ..." } else { "" }
        );
    }
    Ok(())
}
