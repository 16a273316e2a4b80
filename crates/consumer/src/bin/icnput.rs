//! icnput: publish a file or stdin as a segmented, versioned object (like
//! ndn-tools' ndnserve), answering RDR and CanBePrefix version discovery.

use anyhow::{Context, Result};
use cc_core::Duration;
use clap::{CommandFactory, Parser};
use icn_consumer::run;
use icn_consumer::transport::{default_endpoint, Endpoint, Face};
use icn_consumer::{Content, Publisher, PublisherConfig};
use icn_tlv::Name;

#[derive(Debug, Parser)]
#[command(
    name = "icnput",
    version,
    about = "Publish a file (or stdin) under an NDN name, segmented and signed with DigestSha256",
    after_help = "Data are named /<name>/v=<version>/seg=<n>, carry FinalBlockId, and are signed on demand, so a memory-mapped file of any size needs little RAM. The prefix is registered on the forwarder with a signed rib/register command. icnput serves until the forwarder closes the connection or it is interrupted."
)]
struct Args {
    /// Name prefix to publish under (without a version); with --multicast, the group.
    name: String,
    /// Stream the file (or stdin) as an SRMCC multicast source of the group
    /// NAME instead of publishing it: group Data /NAME/seq=<n>, paced at the
    /// rate SRMCC's feedback allows, sent while subscribers are joined.
    #[arg(long)]
    multicast: bool,
    /// With --multicast: payload bytes per group Data.
    #[arg(long, default_value_t = 1000, value_name = "BYTES")]
    chunk_size: usize,
    /// With --multicast: RTT that sets the rate-adaptation cycle (4 x RTT),
    /// ms; absent, the cycle follows the RTT the receivers measure.
    #[arg(long, value_name = "MS")]
    rtt: Option<u64>,
    /// With --multicast: write the source report as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    stats_json: Option<std::path::PathBuf>,
    /// File to publish; stdin when absent. Regular files are memory-mapped;
    /// a stdin pipe is copied to an unlinked temporary file that is mapped,
    /// so its size is not limited by RAM.
    file: Option<std::path::PathBuf>,
    /// Directory of the temporary file stdin is spooled to [default: $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    spool_dir: Option<std::path::PathBuf>,
    /// Forwarder: unix:///path, tcp://host:port or udp://host:port
    /// [default: $NDN_CLIENT_TRANSPORT, else unix:///run/nfd/nfd.sock].
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
    /// Content bytes per segment.
    #[arg(long, default_value_t = 8000)]
    segment_size: usize,
    /// Version number [default: current time in ms since the Unix epoch].
    #[arg(long = "object-version", value_name = "N")]
    object_version: Option<u64>,
    /// FreshnessPeriod of the segments, ms.
    #[arg(long, default_value_t = 10_000)]
    freshness: u64,
    /// Sign each segment when it is asked for instead of signing every
    /// segment before serving (objects over 2^20 segments always are).
    #[arg(long)]
    sign_per_request: bool,
    /// Print the versioned name and counters on stderr.
    #[arg(short, long)]
    verbose: bool,
    /// Suppress messages.
    #[arg(short, long)]
    quiet: bool,
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
    if let Err(e) = real_main(args) {
        eprintln!("ERROR: {e:#}");
        std::process::exit(1);
    }
}

fn load(file: Option<&std::path::Path>, spool_dir: Option<&std::path::Path>) -> Result<Content> {
    match file {
        Some(p) => Content::open(p).with_context(|| format!("mapping {}", p.display())),
        None => Content::stdin(spool_dir).context("reading stdin"),
    }
}

fn real_main(args: Args) -> Result<()> {
    let name: Name = args
        .name
        .parse()
        .map_err(|e| anyhow::anyhow!("invalid name {:?}: {e:?}", args.name))?;
    if args.segment_size == 0 || args.segment_size > 60_000 {
        anyhow::bail!("--segment-size must be between 1 and 60000");
    }
    let ep: Endpoint = match &args.transport {
        Some(t) => t.parse().map_err(anyhow::Error::msg)?,
        None => default_endpoint().map_err(anyhow::Error::msg)?,
    };
    if args.multicast {
        return multicast_main(&args, &name, &ep);
    }
    let content = load(args.file.as_deref(), args.spool_dir.as_deref())?;
    let version = args.object_version.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
    });
    let cfg = PublisherConfig {
        segment_size: args.segment_size,
        freshness: Duration::from_millis(args.freshness),
        version,
        ..PublisherConfig::default()
    };
    let mut publisher = Publisher::new(name.clone(), content, cfg);
    // Signed once here, the transfer costs no SHA-256 per request (about
    // half of icnput's CPU per GB otherwise).
    if !args.sign_per_request {
        publisher.presign();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut face = Face::connect(&ep)
            .await
            .with_context(|| format!("cannot connect to the forwarder at {ep}"))?;
        run::register(&mut face, &name).await?;
        if !args.quiet {
            eprintln!(
                "Published {} ({} segments); serving.",
                publisher.versioned_name(),
                publisher.segment_count()
            );
        }
        tokio::select! {
            r = run::serve(&mut face, &mut publisher) => r?,
            _ = tokio::signal::ctrl_c() => {}
        }
        if args.verbose {
            eprintln!("{:?}", publisher.stats());
        }
        Ok::<_, anyhow::Error>(())
    })
}

/// `icnput --multicast`: the SRMCC source.
fn multicast_main(args: &Args, group: &Name, ep: &Endpoint) -> Result<()> {
    use icn_consumer::multicast::{run_source, SourceOptions};
    if args.chunk_size == 0 || args.chunk_size > 8000 {
        anyhow::bail!("--chunk-size must be between 1 and 8000");
    }
    let input: Box<dyn std::io::Read + Send> = match &args.file {
        Some(p) => {
            Box::new(std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?)
        }
        None => Box::new(std::io::stdin()),
    };
    let opts = SourceOptions {
        chunk_size: args.chunk_size,
        rtt: args.rtt.map(Duration::from_millis),
        quiet: args.quiet,
        ..SourceOptions::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(async {
        let mut face = Face::connect(ep)
            .await
            .with_context(|| format!("cannot connect to the forwarder at {ep}"))?;
        let r = tokio::select! {
            r = run_source(&mut face, group, input, &opts) => r?,
            _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted"),
        };
        Ok::<_, anyhow::Error>(r)
    })?;
    if let Some(p) = &args.stats_json {
        let f = std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
        serde_json::to_writer_pretty(f, &report)?;
    }
    if !args.quiet {
        eprintln!(
            "Sent {} packets ({} bytes) in {:.1} s; {} MCC messages, {} adaptations, final rate {:.3} Mbit/s",
            report.packets_sent,
            report.bytes_sent,
            report.duration_s,
            report.feedback_in,
            report.adaptations,
            report.final_rate_bps / 1e6
        );
    }
    Ok(())
}
