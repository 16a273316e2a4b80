//! SRMCC multicast over real processes (issue 7 acceptance): three network
//! namespaces, one icnfwd each, `icnput --multicast` streaming a file to
//! three `icncat --subscribe` receivers.
//!
//! ```text
//!   ns S: icnfwd + icnput --multicast /mc/file FILE
//!     │ 4 Mbit/s (icnfwd pacing), 5 ms
//!   ns B: icnfwd + icncat --subscribe (receiver 1)       ← branch: 2 copies
//!     │ 2 Mbit/s, 5 ms
//!   ns R: icnfwd + icncat --subscribe (receivers 2, 3)   ← branch: 2 copies
//! ```
//!
//! Receivers report a 1.5 Mbit/s access capacity, so SRMCC converges to
//! 1.5 Mbit/s (the tree's minimum fair share) below the 2 Mbit/s bottleneck.
//! Prints each receiver's rate and loss; skips loudly without root.
//!
//! `sudo -E cargo test --release --test mcast_testbed -- --nocapture`

#[path = "testbed/mod.rs"]
mod testbed;

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use testbed::bins::bins;
use testbed::netns::{self, Netns};
use testbed::topo::{tbf_rate_bps, ChildGuard};

const GROUP: &str = "/mc/file";
const FILE_BYTES: usize = 1_200_000;

struct Node {
    ns: Netns,
    sock: std::path::PathBuf,
    fwd: Option<ChildGuard>,
}

fn forwarder_config(sock: &Path, faces: &[(String, u64)], route_via: Option<&str>) -> String {
    let mut c = String::new();
    let _ = writeln!(c, "log_level = \"warn\"");
    let _ = writeln!(
        c,
        "[unix]\nenabled = true\npath = {:?}",
        sock.display().to_string()
    );
    let _ = writeln!(c, "[udp]\nenabled = true\nlisten = [\"0.0.0.0:6363\"]");
    let _ = writeln!(c, "[tcp]\nenabled = false");
    let _ = writeln!(
        c,
        "[multicast_groups]\nfeedback_period_ms = 400\nrefresh_period_ms = 1000"
    );
    for (uri, bps) in faces {
        let _ = writeln!(c, "[[face]]\nuri = \"{uri}\"\ncapacity_bps = {bps}");
    }
    if let Some(via) = route_via {
        let _ = writeln!(c, "[[route]]\nprefix = \"{GROUP}\"\nface = \"{via}\"");
    }
    c
}

