//! The scenario format's parser and graph, on a small diamond.

use super::*;

const DIAMOND: &str = r#"
    name = "t"
    title = "test"
    duration_s = 20
    ci_duration_s = 10
    schemes = ["none", "mircc"]
    measure = [["x", "r"]]
    [cc_qsccp]
    ef_limit_bps = 1000000
    [[node]]
    name = "c"
    [[node]]
    name = "r"
    [[node]]
    name = "x"
    [[node]]
    name = "y"
    [[node]]
    name = "p"
    [[link]]
    a = "c"
    b = "r"
    capacity_mbps = 100
    [[link]]
    a = "r"
    b = "x"
    capacity_mbps = 10
    delay_ms = 5
    [[link]]
    a = "r"
    b = "y"
    capacity_mbps = 10
    [[link]]
    a = "x"
    b = "p"
    capacity_mbps = 100
    [[link]]
    a = "y"
    b = "p"
    capacity_mbps = 100
    [[flow]]
    name = "f1"
    consumer = "c"
    producer = "p"
"#;

#[test]
fn diamond_parses_and_routes_both_paths() {
    let s = Scenario::parse(DIAMOND).unwrap();
    assert_eq!(s.flows[0].stop_s, 20.0);
    assert_eq!(s.link("x", "r").unwrap().capacity_bps, 10_000_000);
    assert_eq!(s.hops("c", "p"), Some(3));
    assert_eq!(s.path_delay_ms("p", "p"), Some(0.0));
    assert!(s.path_delay_ms("c", "p").is_some_and(|d| d >= 0.0));
    let r = s.routes_towards("p");
    assert!(r.contains(&("r".into(), "x".into(), 20)));
    assert!(r.contains(&("r".into(), "y".into(), 20)));
    assert!(r.contains(&("c".into(), "r".into(), 30)));
    assert!(!r.iter().any(|(n, _, _)| n == "p"));
    assert_eq!(s.cc_extra["qsccp"][0].0, "ef_limit_bps");
    // Computed routes when the file gives none.
    let mut all = s.routes_for(&s.flows[0]);
    all.sort();
    let mut computed = r.clone();
    computed.sort();
    assert_eq!(all, computed);
}

#[test]
fn routes_in_the_file_replace_the_computed_ones_at_their_node() {
    let text =
        format!("{DIAMOND}\n[[route]]\nnode = \"r\"\nflow = \"f1\"\nvia = \"y\"\ncost = 5\n");
    let s = Scenario::parse(&text).unwrap();
    let r = s.routes_for(&s.flows[0]);
    // r now uses y only; c still routes to r as computed.
    assert!(r.contains(&("r".into(), "y".into(), 5)));
    assert!(!r.iter().any(|(n, v, _)| n == "r" && v == "x"));
    assert!(r.contains(&("c".into(), "r".into(), 30)));
    let bad = text.replace("via = \"y\"", "via = \"p\"");
    assert!(Scenario::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("no link"));
    let bad = text.replace("flow = \"f1\"", "flow = \"f9\"");
    assert!(Scenario::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("no flow"));
}

#[test]
fn bad_files_are_rejected() {
    let bad = DIAMOND.replace("schemes = [\"none\", \"mircc\"]", "schemes = [\"tcp\"]");
    assert!(Scenario::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("unknown scheme"));
    let bad = DIAMOND.replace("[[flow]]", "[[flow]]\nbogus = 1");
    assert!(Scenario::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("bogus"));
    let bad = DIAMOND.replace("measure = [[\"x\", \"r\"]]", "measure = [[\"c\", \"p\"]]");
    assert!(Scenario::parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("not a link"));
    let bad = DIAMOND.replace("consumer = \"c\"", "consumer = \"zz\"");
    assert!(Scenario::parse(&bad).is_err());
}

#[test]
fn one_segment_size_for_every_scheme_with_icnput_default() {
    let s = Scenario::parse(DIAMOND).unwrap();
    assert_eq!(s.segment_bytes, 8000);
    let t = format!("segment_bytes = 1200\n{DIAMOND}");
    assert_eq!(Scenario::parse(&t).unwrap().segment_bytes, 1200);
    // No per-scheme sizes: a table is a type error at its line.
    let bad = DIAMOND.replace("[cc_qsccp]", "[segment_bytes]\nwincm = 1024\n[cc_qsccp]");
    let err = Scenario::parse(&bad).unwrap_err().to_string();
    assert!(err.contains("invalid type: map, expected f64"), "{err}");
    let bad = format!("segment_bytes = 10\n{DIAMOND}");
    assert!(Scenario::parse(&bad).is_err());
}

