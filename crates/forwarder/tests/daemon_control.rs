//! The control verbs against a running icnfwd: a UDP face to a loopback
//! peer and a route added, listed (parsed from `--json`) and removed;
//! refusals exit non-zero with the ControlResponse code and text.

#[path = "interop/harness.rs"]
mod harness;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use harness::*;
use serde_json::Value;

/// `icnfwd --socket <sock> <args>`, bounded in time.
fn ctl(sock: &Path, args: &[&str]) -> Output {
    run_bounded(
        Command::new(ICNFWD)
            .arg("--socket")
            .arg(sock)
            .args(args)
            .env_remove("RUST_BACKTRACE"),
        Duration::from_secs(15),
    )
}

/// A verb that must fail; returns its stderr.
fn refused(sock: &Path, args: &[&str]) -> String {
    let out = ctl(sock, args);
    assert!(!out.status.success(), "icnfwd {args:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

fn json(sock: &Path, args: &[&str]) -> Value {
    let text = ctl_ok(sock, args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

/// The items of a `--json` listing whose `key` equals `value`.
fn items_with(list: &Value, key: &str, value: &str) -> Vec<Value> {
    list.as_array()
        .unwrap()
        .iter()
        .filter(|x| x[key] == value)
        .cloned()
        .collect()
}

fn face_ids_to(faces: &Value, remote: &str) -> Vec<u64> {
    items_with(faces, "remote_uri", remote)
        .iter()
        .map(|f| f["face_id"].as_u64().unwrap())
        .collect()
}

fn routes_of(routes: &Value, prefix: &str) -> Vec<Value> {
    items_with(routes, "prefix", prefix)
}

#[test]
fn face_and_route_verbs_add_list_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, sock) = write_config(dir.path(), "c", free_udp_port(), "");
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    let remote = format!("udp4://127.0.0.1:{}", free_udp_port());

    let created = ctl_ok(&sock, &["face", "create", &remote]);
    assert!(created.starts_with("face-created id="), "{created}");
    assert!(created.contains(&format!("remote={remote}")), "{created}");
    // nfdc: creating it again names the existing face and succeeds.
    let again = ctl_ok(&sock, &["face", "create", &remote]);
    assert!(again.starts_with("face-exists id="), "{again}");

    let ids = face_ids_to(&json(&sock, &["face", "list", "--json"]), &remote);
    assert_eq!(ids.len(), 1, "one face to {remote}");
    let id = ids[0];
    assert!(created.contains(&format!("id={id} ")), "{created}");

    // The nexthop by its FaceUri, as nfdc accepts it.
    let added = ctl_ok(
        &sock,
        &["route", "add", "/ctl/test", &remote, "--cost", "7"],
    );
    assert!(
        added.starts_with(&format!(
            "route-add-accepted prefix=/ctl/test nexthop={id} origin=255 cost=7"
        )),
        "{added}"
    );
    let routes = json(&sock, &["route", "list", "--json"]);
    let mine = routes_of(&routes, "/ctl/test");
    assert_eq!(mine.len(), 1, "{routes}");
    assert_eq!(mine[0]["face_id"], id);
    assert_eq!(mine[0]["cost"], 7);
    assert_eq!(mine[0]["origin"], 255);
    assert_eq!(mine[0]["flags"], "child-inherit");
    // The text listing says the same.
    let text = ctl_ok(&sock, &["route", "list"]);
    assert!(
        text.contains(&format!("prefix=/ctl/test nexthop={id} origin=255 cost=7")),
        "{text}"
    );

    let st = json(&sock, &["status", "--json"]);
    assert!(
        st["fib"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["prefix"] == "/ctl/test" && e["nexthops"][0]["face_id"] == id),
        "{st}"
    );

    let removed = ctl_ok(&sock, &["route", "remove", "/ctl/test", &id.to_string()]);
    assert!(
        removed.starts_with("route-removed prefix=/ctl/test"),
        "{removed}"
    );
    assert!(routes_of(&json(&sock, &["route", "list", "--json"]), "/ctl/test").is_empty());
    let err = refused(&sock, &["route", "remove", "/ctl/test", &id.to_string()]);
    assert!(err.contains("route-not-found"), "{err}");

    let destroyed = ctl_ok(&sock, &["face", "destroy", &id.to_string()]);
    assert!(
        destroyed.starts_with(&format!("face-destroyed id={id}")),
        "{destroyed}"
    );
    assert!(face_ids_to(&json(&sock, &["face", "list", "--json"]), &remote).is_empty());
    let err = refused(&sock, &["face", "destroy", &id.to_string()]);
    assert!(err.contains(&format!("face-not-found id={id}")), "{err}");
    // A route toward a face that is gone is refused by the forwarder.
    let err = refused(&sock, &["route", "add", "/ctl/x", &id.to_string()]);
    assert!(err.contains("410 Face not found"), "{err}");
}

#[test]
fn strategy_and_cs_verbs() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, sock) = write_config(dir.path(), "s", free_udp_port(), "");
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);

    let set = ctl_ok(
        &sock,
        &[
            "strategy",
            "set",
            "/ctl",
            "/localhost/nfd/strategy/multicast",
        ],
    );
    assert!(
        set.starts_with("strategy-set prefix=/ctl strategy=/localhost/nfd/strategy/multicast"),
        "{set}"
    );
    let list = json(&sock, &["strategy", "list", "--json"]);
    let has = |l: &Value, p: &str| l.as_array().unwrap().iter().any(|s| s["prefix"] == p);
    assert!(has(&list, "/ctl") && has(&list, "/"), "{list}");
    ctl_ok(&sock, &["strategy", "unset", "/ctl"]);
    assert!(!has(&json(&sock, &["strategy", "list", "--json"]), "/ctl"));

    let err = refused(
        &sock,
        &["strategy", "set", "/x", "/localhost/nfd/strategy/none-such"],
    );
    assert!(err.contains("404 Strategy not registered"), "{err}");
    let err = refused(&sock, &["face", "create", "unix:///tmp/nothing"]);
    assert!(err.contains("406"), "{err}");

    let missing = dir.path().join("absent.sock");
    let err = refused(&missing, &["face", "list"]);
    assert!(err.contains("absent.sock"), "{err}");
}