fn wait_socket(name: &str, n: &mut Node) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let f = n.fwd.as_mut().expect("started");
        assert!(f.alive(), "icnfwd on {name} exited:\n{}", f.log_tail(20));
        if std::os::unix::net::UnixStream::connect(&n.sock).is_ok() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "icnfwd on {name} did not open its socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(g: &mut ChildGuard, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !g.alive() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn file_streams_to_three_receivers_through_three_nodes() {
    if !testbed::available_or_explain("mcast_testbed") {
        return;
    }
    let bins = bins().expect("testbed binaries");
    netns::remove_stale();
    let dir = tempfile::Builder::new()
        .prefix("icn-mcast-")
        .tempdir()
        .unwrap();
    let d = dir.path();
    let mut nodes: Vec<(String, Node)> = ["S", "B", "R"]
        .iter()
        .map(|n| {
            let ns = Netns::create().expect("netns");
            let sock = d.join(format!("{n}.sock"));
            (
                n.to_string(),
                Node {
                    ns,
                    sock,
                    fwd: None,
                },
            )
        })
        .collect();
    let (sb_bps, br_bps) = (4_000_000u64, 2_000_000u64);
    let sb = netns::connect(&nodes[0].1.ns, &nodes[1].1.ns, Some(tbf_rate_bps(sb_bps))).unwrap();
    let br = netns::connect(&nodes[1].1.ns, &nodes[2].1.ns, Some(tbf_rate_bps(br_bps))).unwrap();
    let uri = |addr: &str| format!("udp4://{addr}:6363");
    let configs = [
        forwarder_config(&nodes[0].1.sock, &[(uri(&sb.b.addr), sb_bps)], None),
        forwarder_config(
            &nodes[1].1.sock,
            &[(uri(&sb.a.addr), sb_bps), (uri(&br.b.addr), br_bps)],
            Some(&uri(&sb.a.addr)),
        ),
        forwarder_config(
            &nodes[2].1.sock,
            &[(uri(&br.a.addr), br_bps)],
            Some(&uri(&br.a.addr)),
        ),
    ];
    for ((name, node), cfg) in nodes.iter_mut().zip(configs) {
        let path = d.join(format!("{name}.toml"));
        std::fs::write(&path, cfg).unwrap();
        let mut cmd = node.ns.command(bins.icnfwd.to_str().unwrap());
        cmd.arg("--config").arg(&path);
        node.fwd = Some(
            ChildGuard::spawn(
                &format!("icnfwd@{name}"),
                cmd,
                d.join(format!("{name}.log")),
            )
            .unwrap(),
        );
    }
    for (name, node) in &mut nodes {
        wait_socket(name, node);
    }

    // The file: deterministic bytes, so each receiver's copy can be compared.
    let input = d.join("input.bin");
    let content: Vec<u8> = (0..FILE_BYTES).map(|i| (i * 7 + i / 1000) as u8).collect();
    std::fs::write(&input, &content).unwrap();

    let transport = |i: usize| format!("unix://{}", nodes[i].1.sock.display());
    let mut receivers = Vec::new();
    for (k, node_ix) in [1usize, 2, 2].into_iter().enumerate() {
        let mut cmd = nodes[node_ix].1.ns.command(bins.icncat.to_str().unwrap());
        cmd.args([
            "--subscribe",
            GROUP,
            "--access-capacity",
            "1.5Mbps",
            "--idle-timeout",
            "5",
        ])
        .args(["--duration", "90", "--transport", &transport(node_ix)])
        .arg("-o")
        .arg(d.join(format!("rx{k}.bin")))
        .arg("--stats-json")
        .arg(d.join(format!("rx{k}.json")));
        receivers.push(
            ChildGuard::spawn(&format!("icncat#{k}"), cmd, d.join(format!("rx{k}.log"))).unwrap(),
        );
    }
    // Let the joins graft B and R before the source registers.
    std::thread::sleep(Duration::from_millis(1500));
    let mut cmd = nodes[0].1.ns.command(bins.icnput.to_str().unwrap());
    cmd.args([
        "--multicast",
        GROUP,
        "--transport",
        &transport(0),
        "--rtt",
        "50",
    ])
    .arg("--stats-json")
    .arg(d.join("src.json"))
    .arg(&input);
    let started = Instant::now();
    let mut src = ChildGuard::spawn("icnput", cmd, d.join("src.log")).unwrap();
    let src_done = wait_exit(&mut src, Duration::from_secs(90));
    let mut all_done = true;
    for r in &mut receivers {
        all_done &= wait_exit(r, Duration::from_secs(15));
    }
    let elapsed = started.elapsed();
    let logs = || {
        let mut s = format!("--- icnput:\n{}\n", src.log_tail(15));
        for r in &receivers {
            let _ = writeln!(s, "--- {}:\n{}", r.name, r.log_tail(8));
        }
        for (name, n) in &nodes {
            let _ = writeln!(
                s,
                "--- icnfwd@{name}:\n{}",
                n.fwd.as_ref().unwrap().log_tail(10)
            );
        }
        s
    };
    assert!(
        src_done && all_done,
        "processes did not finish in time\n{}",
        logs()
    );

    let src_report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("src.json")).unwrap()).unwrap();
    println!(
        "source: {} packets in {:.1} s, {} MCC messages ({:.2}/s), final rate {:.3} Mbit/s (run {:.1} s)",
        src_report["packets_sent"],
        src_report["duration_s"].as_f64().unwrap_or(0.0),
        src_report["feedback_in"],
        src_report["feedback_in"].as_f64().unwrap_or(0.0)
            / src_report["duration_s"].as_f64().unwrap_or(1.0).max(0.1),
        src_report["final_rate_bps"].as_f64().unwrap_or(0.0) / 1e6,
        elapsed.as_secs_f64()
    );
    let sent = src_report["packets_sent"].as_u64().unwrap_or(0);
    assert!(
        sent >= (FILE_BYTES / 1000) as u64,
        "source sent {sent}\n{}",
        logs()
    );
    // One MCC message per 400 ms period (± slack for start and end).
    let fb = src_report["feedback_in"].as_f64().unwrap_or(0.0);
    let dur = src_report["duration_s"].as_f64().unwrap_or(0.0);
    assert!(
        fb >= dur / 0.4 * 0.7 && fb <= dur / 0.4 + 4.0,
        "{fb} MCC messages in {dur} s"
    );

    for k in 0..3 {
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join(format!("rx{k}.json"))).unwrap()).unwrap();
        let got = std::fs::read(d.join(format!("rx{k}.bin"))).unwrap();
        // Steady state: the 1 s received-rate samples after the ramp-up
        // (second half of the samples that saw traffic).
        let mut steady: Vec<f64> = r["samples"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(|s| s["received_rate_bps"].as_f64())
                    .collect()
            })
            .unwrap_or_default();
        steady.retain(|x| *x > 0.0);
        let steady = steady.split_off(steady.len() / 2);
        let steady_bps = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
        println!(
            "receiver {k}: steady rate {:.3} Mbit/s, {} packets, lost {} ({:.2} %), mean rate {:.3} Mbit/s, announced {:.3}..{:.3} Mbit/s, end {}, file {}",
            steady_bps / 1e6,
            r["packets"],
            r["lost"],
            r["loss_ratio"].as_f64().unwrap_or(1.0) * 100.0,
            r["mean_rate_bps"].as_f64().unwrap_or(0.0) / 1e6,
            r["announced_min_bps"].as_f64().unwrap_or(0.0) / 1e6,
            r["announced_max_bps"].as_f64().unwrap_or(0.0) / 1e6,
            r["ended"],
            if got == content { "identical" } else { "differs" },
        );
        assert_eq!(
            r["ended"],
            serde_json::Value::Bool(true),
            "receiver {k}\n{}",
            logs()
        );
        let loss = r["loss_ratio"].as_f64().unwrap_or(1.0);
        assert!(loss <= 0.01, "receiver {k} loss {loss}\n{}", logs());
        assert!(
            steady_bps > 1_000_000.0,
            "receiver {k} steady rate {steady_bps}\n{}",
            logs()
        );
        let rate = r["mean_rate_bps"].as_f64().unwrap_or(0.0);
        assert!(
            rate <= 2_000_000.0,
            "receiver {k} above the bottleneck: {rate}"
        );
        if r["lost"].as_u64() == Some(0) && r["late"].as_u64() == Some(0) {
            assert!(
                got == content,
                "receiver {k}: lossless stream but the file differs"
            );
        }
    }
}
