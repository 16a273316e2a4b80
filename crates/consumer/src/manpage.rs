//! Man pages from the clap definitions, for packaging: `icncat
//! --generate-man DIR` writes `DIR/icncat.1` (scripts/package.sh runs it).
//! Checked before argument parsing, since the normal arguments are required.

use std::ffi::OsStr;

/// Writes the man page of `command()` into the directory given after a
/// leading `--generate-man`, then exits; returns when not asked.
pub fn generate_if_asked(command: fn() -> clap::Command) {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new("--generate-man")) {
        return;
    }
    let code = match args.next() {
        Some(dir) => match std::fs::create_dir_all(&dir)
            .and_then(|()| clap_mangen::generate_to(command(), &dir))
        {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("ERROR: writing man pages: {e}");
                1
            }
        },
        None => {
            eprintln!("ERROR: --generate-man needs a directory");
            2
        }
    };
    std::process::exit(code);
}
