//! Management from the network, over real UDP on loopback: with
//! `[udp] loopback_is_local = false` a UDP peer on 127.0.0.1 is a non-local
//! face, as any LAN host is. Its commands and dataset requests are refused
//! with 403 and counted, unless `[mgmt] localhop` is on and the command is a
//! rib/register|unregister signed by a trust anchor.

#[path = "interop/harness.rs"]
mod harness;

use std::net::UdpSocket;
use std::time::Duration;

use bytes::Bytes;
use ed25519_dalek::Signer;
use harness::*;
use icn_forwarder::mgmt::command::signed_command_with;
use icn_forwarder::mgmt::trust::SIG_ED25519;
use icn_forwarder::mgmt::{ControlParameters, ControlResponse};
use icn_tlv::{Data, Interest, Name};

const OPERATOR_SEED: [u8; 32] = [42; 32];

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A forwarder whose loopback UDP peers are non-local, plus `extra` TOML.
fn start(dir: &std::path::Path, name: &str, extra: &str) -> (Proc, std::path::PathBuf, u16) {
    let port = free_udp_port();
    let (cfg, sock) = write_config(dir, name, port, extra);
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[udp]\n", "[udp]\nloopback_is_local = false\n");
    std::fs::write(&cfg, text).unwrap();
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
    let p = Proc::spawn(
        name,
        std::process::Command::new(ICNFWD)
            .arg("--config")
            .arg(&cfg)
            .env("RUST_LOG", "info")
            .stdout(std::process::Stdio::null())
            .stderr(log),
    );
    wait_for_path(&sock, Duration::from_secs(5));
    (p, sock, port)
}

/// Sends one Interest from `peer` and returns the ControlResponse of the
/// reply named after it (every refusal is answered, so this is bounded).
fn ask(peer: &UdpSocket, port: u16, i: &Interest) -> ControlResponse {
    let wire = i.encode();
    let name = Interest::decode(wire.clone()).unwrap().name;
    peer.send_to(&wire, ("127.0.0.1", port)).unwrap();
    let mut buf = vec![0u8; 9000];
    loop {
        let n = peer
            .recv(&mut buf)
            .unwrap_or_else(|e| panic!("no reply to {name}: {e}"));
        let Ok(d) = Data::decode(Bytes::copy_from_slice(&buf[..n])) else {
            continue;
        };
        if d.name == name {
            return ControlResponse::decode(d.content.clone()).unwrap();
        }
    }
}

fn command(
    scope: &str,
    module: &str,
    verb: &str,
    p: &ControlParameters,
    seed: [u8; 32],
) -> Interest {
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    signed_command_with(
        scope,
        module,
        verb,
        p,
        SIG_ED25519,
        Some(&"/operator/KEY/1".parse().unwrap()),
        rand_nonce(),
        unix_ms(),
        |m| key.sign(m).to_bytes().to_vec(),
    )
}

fn rand_nonce() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    N.fetch_add(1, Ordering::Relaxed) ^ u64::from(std::process::id()) << 32
}

/// faces/create towards an address the peer chose, signed by the anchor.
fn faces_create() -> Interest {
    let p = ControlParameters {
        uri: Some(format!("udp4://127.0.0.1:{}", free_udp_port())),
        ..Default::default()
    };
    command("localhop", "faces", "create", &p, OPERATOR_SEED)
}

/// Faces listed by `icnfwd status`.
fn faces(status: &str) -> usize {
    status
        .lines()
        .filter(|l| l.starts_with("  faceid="))
        .count()
}

fn prefix(p: &str) -> ControlParameters {
    ControlParameters {
        name: Some(p.parse::<Name>().unwrap()),
        ..Default::default()
    }
}

fn peer() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s
}

