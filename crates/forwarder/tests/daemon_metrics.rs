//! The Prometheus endpoint of a running icnfwd, scraped over loopback: the
//! exposition parses strictly, the per-face series exist, and a transfer
//! through the forwarder moves its counters by what was sent.

#[path = "interop/harness.rs"]
mod harness;

use std::time::Duration;

use harness::*;
use icn_forwarder::daemon::client::Client;
use icn_test_support::openmetrics::{face_of, http, scrape, value, Sample};
use icn_tlv::{Interest, Name};

const CAPACITY_BPS: u64 = 40_000_000;
const SEGMENTS: u64 = 30;

#[test]
fn scrape_shows_face_series_and_counts_a_transfer() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb, mport) = (free_udp_port(), free_udp_port(), free_tcp_port());
    let remote = format!("udp4://127.0.0.1:{pb}");
    let extra = format!(
        "[metrics]\nlisten = \"127.0.0.1:{mport}\"\n[cc]\nscheme = \"rcp\"\n\
         [[face]]\nuri = \"{remote}\"\ncapacity_bps = {CAPACITY_BPS}\n\
         [[route]]\nprefix = \"/m\"\nface = \"{remote}\"\n"
    );
    let (cfg_a, sock_a) = write_config(dir.path(), "a", pa, &extra);
    let (cfg_b, sock_b) = write_config(dir.path(), "b", pb, "[cc]\nscheme = \"rcp\"\n");
    let _a = start_icnfwd("icnfwd-a", &cfg_a, &sock_a);
    let _b = start_icnfwd("icnfwd-b", &cfg_b, &sock_b);

    let before = scrape(mport);
    let face = face_of(&before, &remote).expect("an info series for the configured face");
    let f = face.as_str();
    let packets = |s: &[Sample], dir: &str, typ: &str| {
        value(
            s,
            "icnfwd_face_packets_total",
            &[("face", f), ("direction", dir), ("type", typ)],
        )
        .unwrap_or_else(|| panic!("no {dir} {typ} series for face {f}"))
    };
    let (out0, in0) = (
        packets(&before, "out", "interest"),
        packets(&before, "in", "data"),
    );
    assert_eq!(
        value(&before, "icnfwd_face_capacity_bps", &[("face", f)]),
        Some(CAPACITY_BPS as f64)
    );
    for table in ["pit", "cs", "fib"] {
        assert!(value(&before, "icnfwd_table_entries", &[("table", table)]).is_some());
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let _producer = producer(&sock_b, "/m", 1000).await;
        let mut c = Client::connect(&sock_a).await.unwrap();
        c.set_timeout(Duration::from_secs(5));
        for i in 0..SEGMENTS {
            let mut int = Interest::new(format!("/m/seg/{i}").parse::<Name>().unwrap());
            int.nonce = Some(0x5eed_0000 + i as u32);
            int.lifetime = Some(Duration::from_secs(4));
            let d = c.express(int).await.unwrap();
            assert_eq!(d.content.len(), 1000);
        }
    });

    let after = scrape(mport);
    assert!(packets(&after, "out", "interest") - out0 >= SEGMENTS as f64);
    assert!(packets(&after, "in", "data") - in0 >= SEGMENTS as f64);
    let bytes_in = value(
        &after,
        "icnfwd_face_bytes_total",
        &[("face", f), ("direction", "in")],
    )
    .unwrap();
    assert!(bytes_in >= (SEGMENTS * 1000) as f64, "{bytes_in}");
    assert!(value(&after, "icnfwd_table_entries", &[("table", "cs")]).unwrap() >= SEGMENTS as f64);
    // cs/info: every segment was looked up and missed, then stored.
    let misses = value(&after, "icnfwd_cs_lookups_total", &[("result", "miss")]).unwrap();
    assert!(misses >= SEGMENTS as f64, "{misses}");
    let cs_bytes = value(&after, "icnfwd_cs_bytes", &[]).unwrap();
    assert!(cs_bytes >= (SEGMENTS * 1000) as f64, "{cs_bytes}");
    // Every face has its AQM series (no AQM under RCP: zero marks).
    assert_eq!(
        value(&after, "icnfwd_face_aqm_marks_total", &[("face", f)]),
        Some(0.0)
    );
    // RCP on a paced face: the rate it stamps into Data.
    let r = value(
        &after,
        "icnfwd_face_cc_rate_bps",
        &[("face", f), ("rate", "primary")],
    )
    .expect("RCP's stamped rate R");
    assert!(r > 0.0 && r <= CAPACITY_BPS as f64, "{r}");
    assert!(value(
        &after,
        "icnfwd_face_sojourn_seconds",
        &[("face", f), ("stat", "max")]
    )
    .is_some());

    assert_eq!(http(mport, "GET / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(mport, "POST /metrics HTTP/1.1\r\n\r\n").0, 405);
    let huge = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    assert_eq!(http(mport, &huge).0, 431);
    // Still serving after the refusals.
    assert!(!scrape(mport).is_empty());
}

#[test]
fn non_loopback_metrics_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("m.toml");
    std::fs::write(&cfg, "[metrics]\nlisten = \"0.0.0.0:9101\"\n").unwrap();
    let out = run_bounded(
        std::process::Command::new(ICNFWD)
            .arg("--config")
            .arg(&cfg)
            .arg("check-config"),
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("metrics.listen"), "{err}");
}
