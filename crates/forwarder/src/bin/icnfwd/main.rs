//! `icnfwd`: the NDN forwarder daemon, and the control verbs (`status`,
//! `face`, `route`, `strategy`, `cs`) that manage a running one.

mod ctl;
mod json;

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{CommandFactory, Parser, Subcommand};
use icn_forwarder::config::Config;
use icn_forwarder::daemon::status::{render, Client};

#[derive(Parser, Debug)]
#[command(
    name = "icnfwd",
    version,
    about = "NDN forwarder (NFD-compatible faces and management)"
)]
struct Cli {
    /// TOML configuration file (built-in defaults when absent).
    #[arg(short, long, global = true)]
    config: Option<PathBuf>,
    /// Unix socket of a running forwarder, for the control verbs
    /// (default: [unix] path of the config).
    #[arg(short, long, global = true)]
    socket: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the forwarder (the default).
    Run,
    /// Print faces, routes, counters and strategies of a running forwarder.
    Status(ctl::ListArgs),
    /// Create, destroy and list faces (nfdc face).
    #[command(subcommand)]
    Face(ctl::FaceCmd),
    /// Add, remove and list routes (nfdc route).
    #[command(subcommand)]
    Route(ctl::RouteCmd),
    /// Set, unset and list strategy choices (nfdc strategy).
    #[command(subcommand)]
    Strategy(ctl::StrategyCmd),
    /// Content Store information (nfdc cs).
    #[command(subcommand)]
    Cs(ctl::CsCmd),
    /// Parse and validate the configuration, then exit.
    CheckConfig,
    /// Write man pages (icnfwd.1, icnfwd-face.1, ...) into DIR (packaging).
    #[command(hide = true)]
    GenerateMan { dir: PathBuf },
}

/// Runs one control verb against the daemon's socket on a small runtime.
fn control(cfg: &Config, socket: Option<PathBuf>, cmd: Command) -> anyhow::Result<()> {
    let socket = socket.unwrap_or_else(|| cfg.unix.path.clone());
    // A listing piped into `head` ends quietly, as other Unix tools do,
    // instead of panicking in println! on EPIPE.
    // SAFETY: restores the default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mut c = Client::connect(&socket).await?;
        match cmd {
            Command::Status(a) => {
                let snap = c.snapshot().await?;
                if a.json {
                    println!("{}", json::snapshot(&snap));
                } else {
                    print!("{}", render(&snap));
                }
                Ok(())
            }
            Command::Face(f) => ctl::face(&mut c, f).await,
            Command::Route(r) => ctl::route(&mut c, r).await,
            Command::Strategy(s) => ctl::strategy(&mut c, s).await,
            Command::Cs(s) => ctl::cs(&mut c, s).await,
            Command::Run | Command::CheckConfig | Command::GenerateMan { .. } => Ok(()),
        }
    })
}

fn load(path: &Option<PathBuf>) -> anyhow::Result<Config> {
    match path {
        Some(p) => Config::from_file(p).with_context(|| format!("configuration {}", p.display())),
        None => Ok(Config::default()),
    }
}

/// Turns transparent huge pages off for this process (mimalloc is also
/// built not to ask for them, feature `no_thp`; this covers hosts where
/// the kernel gives them unasked). On a fresh 2 MiB page the kernel clears
/// all of it at the first write: a 500 MB Unix transfer, the Content Store
/// filling with 8.8 KB Data, spent 43-45 % of icnfwd's samples in
/// `clear_page_erms` with them (2.5 Gbit/s, 2.5 s of icnfwd CPU per GB)
/// and 4 % without (3.5 Gbit/s, 1.6-1.8 s/GB); loadgen's steady state
/// showed no difference beyond its noise. The idle RSS is 7.7 MB instead
/// of 17 MB.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag of this process's memory
    // map; a refusal (an old kernel) leaves huge pages as they were.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// mimalloc, not glibc's malloc: under loadgen glibc's bin searches and
/// consolidation (every CS eviction frees a Data of ~1.3 KB among
/// small blocks) were 15 % of icnfwd's CPU; with mimalloc the CPU per
/// exchange fell from 6.7-8.1 to 5.1-6.6 µs (forwarder README,
/// Performance). `daemon::shell::memory` asks it to return freed pages.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    no_transparent_huge_pages();
    let cli = Cli::parse();
    let cfg = load(&cli.config)?;
    match cli.command.unwrap_or(Command::Run) {
        Command::GenerateMan { dir } => {
            std::fs::create_dir_all(&dir)?;
            clap_mangen::generate_to(Cli::command(), &dir)
                .with_context(|| format!("writing man pages to {}", dir.display()))
        }
        Command::CheckConfig => {
            println!("configuration OK");
            Ok(())
        }
        cmd @ (Command::Status(_)
        | Command::Face(_)
        | Command::Route(_)
        | Command::Strategy(_)
        | Command::Cs(_)) => control(&cfg, cli.socket, cmd),
        Command::Run => {
            use tracing_subscriber::prelude::*;
            use tracing_subscriber::{fmt, reload, EnvFilter};
            // RUST_LOG wins over the file and pins the filter; otherwise the
            // file's log_level is applied again on SIGHUP.
            let from_env = EnvFilter::try_from_default_env().ok();
            let pinned = from_env.is_some();
            let filter = match from_env {
                Some(f) => f,
                None => EnvFilter::try_new(&cfg.log_level)?,
            };
            let (filter, handle) = reload::Layer::new(filter);
            tracing_subscriber::registry()
                .with(filter)
                .with(
                    fmt::layer()
                        .with_target(false)
                        .with_writer(std::io::stderr)
                        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
                )
                .init();
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            if pinned {
                return rt.block_on(icn_forwarder::daemon::run(cfg, cli.config));
            }
            let reload_log: icn_forwarder::daemon::LogReload = Box::new(move |level: &str| {
                let f = EnvFilter::try_new(level).map_err(|e| e.to_string())?;
                handle.reload(f).map_err(|e| e.to_string())
            });
            rt.block_on(icn_forwarder::daemon::run_with_log_reload(
                cfg, cli.config, reload_log,
            ))
        }
    }
}