/// `cs info` reads NFD's cs/info: a store bounded to 5 entries that saw 8
/// distinct segments (8 misses) and one repeated Interest (1 hit).
#[test]
fn cs_info_reports_the_stores_figures() {
    const SEGMENTS: u32 = 8;
    const CS_MAX_BYTES: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let extra = format!("[tables]\ncs_max_packets = 5\ncs_max_bytes = {CS_MAX_BYTES}\n");
    let (cfg, sock) = write_config(dir.path(), "cs", free_udp_port(), &extra);
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    let fresh = json(&sock, &["cs", "info", "--json"]);
    assert_eq!(
        (&fresh["entries"], &fresh["hits"], &fresh["misses"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{fresh}"
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let _producer = producer(&sock, "/cs", 1000).await;
        let mut c = icn_forwarder::daemon::client::Client::connect(&sock)
            .await
            .unwrap();
        c.set_timeout(Duration::from_secs(5));
        let fetch = |i: u32, nonce: u32| {
            let mut int = icn_tlv::Interest::new(format!("/cs/seg/{i}").parse().unwrap());
            int.nonce = Some(nonce);
            int.lifetime = Some(Duration::from_secs(4));
            int
        };
        for i in 0..SEGMENTS {
            c.express(fetch(i, 0xc5_0000 + i)).await.unwrap();
        }
        // The last segment again, with a new nonce: from the store.
        c.express(fetch(SEGMENTS - 1, 0xc5_1000)).await.unwrap();
    });

    let cs = json(&sock, &["cs", "info", "--json"]);
    assert_eq!(cs["capacity_entries"], 5, "{cs}");
    assert_eq!(cs["capacity_bytes"], CS_MAX_BYTES, "{cs}");
    assert_eq!(cs["entries"], 5, "{cs}");
    assert_eq!(
        (&cs["hits"], &cs["misses"]),
        (&Value::from(1), &Value::from(SEGMENTS)),
        "{cs}"
    );
    assert_eq!(
        (&cs["admit"], &cs["serve"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{cs}"
    );
    let bytes = cs["bytes"].as_u64().unwrap();
    assert!((5 * 1000..=CS_MAX_BYTES).contains(&bytes), "{cs}");
    let text = ctl_ok(&sock, &["cs", "info"]);
    for line in [
        "capacity=5",
        "nEntries=5",
        "nHits=1",
        &format!("nMisses={SEGMENTS}"),
        "admit=on",
    ] {
        assert!(
            text.lines().any(|l| l.trim() == line),
            "{line} missing from:\n{text}"
        );
    }
    assert!(status(&sock).contains(&format!("cs: entries=5/5 hits=1 misses={SEGMENTS}")));
}

#[test]
fn man_pages_cover_every_verb() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_bounded(
        Command::new(ICNFWD).arg("generate-man").arg(dir.path()),
        Duration::from_secs(10),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for page in [
        "icnfwd",
        "icnfwd-face-create",
        "icnfwd-face-destroy",
        "icnfwd-face-list",
        "icnfwd-route-add",
        "icnfwd-route-remove",
        "icnfwd-route-list",
        "icnfwd-strategy-set",
        "icnfwd-strategy-unset",
        "icnfwd-strategy-list",
        "icnfwd-cs-info",
        "icnfwd-status",
    ] {
        let text = std::fs::read_to_string(dir.path().join(format!("{page}.1")))
            .unwrap_or_else(|e| panic!("{page}.1: {e}"));
        assert!(text.contains(".TH"), "{page}.1 is not a man page");
    }
    // The packaging hook itself is not documented as a command.
    assert!(!dir.path().join("icnfwd-generate-man.1").exists());
}
