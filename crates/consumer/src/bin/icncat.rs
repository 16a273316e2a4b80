//! icncat: fetch a segmented object (like ndn-tools' ndnget) and write it
//! to stdout or a file.

use anyhow::{bail, Context, Result};
use cc_core::{Duration, LawKind};
use clap::Parser;
use icn_consumer::rtt::RttConfig;
use icn_consumer::run::{self, RunError};
use icn_consumer::scheme::{self, parse_service_class, SchemeOptions};
use icn_consumer::transport::{default_endpoint, Endpoint, Face};
use icn_consumer::{Discovery, FetchConfig, Fetcher, PipelineConfig, RateSpec};
use icn_tlv::Name;
use std::io::{IsTerminal, Write};

#[derive(Debug, Parser)]
#[command(
    name = "icncat",
    version,
    about = "Fetch a segmented NDN object (like ndnget) with any icnfwd congestion-control scheme",
    after_help = "Schemes (--cc): none (fixed window 64), fixed (--pipeline-size window, or --rate), aimd, cubic (default), pcon (AIMD reacting to marks), rcp, mircc, ccc (--objective), wincm, qsccp (--class).\n\nThe summary goes to stderr; the content to stdout unless -o is given."
)]
struct Args {
    /// Name of the object; without a version component, the latest version is discovered.
    name: String,
    /// Write the content to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Forwarder to connect to: unix:///path, tcp://host:port or udp://host:port
    /// [default: $NDN_CLIENT_TRANSPORT, else unix:///run/nfd/nfd.sock].
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
    /// Congestion-control scheme.
    #[arg(long = "cc", visible_alias = "pipeline-type", short = 'p', default_value = "cubic", value_parser = parse_law)]
    cc: LawKind,
    /// Initial window (window schemes), or the window of `fixed`.
    #[arg(long, visible_alias = "pipeline-size", short = 's', value_name = "N")]
    init_cwnd: Option<f64>,
    /// Count congestion marks but do not react to them.
    #[arg(long)]
    ignore_marks: bool,
    /// Decrease on every congestion event, not at most once per RTT.
    #[arg(long)]
    disable_cwa: bool,
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
    /// Set MustBeFresh on segment Interests.
    #[arg(short, long)]
    fresh: bool,
    /// Version discovery: auto (RDR and CanBePrefix in parallel), rdr, latest, none.
    #[arg(long, default_value = "auto", value_parser = parse_discovery)]
    discovery: Discovery,
    /// Skip version discovery (same as --discovery none).
    #[arg(short = 'D', long)]
    no_version_discovery: bool,
    /// Most Interests in flight, whatever the scheme says.
    #[arg(long, default_value_t = 512)]
    max_outstanding: u32,
    /// Minimum RTO, ms.
    #[arg(long, default_value_t = 200)]
    min_rto: u64,
    /// Maximum RTO, ms.
    #[arg(long, default_value_t = 60_000)]
    max_rto: u64,
    /// Write statistics and the per-interval time series as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    stats_json: Option<std::path::PathBuf>,
    /// Time-series interval, ms.
    #[arg(long, default_value_t = 100)]
    sample_interval: u64,
    /// Suppress the summary and the progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Verbose log on stderr.
    #[arg(short, long)]
    verbose: bool,
}

fn parse_law(s: &str) -> Result<LawKind, String> {
    s.parse::<LawKind>().map_err(|e| e.to_string())
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
    let args = Args::parse();
    if args.verbose {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter("icn_consumer=debug")
            .init();
    }
    match real_main(args) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("ERROR: {e:#}");
            std::process::exit(1);
        }
    }
}

fn real_main(args: Args) -> Result<()> {
    let name: Name = args
        .name
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid name {:?}: {e:?}", args.name))?;
    let ep: Endpoint = match &args.transport {
        Some(t) => t.parse().map_err(anyhow::Error::msg)?,
        None => default_endpoint().map_err(anyhow::Error::msg)?,
    };
    if args.retries < -1 || args.retries > 1024 {
        bail!("--retries must be between -1 and 1024");
    }
    if args.quiet && args.verbose {
        bail!("cannot be quiet and verbose at the same time");
    }
    let opts = SchemeOptions {
        kind: args.cc,
        rate: args.rate,
        init_cwnd: args.init_cwnd,
        ignore_marks: args.ignore_marks,
        disable_cwa: args.disable_cwa,
        objective: args.objective,
        class: parse_service_class(&args.class).map_err(anyhow::Error::msg)?,
        max_outstanding: args.max_outstanding,
        ..SchemeOptions::default()
    };
    let (law, tagger) = scheme::build(&opts);
    let cfg = FetchConfig {
        pipeline: PipelineConfig {
            lifetime: Duration::from_millis(args.lifetime),
            max_retries: u32::try_from(args.retries).ok(),
            ignore_marks: args.ignore_marks,
            // cc-core's window laws gate decreases per RTT themselves.
            cwa: false,
            rtt: RttConfig {
                min_rto: Duration::from_millis(args.min_rto),
                max_rto: Duration::from_millis(args.max_rto.max(args.min_rto)),
                ..RttConfig::default()
            },
            max_outstanding: args.max_outstanding.max(1),
            sample_interval: Duration::from_millis(args.sample_interval),
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
    let mut fetcher = Fetcher::new(name, cfg, law, tagger);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let result = rt.block_on(async {
        let mut face = Face::connect(&ep)
            .await
            .with_context(|| format!("cannot connect to the forwarder at {ep}"))?;
        let mut out: Box<dyn Write> = match &args.output {
            Some(p) => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            )),
            None => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                std::io::stdout().lock(),
            )),
        };
        let mut bar = |f: &Fetcher, done: bool| progress(f, done);
        let progress_cb: Option<run::Progress<'_>> =
            if show_progress { Some(&mut bar) } else { None };
        let r = run::fetch(&mut face, &mut fetcher, &mut out, progress_cb).await;
        out.flush()?;
        Ok::<_, anyhow::Error>(r)
    })?;
    let stats = fetcher.stats();
    if let Some(p) = &args.stats_json {
        let f = std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
        serde_json::to_writer_pretty(f, &stats)?;
    }
    match result {
        Ok(stats) => {
            if !args.quiet {
                eprint!("\n{}", stats.summary());
            }
            Ok(())
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