#[test]
fn ci_duration_is_per_scheme_within_the_full_length() {
    let s = Scenario::parse(DIAMOND).unwrap();
    assert_eq!(s.ci_duration_for("wincm"), s.ci_duration_s);
    let t = DIAMOND.replace(
        "[cc_qsccp]",
        "[ci_duration_s_by_scheme]\nwincm = 20\n[cc_qsccp]",
    );
    let s = Scenario::parse(&t).unwrap();
    assert_eq!(s.ci_duration_for("wincm"), 20.0);
    assert_eq!(s.ci_duration_for("mircc"), s.ci_duration_s);
    let t = DIAMOND.replace(
        "[cc_qsccp]",
        "[ci_duration_s_by_scheme]\nwincm = 999\n[cc_qsccp]",
    );
    assert!(Scenario::parse(&t)
        .unwrap_err()
        .to_string()
        .contains("ci_duration_s_by_scheme.wincm"));
}

#[test]
fn every_shipped_scenario_loads() {
    let mut n = 0;
    for e in std::fs::read_dir(scenarios_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let s = Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                (!s.flows.is_empty() || !s.groups.is_empty()) && !s.measure.is_empty(),
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} scenario files found");
}

#[test]
fn an_unknown_key_names_the_key_the_file_and_the_line() {
    let text = DIAMOND.replace("[[flow]]", "[[flow]]\nbogus_key = 1");
    let line = text.lines().position(|l| l.contains("bogus_key")).unwrap() + 1;
    let e = Scenario::parse_named(&text, "my/file.toml").unwrap_err();
    match &e {
        LabError::Toml { file, line: l, .. } => {
            assert_eq!(file, "my/file.toml");
            assert_eq!(*l, line);
        }
        other => panic!("not a located error: {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("bogus_key") && msg.contains(&format!("my/file.toml:{line}:")),
        "{msg}"
    );
    // A top-level table the format does not know is named too.
    let e = Scenario::parse_named(&format!("{DIAMOND}\n[cc_tcp]\nx = 1\n"), "f.toml").unwrap_err();
    assert!(e.to_string().contains("cc_tcp"), "{e}");
}

const ARRIVALS: &str = r#"
    [[arrivals]]
    name = "a"
    mean_interarrival_s = 0.5
    stop_s = 10
    consumers = ["c"]
    producers = ["p", "x"]
    size_mb = 0.2
    seed = 7
"#;

#[test]
fn poisson_arrivals_expand_into_sized_flows_reproducibly() {
    let text = format!("{DIAMOND}{ARRIVALS}");
    let a = Scenario::parse(&text).unwrap();
    let b = Scenario::parse(&text).unwrap();
    assert_eq!(a.flows, b.flows, "same seed, same arrivals");
    let gen: Vec<&Flow> = a.flows.iter().filter(|f| f.name.starts_with('a')).collect();
    // 10 s at one arrival per 0.5 s: 20 expected; Poisson spread is ~±4.5.
    assert!((8..=35).contains(&gen.len()), "{} arrivals", gen.len());
    let mut last = 0.0;
    for f in &gen {
        assert!(f.start_s >= last && f.start_s < 10.0, "{f:?}");
        last = f.start_s;
        assert_eq!(f.size_bytes, Some(200_000));
        assert_eq!((f.consumer.as_str(), f.stop_s), ("c", 20.0));
        assert!(f.producer == "p" || f.producer == "x");
    }
    assert!(gen.iter().any(|f| f.producer == "x") && gen.iter().any(|f| f.producer == "p"));
    let mean_gap = gen.last().unwrap().start_s / gen.len() as f64;
    assert!((0.25..=1.0).contains(&mean_gap), "mean gap {mean_gap}");
    let other = Scenario::parse(&text.replace("seed = 7", "seed = 8")).unwrap();
    assert_ne!(a.flows, other.flows, "another seed, other arrivals");
}

#[test]
fn arrivals_are_checked() {
    for (from, to, msg) in [
        (
            "consumers = [\"c\"]",
            "consumers = [\"zz\"]",
            "no node `zz`",
        ),
        (
            "consumers = [\"c\"]",
            "consumers = [\"p\"]",
            "both a consumer",
        ),
        (
            "mean_interarrival_s = 0.5",
            "mean_interarrival_s = 0",
            "> 0",
        ),
        ("stop_s = 10", "stop_s = 30", "stop_s <= duration_s"),
    ] {
        let text = format!("{DIAMOND}{ARRIVALS}").replace(from, to);
        let e = Scenario::parse(&text).unwrap_err().to_string();
        assert!(e.contains(msg), "{to}: {e}");
    }
}

#[test]
fn single_path_keeps_one_next_hop_per_node() {
    let multi = Scenario::parse(DIAMOND).unwrap();
    let at_r = |s: &Scenario| {
        s.routes_towards("p")
            .into_iter()
            .filter(|(n, _, _)| n == "r")
            .count()
    };
    assert_eq!(at_r(&multi), 2);
    let single = Scenario::parse(&format!("single_path = true\n{DIAMOND}")).unwrap();
    assert_eq!(at_r(&single), 1);
}

/// DIAMOND with one group streaming from p to c and `extra` in its table.
fn with_group(extra: &str) -> String {
    format!("{DIAMOND}\n[[group]]\nname = \"g\"\nsource = \"p\"\nreceivers = [\"c\"]\n{extra}\n")
}

#[test]
fn a_group_parses_with_the_papers_defaults_and_one_upstream_per_node() {
    let s = Scenario::parse(&with_group("gamma = 0.3")).unwrap();
    let g = &s.groups[0];
    assert_eq!((g.gamma, g.oth1, g.oth2), (0.3, 0.25, 0.5));
    assert_eq!(g.payload_bytes, 1000);
    assert_eq!(g.initial_rate_bps, 50_000.0);
    assert_eq!(g.stop_s, 20.0);
    // c's only link is 100 Mbit/s: its access capacity.
    assert_eq!(s.access_bps(g, "c"), 100_000_000);
    let routes = s.group_routes(g);
    // r has two next hops towards p (x, y); a tree keeps one.
    assert_eq!(routes.iter().filter(|(n, _)| n == "r").count(), 1);
    assert!(!routes.iter().any(|(n, _)| n == "p"));
}

#[test]
fn group_errors_name_the_key_or_the_node() {
    let e = Scenario::parse(&with_group("gama = 0.3"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("gama"), "{e}");
    let e = Scenario::parse(&DIAMOND.replace(
        "[[flow]]",
        "[[group]]\nname = \"g\"\nsource = \"p\"\nreceivers = [\"q\"]\n[[flow]]",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("receiver `q`"), "{e}");
    let e = Scenario::parse(&with_group("oth1 = 0.6"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("oth1"), "{e}");
    let e = Scenario::parse(&with_group("").replace("name = \"g\"", "name = \"f1\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("taken"), "{e}");
}

#[test]
fn multicast_groups_lines_reach_the_forwarder_config() {
    let s = Scenario::parse(&format!(
        "queue_packets = 50\n{}\n[multicast_groups]\noccupancy_queue_packets = 50\n",
        with_group("")
    ))
    .unwrap();
    assert_eq!(s.queue_packets, Some(50));
    let caps = crate::real::topo::Caps {
        emulation: true,
        cc_period: true,
    };
    let c = crate::real::topo::cc_section(&s, "none", caps);
    let cfg = icn_forwarder::config::Config::from_toml_str(&c).unwrap();
    assert_eq!(cfg.multicast_groups.occupancy_queue_packets, Some(50));
}

/// `[consumer]` switches one consumer-law knob beside the profile, in both
/// runners (the virtual one's icncat options here); a bad value or an
/// unknown key is refused.
#[test]
fn consumer_knobs_reach_the_consumer_options() {
    let with = |t: &str| DIAMOND.replacen("[cc_qsccp]", &format!("[consumer]\n{t}\n[cc_qsccp]"), 1);
    let s = Scenario::parse(&with(
        "ccc_initial_window = 0\nccc_min_pace_ips = 0.5\nwincm_hold_after_cut = true\n\
         wincm_queue_growth_limit = false\nwincm_growth_limit_in_congestion = false\n\
         wincm_bandwidth_floor = false",
    ))
    .unwrap();
    assert_eq!(
        s.consumer,
        ConsumerKnobs {
            ccc_initial_window: Some(0),
            ccc_min_pace_ips: Some(0.5),
            wincm_hold_after_cut: Some(true),
            wincm_queue_growth_limit: Some(false),
            wincm_growth_limit_in_congestion: Some(false),
            wincm_bandwidth_floor: Some(false),
        }
    );
    let o = crate::sim::build::consumer_options(&s, "ccc", &s.flows[0]).unwrap();
    let law = o.law_config().ccc;
    assert_eq!((law.initial_window, law.min_pace_ips), (0, 0.5));
    let w = crate::sim::build::consumer_options(&s, "wincm", &s.flows[0]).unwrap();
    assert!(w.law_config().wincm.hold_after_cut);
    assert!(!w.law_config().wincm.growth_limit_in_congestion);
    assert!(!w.law_config().wincm.bandwidth_floor);
    assert_eq!(w.law_config().wincm.queue_growth_target, None);
    let plain = Scenario::parse(DIAMOND).unwrap();
    let law = crate::sim::build::consumer_options(&plain, "ccc", &plain.flows[0])
        .unwrap()
        .law_config()
        .ccc;
    assert_eq!((law.initial_window, law.min_pace_ips), (2, 1.0), "tuned");
    let w = crate::sim::build::consumer_options(&plain, "wincm", &plain.flows[0]).unwrap();
    assert!(
        !w.law_config().wincm.hold_after_cut,
        "off in the tuned profile"
    );
    assert!(w.law_config().wincm.growth_limit_in_congestion, "on, tuned");
    assert!(w.law_config().wincm.bandwidth_floor, "on, tuned");
    assert_eq!(
        w.law_config().wincm.queue_growth_target,
        Some(cc_core::Duration::from_millis(5)),
        "on, tuned"
    );
    assert!(Scenario::parse(&with("ccc_min_pace_ips = -1")).is_err());
    assert!(Scenario::parse(&with("ccc_window = 0")).is_err());
}