/// A dataset request as NDNts and ndn-cxx send it.
fn dataset(name: &str) -> Interest {
    let mut i = Interest::new(name.parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(rand_nonce() as u32);
    i
}

#[test]
fn localhop_off_refuses_every_command_and_dataset_from_a_non_local_peer() {
    let dir = tempfile::tempdir().unwrap();
    let face_port = free_udp_port();
    let face = format!("[[face]]\nuri = \"udp4://127.0.0.1:{face_port}\"\n");
    let route =
        format!("[[route]]\nprefix = \"/static\"\nface = \"udp4://127.0.0.1:{face_port}\"\n");
    let (_fwd, sock, port) = start(dir.path(), "off", &(face + &route));
    let p = peer();
    // /localhost from a non-local face never reaches the manager (no reply);
    // the refused probes below are answered after it.
    let mut local = dataset("/localhost/nfd/status/general");
    local.nonce = Some(1);
    p.send_to(&local.encode(), ("127.0.0.1", port)).unwrap();
    let probes = [
        command("localhop", "rib", "register", &prefix("/"), OPERATOR_SEED),
        command(
            "localhop",
            "rib",
            "unregister",
            &prefix("/static"),
            OPERATOR_SEED,
        ),
        faces_create(),
        command(
            "localhop",
            "faces",
            "destroy",
            &ControlParameters {
                face_id: Some(256),
                ..Default::default()
            },
            OPERATOR_SEED,
        ),
        command(
            "localhop",
            "fib",
            "add-nexthop",
            &prefix("/"),
            OPERATOR_SEED,
        ),
        command(
            "localhop",
            "strategy-choice",
            "set",
            &ControlParameters {
                name: Some("/".parse().unwrap()),
                strategy: Some("/localhost/nfd/strategy/multicast".parse().unwrap()),
                ..Default::default()
            },
            OPERATOR_SEED,
        ),
        dataset("/localhop/nfd/faces/list"),
        dataset("/localhop/nfd/status/general"),
        dataset("/localhop/nfd/rib/list"),
    ];
    for i in &probes {
        let r = ask(&p, port, i);
        assert_eq!(
            (r.code, r.text.as_str()),
            (403, "mgmt-localhop-off"),
            "{}",
            i.name
        );
    }
    // Nothing changed: the static route and face are there, no new route,
    // face or strategy; the refusals are counted on the peer's face.
    let st = status(&sock);
    assert!(
        st.contains("/static nexthops={faceid=256 (cost=0)}"),
        "{st}"
    );
    assert!(
        st.contains(&format!("faceid=256 remote=udp4://127.0.0.1:{face_port}")),
        "{st}"
    );
    assert!(!st.contains("/ nexthops"), "{st}");
    assert!(
        !st.contains("strategy=/localhost/nfd/strategy/multicast"),
        "{st}"
    );
    assert!(
        st.contains("drops={localhost-scope=1, mgmt-localhop-off=9}"),
        "{st}"
    );
    // Also forwarder-wide, where they outlive the peer's face.
    let drops = st.split("Drops:\n").nth(1).unwrap_or_default();
    assert!(drops.contains("mgmt-localhop-off=9"), "{st}");
    // Nine refusals from one peer, one log line.
    let log = std::fs::read_to_string(dir.path().join("off.log")).unwrap();
    assert_eq!(log.matches("non-local face refused").count(), 1, "{log}");
    assert_eq!(faces(&st), 3, "static, peer and status client: {st}");
}

#[test]
fn localhop_on_accepts_only_signed_prefix_registration() {
    let dir = tempfile::tempdir().unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&OPERATOR_SEED);
    let mgmt = format!(
        "[mgmt]\nlocalhop = true\n[[mgmt.trust_anchor]]\nkey_prefix = \"/operator/KEY\"\nalgorithm = \"ed25519\"\npublic_key_hex = \"{}\"\n",
        hex::encode(key.verifying_key().to_bytes())
    );
    let (_fwd, sock, port) = start(dir.path(), "on", &mgmt);
    let p = peer();

    let ok = ask(
        &p,
        port,
        &command(
            "localhop",
            "rib",
            "register",
            &prefix("/prop"),
            OPERATOR_SEED,
        ),
    );
    assert_eq!(ok.code, 200, "{ok:?}");
    let wrong = ask(
        &p,
        port,
        &command("localhop", "rib", "register", &prefix("/evil"), [1; 32]),
    );
    assert_eq!(
        (wrong.code, wrong.text.as_str()),
        (403, "mgmt-bad-signature")
    );
    // Signed by the anchor, but not prefix propagation.
    let create = ask(&p, port, &faces_create());
    assert_eq!(
        (create.code, create.text.as_str()),
        (403, "mgmt-not-allowed")
    );
    let list = ask(&p, port, &dataset("/localhop/nfd/faces/list"));
    assert_eq!(list.code, 403);
    // A DigestSha256 command (what local clients send) is not a trust anchor's.
    let digest = signed_command_with(
        "localhop",
        "rib",
        "register",
        &prefix("/digest"),
        0,
        None,
        rand_nonce(),
        unix_ms(),
        |m| <sha2::Sha256 as sha2::Digest>::digest(m).to_vec(),
    );
    assert_eq!(ask(&p, port, &digest).text, "mgmt-unsigned");

    let st = status(&sock);
    assert!(st.contains("/prop nexthops={faceid="), "{st}");
    assert!(!st.contains("/evil"), "{st}");
    assert!(!st.contains("/digest"), "{st}");
    for c in [
        "mgmt-bad-signature=1",
        "mgmt-not-allowed=2",
        "mgmt-unsigned=1",
    ] {
        assert!(st.contains(c), "{c}: {st}");
    }
    assert_eq!(faces(&st), 2, "peer and status client, none created: {st}");
}

