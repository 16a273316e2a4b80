//! `icnfwd`: the NDN forwarder daemon, and `icnfwd status` to inspect it.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use icn_forwarder::config::Config;

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
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the forwarder (the default).
    Run,
    /// Print faces, routes, counters and strategies of a running forwarder.
    Status {
        /// Unix socket of the forwarder (default: [unix] path of the config).
        #[arg(short, long)]
        socket: Option<PathBuf>,
    },
    /// Parse and validate the configuration, then exit.
    CheckConfig,
}

fn load(path: &Option<PathBuf>) -> anyhow::Result<Config> {
    match path {
        Some(p) => Config::from_file(p).with_context(|| format!("configuration {}", p.display())),
        None => Ok(Config::default()),
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let cfg = load(&cli.config)?;
    match cli.command.unwrap_or(Command::Run) {
        Command::CheckConfig => {
            println!("configuration OK");
            Ok(())
        }
        Command::Status { socket } => {
            let socket = socket.unwrap_or_else(|| cfg.unix.path.clone());
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(icn_forwarder::daemon::status::print_status(&socket))
        }
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
