//! Start-up readiness: `[[face]]`s are open (TCP ones connected), `[[route]]`s
//! and `[[strategy]]`s installed before the Unix socket appears, and
//! `READY=1` goes to `$NOTIFY_SOCKET` once clients can connect.

#[path = "interop/harness.rs"]
mod harness;

use std::io::Read;
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::*;
use icn_forwarder::daemon::client::Client;
use icn_tlv::{Interest, Name};

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

#[test]
fn routes_and_faces_are_ready_when_the_socket_appears() {
    let dir = tempfile::tempdir().unwrap();
    let udp_peer = free_udp_port();
    // A TCP peer: the permanent face must be connected before clients come.
    let peer = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp_peer = peer.local_addr().unwrap();
    let extra = format!(
        "[[face]]\nuri = \"udp4://127.0.0.1:{udp_peer}\"\n\
         [[face]]\nuri = \"tcp4://{tcp_peer}\"\n\
         [[route]]\nprefix = \"/ready/udp\"\nface = \"udp4://127.0.0.1:{udp_peer}\"\ncost = 7\n\
         [[route]]\nprefix = \"/ready/tcp\"\nface = \"tcp4://{tcp_peer}\"\n\
         [[strategy]]\nprefix = \"/ready/udp\"\nstrategy = \"/localhost/nfd/strategy/multicast\"\n"
    );
    let (cfg, sock) = write_config(dir.path(), "r", free_udp_port(), &extra);
    let notify_path = dir.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _fwd = Proc::spawn(
        "icnfwd",
        Command::new(ICNFWD)
            .arg("--config")
            .arg(&cfg)
            .env("RUST_LOG", "warn")
            .env("NOTIFY_SOCKET", &notify_path)
            .stdout(Stdio::null()),
    );
    // Poll for the path as tightly as a client would, then connect at once.
    let t0 = Instant::now();
    while !sock.exists() {
        assert!(t0.elapsed() < Duration::from_secs(10), "no socket");
        std::thread::sleep(Duration::from_millis(1));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let snap = rt.block_on(async {
        let mut c = Client::connect(&sock).await.unwrap();
        let snap = c.snapshot().await.unwrap();
        // Forwarded to the TCP peer right away, not dropped on a face
        // that is still connecting.
        let mut i = Interest::new(n("/ready/tcp/first"));
        i.nonce = Some(0x5eed_0001);
        i.lifetime = Some(cc_core::Duration::from_millis(2000));
        c.send(&i.encode()).await.unwrap();
        snap
    });
    let udp_face = snap
        .faces
        .iter()
        .find(|f| f.uri == format!("udp4://127.0.0.1:{udp_peer}"))
        .expect("UDP [[face]] open");
    let tcp_face = snap
        .faces
        .iter()
        .find(|f| f.uri == format!("tcp4://{tcp_peer}"))
        .expect("TCP [[face]] open");
    let hops = |p: &str| {
        snap.fib
            .iter()
            .find(|e| e.name == n(p))
            .map(|e| e.next_hops.clone())
    };
    assert_eq!(hops("/ready/udp"), Some(vec![(udp_face.face_id, 7)]));
    assert_eq!(hops("/ready/tcp"), Some(vec![(tcp_face.face_id, 0)]));
    assert!(
        snap.strategies.iter().any(|s| s.name == n("/ready/udp")
            && n("/localhost/nfd/strategy/multicast").is_prefix_of(&s.strategy)),
        "{:?}",
        snap.strategies
    );

    let (mut conn, _) = peer.accept().unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let want = n("/ready/tcp/first");
    let deadline = Instant::now() + Duration::from_secs(2);
    let seen = loop {
        assert!(Instant::now() < deadline, "Interest not forwarded");
        let k = conn.read(&mut buf).expect("read from icnfwd");
        assert!(k > 0, "icnfwd closed the TCP face");
        got.extend_from_slice(&buf[..k]);
        if let Ok(i) = Interest::decode(bytes::Bytes::copy_from_slice(&got)) {
            break i;
        }
    };
    assert_eq!(seen.name, want);
    // The Interest's wait in the TCP face's egress queue is in its state.
    let snap = rt.block_on(async {
        let mut c = Client::connect(&sock).await.unwrap();
        c.snapshot().await.unwrap()
    });
    let st = snap
        .states
        .iter()
        .find(|s| s.face_id == tcp_face.face_id)
        .expect("icnfwd-state of the TCP face");
    assert!(
        st.sojourn_last_ns.is_some() && st.sojourn_p95_ns >= st.sojourn_last_ns.map(|_| 1),
        "{st:?}"
    );
    assert!(st.sojourn_max_ns >= st.sojourn_last_ns, "{st:?}");

    let mut msg = [0u8; 64];
    let k = notify.recv(&mut msg).expect("READY=1 on NOTIFY_SOCKET");
    assert_eq!(&msg[..k], b"READY=1");
}
