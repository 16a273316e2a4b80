//! The Prometheus endpoint of a running icnfwd, scraped over loopback: the
//! exposition parses strictly, the per-face series exist, and a transfer
//! through the forwarder moves its counters by what was sent.

#[path = "interop/harness.rs"]
mod harness;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use harness::*;
use icn_forwarder::daemon::client::Client;
use icn_forwarder::mgmt::ControlParameters;
use icn_tlv::{Data, Interest, LpPacket, Name};

const CAPACITY_BPS: u64 = 40_000_000;
const SEGMENTS: u64 = 30;

/// One sample: metric name, labels, value.
type Sample = (String, HashMap<String, String>, f64);

/// `GET <path>` on 127.0.0.1:`port`; (status code, body).
fn http(port: u16, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").expect("a response head");
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    (code, body.to_owned())
}

fn scrape(port: u16) -> Vec<Sample> {
    let (code, body) = http(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(code, 200, "{body}");
    parse(&body)
}

/// A strict reader of the OpenMetrics text format: every line is a
/// HELP/TYPE/UNIT comment, a sample of a declared family, or the final
/// `# EOF`; anything else fails the test.
fn parse(text: &str) -> Vec<Sample> {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut samples = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"# EOF"),
        "exposition must end with # EOF"
    );
    for line in &lines[..lines.len() - 1] {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut p = rest.splitn(3, ' ');
            let (kind, name) = (p.next().unwrap(), p.next().expect("a family name"));
            match kind {
                "TYPE" => {
                    let t = p.next().expect("a type");
                    assert!(
                        ["counter", "gauge", "info", "unknown"].contains(&t),
                        "{line}"
                    );
                    types.insert(name.to_owned(), t.to_owned());
                }
                "HELP" | "UNIT" => {}
                _ => panic!("unexpected comment: {line}"),
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, parse_labels(l.strip_suffix('}').expect("closing brace"))),
            None => (series, HashMap::new()),
        };
        let family = name.strip_suffix("_total").unwrap_or(name);
        let t = types
            .get(family)
            .unwrap_or_else(|| panic!("undeclared family: {line}"));
        if t == "counter" {
            assert!(name.ends_with("_total") && value >= 0.0, "{line}");
        }
        samples.push((name.to_owned(), labels, value));
    }
    samples
}

fn parse_labels(s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (k, r) = rest.split_once("=\"").expect("label=\"value\"");
        let mut v = String::new();
        let mut chars = r.char_indices();
        let end = loop {
            match chars.next().expect("unterminated label value") {
                (_, '\\') => match chars.next().expect("escape").1 {
                    'n' => v.push('\n'),
                    c => v.push(c),
                },
                (i, '"') => break i,
                (_, c) => v.push(c),
            }
        };
        assert!(out.insert(k.to_owned(), v).is_none(), "duplicate label {k}");
        rest = r[end + 1..].strip_prefix(',').unwrap_or(&r[end + 1..]);
    }
    out
}

/// The value of the one sample named `name` whose labels include `want`.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let hits: Vec<f64> = samples
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && want
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.2)
        .collect();
    assert!(hits.len() <= 1, "{name} {want:?} is ambiguous");
    hits.first().copied()
}

/// Registers `prefix` at the forwarder on `sock` and answers every
/// Interest under it with 1000 bytes, until the task is dropped.
async fn producer(sock: &Path, prefix: &str) -> tokio::task::JoinHandle<()> {
    let mut c = Client::connect(sock).await.unwrap();
    let p = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..Default::default()
    };
    c.command_ok("rib", "register", &p).await.unwrap();
    tokio::spawn(async move {
        loop {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            let Ok((typ, el)) = c.recv_until(deadline).await else {
                return;
            };
            // Under a CC scheme the Interest may come in an LpPacket
            // carrying CC fields; the Data goes back bare.
            let wire = match typ {
                5 => el,
                100 => match LpPacket::decode(el).ok().and_then(|lp| lp.fragment) {
                    Some(f) => f,
                    None => continue,
                },
                _ => continue,
            };
            let Ok(i) = Interest::decode(wire) else {
                continue;
            };
            let d = Data::new(i.name, Bytes::from(vec![7u8; 1000]));
            c.send(&d.encode_signed_digest_sha256()).await.unwrap();
        }
    })
}

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
    let face = before
        .iter()
        .find(|(n, l, _)| n == "icnfwd_face_info" && l.get("remote") == Some(&remote))
        .map(|(_, l, _)| l["face"].clone())
        .expect("an info series for the configured face");
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
        let _producer = producer(&sock_b, "/m").await;
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