/// Polls the daemon's log until it contains `what` `n` times (SIGHUP is
/// handled by the engine task between packets), failing after 5 s.
fn log_until(log: &std::path::Path, what: &str, n: usize) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(log).unwrap();
        if text.matches(what).count() >= n {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} × `{what}`: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sighup_applies_mgmt_both_ways_and_keeps_replay_protection() {
    let dir = tempfile::tempdir().unwrap();
    let (fwd, sock, port) = start(dir.path(), "hup", "");
    let cfg = dir.path().join("hup.toml");
    let log = dir.path().join("hup.log");
    let off = std::fs::read_to_string(&cfg).unwrap();
    let p = peer();
    let register = |p: &str| command("localhop", "rib", "register", &prefix(p), OPERATOR_SEED);
    let r = ask(&p, port, &register("/before"));
    assert_eq!((r.code, r.text.as_str()), (403, "mgmt-localhop-off"));

    let key = ed25519_dalek::SigningKey::from_bytes(&OPERATOR_SEED);
    std::fs::write(
        &cfg,
        format!(
            "{off}[mgmt]\nlocalhop = true\nrefusal_log_interval_s = 5\n[[mgmt.trust_anchor]]\nkey_prefix = \"/operator/KEY\"\nalgorithm = \"ed25519\"\npublic_key_hex = \"{}\"\n",
            hex::encode(key.verifying_key().to_bytes())
        ),
    )
    .unwrap();
    fwd.signal(libc::SIGHUP);
    let text = log_until(&log, "configuration reloaded", 1);
    for k in [
        "key=\"mgmt.localhop\" old=false new=true",
        "key=\"mgmt.trust_anchor\" old=0 new=1",
        "key=\"mgmt.refusal_log_interval_s\" old=60 new=5",
    ] {
        assert!(text.contains(k), "{k}: {text}");
    }
    let signed = register("/after");
    let r = ask(&p, port, &signed);
    assert_eq!(r.code, 200, "{r:?}");

    // Off again: the same peer is refused, and the counters kept.
    std::fs::write(&cfg, &off).unwrap();
    fwd.signal(libc::SIGHUP);
    log_until(&log, "key=\"mgmt.localhop\" old=true new=false", 1);
    let r = ask(&p, port, &register("/later"));
    assert_eq!((r.code, r.text.as_str()), (403, "mgmt-localhop-off"));
    let st = status(&sock);
    assert!(st.contains("/after nexthops={faceid="), "{st}");
    assert!(st.contains("mgmt-localhop-off=2"), "{st}");

    // On once more: a command accepted before is still a replay.
    std::fs::write(
        &cfg,
        format!(
            "{off}[mgmt]\nlocalhop = true\n[[mgmt.trust_anchor]]\nkey_prefix = \"/operator/KEY\"\nalgorithm = \"ed25519\"\npublic_key_hex = \"{}\"\n",
            hex::encode(key.verifying_key().to_bytes())
        ),
    )
    .unwrap();
    fwd.signal(libc::SIGHUP);
    log_until(&log, "key=\"mgmt.localhop\" old=false new=true", 2);
    let mut again = signed.clone();
    again.nonce = Some(rand_nonce() as u32);
    let r = ask(&p, port, &again);
    assert_eq!((r.code, r.text.as_str()), (403, "mgmt-stale"), "{r:?}");
}
