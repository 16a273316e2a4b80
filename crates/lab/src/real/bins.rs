//! Locating (and building) icnfwd, icncat and icnput for the testbed.
//!
//! `ICN_TESTBED_BIN_DIR` names a directory holding all three; otherwise the
//! harness runs `$CARGO build --release --bins -p icn-forwarder -p
//! icn-consumer` into the target directory of the running test and uses
//! those. Release, whatever the test's own profile: on two cores, eight
//! debug forwarders plus their consumers cannot keep 20 Mbit/s of 8 KB
//! Data paced (measured: 76% utilisation where release reaches 95%), and
//! the figures would measure the build, not the schemes.
//! `ICN_TESTBED_PROFILE=debug` builds debug binaries instead (quick local
//! checks; expect lower utilisation). Cargo releases its build lock before
//! it runs tests, so the nested build does not deadlock.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub struct Bins {
    pub icnfwd: PathBuf,
    pub icncat: PathBuf,
    pub icnput: PathBuf,
    /// "release", "debug" or "ICN_TESTBED_BIN_DIR".
    pub origin: String,
}

impl Bins {
    fn in_dir(dir: &Path, origin: &str) -> Result<Bins, String> {
        let b = Bins {
            icnfwd: dir.join("icnfwd"),
            icncat: dir.join("icncat"),
            icnput: dir.join("icnput"),
            origin: origin.to_string(),
        };
        for p in [&b.icnfwd, &b.icncat, &b.icnput] {
            if !p.is_file() {
                return Err(format!("{} is missing", p.display()));
            }
        }
        Ok(b)
    }
}

/// `<target>/<profile>` of the running binary: a test's
/// (`.../deps/<test>-<hash>`) or icnlab's own (`.../<profile>/icnlab`);
/// its parent is the target directory (honours CARGO_TARGET_DIR).
fn profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    if dir.file_name()? == "deps" {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir.to_path_buf())
    }
}

/// The binaries, built once per test process.
pub fn bins() -> Result<Bins, String> {
    static BINS: OnceLock<Result<Bins, String>> = OnceLock::new();
    BINS.get_or_init(|| {
        if let Some(dir) = std::env::var_os("ICN_TESTBED_BIN_DIR") {
            return Bins::in_dir(Path::new(&dir), "ICN_TESTBED_BIN_DIR");
        }
        let dir = profile_dir().ok_or("cannot tell the target directory of this test")?;
        let release = std::env::var("ICN_TESTBED_PROFILE").map_or(true, |p| p != "debug");
        let target = dir.parent().ok_or("target directory has no parent")?;
        let dir = target.join(if release { "release" } else { "debug" });
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--bins",
            "-p",
            "icn-forwarder",
            "-p",
            "icn-consumer",
        ])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"))
        .env("CARGO_TARGET_DIR", target);
        if release {
            cmd.arg("--release");
        }
        eprintln!(
            "testbed: building icnfwd/icncat/icnput ({})",
            if release { "release" } else { "debug" }
        );
        let out = cmd.output().map_err(|e| format!("running cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo build of the testbed binaries failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Bins::in_dir(&dir, if release { "release" } else { "debug" })
    })
    .clone()
}
