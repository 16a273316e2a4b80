//! Ethernet (AF_PACKET) and UDP multicast faces between two icnfwd
//! processes, each in a network namespace this test creates, joined by a
//! veth pair. Nothing touches the host's interfaces: the veth ends are
//! created directly inside the namespaces, and both namespaces (with their
//! veth) and both daemons are removed by Drop guards even when the test
//! fails.
//!
//! A producer (the management client of this crate, speaking to forwarder A
//! over its Unix socket, which the host's mount namespace shares) registers
//! prefixes with signed rib/register commands and answers with 4000-octet
//! Data, so NDNLPv2 fragmentation over MTU 1500 (Ethernet) and 1400 (UDP
//! multicast) is exercised both ways. A consumer on forwarder B fetches.
//!
//! Needs root and `ip` (iproute2); otherwise prints a loud SKIP and passes.

#[path = "interop/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use harness::{Proc, ICNFWD};
use icn_forwarder::daemon::client::Client;
use icn_forwarder::mgmt::{ControlParameters, FaceStatus};
use icn_tlv::{Data, Interest, LpPacket, Name};

const MAC_A: &str = "02:00:00:00:17:0a";
const MAC_B: &str = "02:00:00:00:17:0b";
const ADDR_A: &str = "10.213.0.1";
const ADDR_B: &str = "10.213.0.2";
const CONTENT_LEN: usize = 4000;

/// Two namespaces joined by a veth pair; deleted on drop (which also
/// destroys the veth).
struct NetnsPair {
    a: String,
    b: String,
    if_a: String,
    if_b: String,
}

