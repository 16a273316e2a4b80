//! While a non-local peer floods the PIT over UDP, the part of the PIT kept
//! for local faces still serves `icnfwd status` and a local producer's
//! rib/register (the issue-17 probe: both failed with Nack Congestion).

#[path = "interop/harness.rs"]
mod harness;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use harness::*;
use icn_forwarder::daemon::client::Client;
use icn_forwarder::mgmt::ControlParameters;

#[test]
fn status_and_local_registration_work_while_the_pit_is_flooded() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_udp_port();
    let silent = free_udp_port();
    let extra = format!(
        "[tables]\npit_max_entries = 320\n[limits]\nface_share_percent = 100\n[[face]]\nuri = \"udp4://127.0.0.1:{silent}\"\n[[route]]\nprefix = \"/silent\"\nface = \"udp4://127.0.0.1:{silent}\"\n"
    );
    let (cfg, sock) = write_config(dir.path(), "f", port, &extra);
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[udp]\n", "[udp]\nloopback_is_local = false\n");
    std::fs::write(&cfg, text).unwrap();
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);

    // The flooder takes every entry it may (share 100 %): 300 of 320.
    let flooder = UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..2000u32 {
        let mut it = icn_tlv::Interest::new(format!("/silent/{i}").parse().unwrap());
        it.nonce = Some(i + 1);
        it.lifetime = Some(Duration::from_secs(60));
        flooder.send_to(&it.encode(), ("127.0.0.1", port)).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let st = loop {
        let st = status(&sock);
        if st.contains("pit-full=") || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(st.contains("pit-entries=30"), "non-local part full: {st}");
    assert!(st.contains("pit-full="), "{st}");

    // A local producer registers its prefix during the flood.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (resp, _client) = rt.block_on(async {
        let mut c = Client::connect(&sock).await.unwrap();
        let p = ControlParameters {
            name: Some("/producer".parse().unwrap()),
            ..Default::default()
        };
        let r = tokio::time::timeout(Duration::from_secs(5), c.command("rib", "register", &p))
            .await
            .expect("no reply")
            .unwrap();
        (r, c)
    });
    assert_eq!(resp.code, 200, "{resp:?}");
    // Routes go with their face: keep the producer's connection open.
    let st = status(&sock);
    assert!(st.contains("/producer nexthops"), "{st}");
}