impl NetnsPair {
    /// None (after a loud SKIP line) when namespaces cannot be made here.
    fn create(tag: &str) -> Option<NetnsPair> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("\n!!!!!!!! SKIP {tag}: needs root to create network namespaces !!!!!!!!\n");
            return None;
        }
        if Command::new("ip").arg("-V").output().is_err() {
            eprintln!("\n!!!!!!!! SKIP {tag}: `ip` (iproute2) not found !!!!!!!!\n");
            return None;
        }
        static N: AtomicU32 = AtomicU32::new(0);
        let id = format!(
            "{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let pair = NetnsPair {
            a: format!("icnfwd-a-{id}"),
            b: format!("icnfwd-b-{id}"),
            if_a: "ndn-a".into(),
            if_b: "ndn-b".into(),
        };
        if !ip(&["netns", "add", &pair.a]) {
            eprintln!(
                "\n!!!!!!!! SKIP {tag}: `ip netns add` refused (no CAP_SYS_ADMIN?) !!!!!!!!\n"
            );
            return None;
        }
        // From here on, Drop cleans up whatever was made.
        let ok = ip(&["netns", "add", &pair.b])
            && ip(&[
                "-n", &pair.a, "link", "add", &pair.if_a, "type", "veth", "peer", "name",
                &pair.if_b, "netns", &pair.b,
            ])
            && ip(&["-n", &pair.a, "link", "set", &pair.if_a, "address", MAC_A])
            && ip(&["-n", &pair.b, "link", "set", &pair.if_b, "address", MAC_B])
            && ip(&[
                "-n",
                &pair.a,
                "addr",
                "add",
                &format!("{ADDR_A}/24"),
                "dev",
                &pair.if_a,
            ])
            && ip(&[
                "-n",
                &pair.b,
                "addr",
                "add",
                &format!("{ADDR_B}/24"),
                "dev",
                &pair.if_b,
            ])
            && ip(&["-n", &pair.a, "link", "set", &pair.if_a, "up"])
            && ip(&["-n", &pair.b, "link", "set", &pair.if_b, "up"])
            && ip(&["-n", &pair.a, "link", "set", "lo", "up"])
            && ip(&["-n", &pair.b, "link", "set", "lo", "up"]);
        assert!(
            ok,
            "setting up the veth pair between {} and {}",
            pair.a, pair.b
        );
        Some(pair)
    }

    /// Starts icnfwd inside namespace `ns`; its log goes to `log`.
    fn start(&self, ns: &str, name: &str, config: &Path, socket: &Path, log: &Path) -> Proc {
        let err = std::fs::File::create(log).unwrap();
        let p = Proc::spawn(
            name,
            Command::new("ip")
                .args(["netns", "exec", ns])
                .arg(ICNFWD)
                .arg("--config")
                .arg(config)
                .env("RUST_LOG", "info")
                .stdout(Stdio::null())
                .stderr(err),
        );
        if !wait_for(socket, Duration::from_secs(10)) {
            panic!(
                "{name} did not open {}; its log:\n{}",
                socket.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        p
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn ip(args: &[&str]) -> bool {
    let out = Command::new("ip").args(args).output().expect("running ip");
    if !out.status.success() {
        eprintln!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

fn wait_for(path: &Path, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while !path.exists() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Content of the Data for `name`: CONTENT_LEN octets derived from the name.
fn content_for(name: &Name) -> Bytes {
    let seed = name
        .value()
        .iter()
        .fold(17u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(*b)));
    (0..CONTENT_LEN)
        .map(|i| (seed.wrapping_add(i as u32 * 7) % 251) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Registers `prefixes` on the forwarder at `socket` and answers every
/// Interest under them, until the connection closes.
async fn producer(socket: PathBuf, prefixes: Vec<&'static str>) -> anyhow::Result<()> {
    let mut c = Client::connect(&socket).await?;
    for p in &prefixes {
        let params = ControlParameters {
            name: Some(p.parse().unwrap()),
            ..Default::default()
        };
        let r = c.command("rib", "register", &params).await?;
        anyhow::ensure!(r.code == 200, "rib/register {p}: {} {}", r.code, r.text);
    }
    let far = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (typ, el) = c.recv_until(far).await?;
        let wire = match typ {
            5 => el,
            100 => match LpPacket::decode(el)?.fragment {
                Some(f) if f.first() == Some(&5) => f,
                _ => continue,
            },
            _ => continue,
        };
        let i = Interest::decode(wire)?;
        let mut d = Data::new(i.name.clone(), content_for(&i.name));
        d.meta.freshness_period = Some(Duration::from_secs(1));
        c.send(&d.encode_signed_digest_sha256()).await?;
    }
}

/// Fetches `name` through the forwarder at `socket` and checks the content.
async fn fetch(c: &mut Client, name: &str) -> anyhow::Result<()> {
    let name: Name = name.parse().unwrap();
    let mut i = Interest::new(name.clone());
    i.must_be_fresh = true;
    i.nonce = Some(rand_nonce());
    i.lifetime = Some(Duration::from_millis(2000));
    let d = c.express(i).await?;
    anyhow::ensure!(d.name == name, "got {} for {name}", d.name);
    anyhow::ensure!(
        d.content == content_for(&name),
        "content of {name} differs ({} octets)",
        d.content.len()
    );
    Ok(())
}

fn rand_nonce() -> u32 {
    static N: AtomicU32 = AtomicU32::new(0x5eed);
    N.fetch_add(0x9E37_79B9, Ordering::Relaxed) ^ std::process::id()
}

fn face<'a>(faces: &'a [FaceStatus], uri: &str) -> Option<&'a FaceStatus> {
    faces.iter().find(|f| f.uri == uri)
}

fn config(dir: &Path, name: &str, body: &str) -> (PathBuf, PathBuf) {
    let sock = dir.join(format!("{name}.sock"));
    let cfg = dir.join(format!("{name}.toml"));
    let text = format!(
        "[unix]\npath = \"{}\"\n[tcp]\nenabled = false\n{body}",
        sock.display()
    );
    std::fs::write(&cfg, text).unwrap();
    (cfg, sock)
}

/// Runs `body` on a runtime with a hard deadline; on failure prints both
/// forwarders' logs.
fn run_bounded_async<F>(logs: &[&Path], body: F)
where
    F: std::future::Future<Output = anyhow::Result<()>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let res = rt.block_on(async {
        match tokio::time::timeout(Duration::from_secs(60), body).await {
            Ok(r) => r,
            Err(_) => Err(anyhow::anyhow!("test body exceeded 60 s")),
        }
    });
    if let Err(e) = res {
        for l in logs {
            eprintln!(
                "---- {} ----\n{}",
                l.display(),
                std::fs::read_to_string(l).unwrap_or_default()
            );
        }
        panic!("{e:#}");
    }
}

#[test]
fn ethernet_faces_multicast_and_unicast_with_fragmentation() {
    let Some(ns) = NetnsPair::create("ethernet faces") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (cfg_a, sock_a) = config(
        dir.path(),
        "a",
        &format!(
            "[udp]\nenabled = false\n[[ethernet]]\ninterface = \"{}\"\n",
            ns.if_a
        ),
    );
    let (cfg_b, sock_b) = config(
        dir.path(),
        "b",
        &format!(
            "[udp]\nenabled = false\n[[ethernet]]\ninterface = \"{0}\"\n\
             [[route]]\nprefix = \"/eth\"\nface = \"dev://{0}\"\n",
            ns.if_b
        ),
    );
    let (log_a, log_b) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let _fa = ns.start(&ns.a, "icnfwd-a", &cfg_a, &sock_a, &log_a);
    let _fb = ns.start(&ns.b, "icnfwd-b", &cfg_b, &sock_b, &log_b);

    run_bounded_async(&[&log_a, &log_b], async {
        let prod = tokio::spawn(producer(sock_a.clone(), vec!["/eth", "/uni"]));
        // Wait until both registrations are in A's RIB.
        let mut ca = Client::connect(&sock_a).await?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let snap = ca.snapshot().await?;
            if snap.rib.len() >= 2 {
                break;
            }
            if prod.is_finished() {
                return Err(anyhow::anyhow!("producer ended early: {:?}", prod.await));
            }
            anyhow::ensure!(tokio::time::Instant::now() < deadline, "no registration");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // Multicast: B's static route points at its Ethernet multicast face.
        let mut cb = Client::connect(&sock_b).await?;
        cb.set_timeout(Duration::from_secs(3));
        for k in 0..5 {
            fetch(&mut cb, &format!("/eth/obj/{k}")).await?;
        }

        // Unicast: a face to A's MAC from faces/create, then a FIB route.
        let params = ControlParameters {
            uri: Some(format!("ether://[{MAC_A}]")),
            local_uri: Some(format!("dev://{}", ns.if_b)),
            ..Default::default()
        };
        let r = cb.command("faces", "create", &params).await?;
        anyhow::ensure!(r.code == 200, "faces/create: {} {}", r.code, r.text);
        let uni = r.body.and_then(|b| b.face_id).expect("FaceId in the body");
        let params = ControlParameters {
            name: Some("/uni".parse().unwrap()),
            face_id: Some(uni),
            ..Default::default()
        };
        let r = cb.command("fib", "add-nexthop", &params).await?;
        anyhow::ensure!(r.code == 200, "fib/add-nexthop: {} {}", r.code, r.text);
        for k in 0..5 {
            fetch(&mut cb, &format!("/uni/obj/{k}")).await?;
        }

        // A saw B as an on-demand unicast peer and sent fragmented Data on
        // both the multicast and the unicast face.
        let sa = ca.snapshot().await?;
        let mcast = face(&sa.faces, "ether://[01:00:5e:00:17:aa]").expect("A multicast face");
        anyhow::ensure!(mcast.local_uri == format!("dev://{}", ns.if_a));
        anyhow::ensure!(mcast.link_type == 1 && mcast.mtu == Some(1500));
        anyhow::ensure!(
            mcast.counters.n_out_data >= 5,
            "A mcast out data {:?}",
            mcast.counters
        );
        let peer = face(&sa.faces, &format!("ether://[{MAC_B}]")).expect("A on-demand face to B");
        anyhow::ensure!(peer.face_persistency == 1, "on-demand");
        anyhow::ensure!(
            peer.counters.n_out_data >= 5,
            "A unicast out data {:?}",
            peer.counters
        );
        for f in [mcast, peer] {
            let st = sa.states.iter().find(|s| s.face_id == f.face_id).unwrap();
            // 4000-octet Data over MTU 1500 takes three frames each.
            anyhow::ensure!(
                st.n_out_frames >= 3 * f.counters.n_out_data,
                "no fragmentation on face {}: {} frames for {} Data",
                f.face_id,
                st.n_out_frames,
                f.counters.n_out_data
            );
        }
        let sb = cb.snapshot().await?;
        let unif = sb.faces.iter().find(|f| f.face_id == uni).unwrap();
        anyhow::ensure!(
            unif.counters.n_in_data >= 5,
            "B unicast in data {:?}",
            unif.counters
        );
        prod.abort();
        Ok(())
    });

    // `icnfwd status` prints the per-face state lines.
    let out = harness::status(&sock_a);
    assert!(out.contains("ether://[01:00:5e:00:17:aa]"), "{out}");
    assert!(out.contains("out-frames="), "{out}");
}

#[test]
fn udp_multicast_faces_between_namespaces() {
    let Some(ns) = NetnsPair::create("UDP multicast faces") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Unicast UDP off; the multicast faces use [udp] mtu (1400 here, so the
    // 4000-octet Data is fragmented into three datagrams).
    let udp = "[udp]\nenabled = false\nmtu = 1400\n";
    let (cfg_a, sock_a) = config(
        dir.path(),
        "a",
        &format!("{udp}[multicast]\nenabled = true\ninterfaces = [\"{ADDR_A}\"]\n"),
    );
    let (cfg_b, sock_b) = config(
        dir.path(),
        "b",
        &format!(
            "{udp}[multicast]\nenabled = true\ninterfaces = [\"{ADDR_B}\"]\n\
             [[route]]\nprefix = \"/mc\"\nface = \"udp4://224.0.23.170:56363\"\n"
        ),
    );
    let (log_a, log_b) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let _fa = ns.start(&ns.a, "icnfwd-a", &cfg_a, &sock_a, &log_a);
    let _fb = ns.start(&ns.b, "icnfwd-b", &cfg_b, &sock_b, &log_b);

    run_bounded_async(&[&log_a, &log_b], async {
        let prod = tokio::spawn(producer(sock_a.clone(), vec!["/mc"]));
        let mut ca = Client::connect(&sock_a).await?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while ca.snapshot().await?.rib.is_empty() {
            if prod.is_finished() {
                return Err(anyhow::anyhow!("producer ended early: {:?}", prod.await));
            }
            anyhow::ensure!(tokio::time::Instant::now() < deadline, "no registration");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut cb = Client::connect(&sock_b).await?;
        cb.set_timeout(Duration::from_secs(3));
        for k in 0..5 {
            fetch(&mut cb, &format!("/mc/obj/{k}")).await?;
        }
        let sa = ca.snapshot().await?;
        let m = face(&sa.faces, "udp4://224.0.23.170:56363").expect("A multicast face");
        anyhow::ensure!(
            m.local_uri == format!("udp4://{ADDR_A}:56363"),
            "{}",
            m.local_uri
        );
        anyhow::ensure!(m.counters.n_in_interests >= 5 && m.counters.n_out_data >= 5);
        let st = sa.states.iter().find(|s| s.face_id == m.face_id).unwrap();
        anyhow::ensure!(
            st.n_out_frames >= 3 * m.counters.n_out_data,
            "no fragmentation: {} frames for {} Data",
            st.n_out_frames,
            m.counters.n_out_data
        );
        prod.abort();
        Ok(())
    });
}
