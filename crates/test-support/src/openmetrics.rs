//! A strict reader of the OpenMetrics text format for the tests that
//! scrape icnfwd's Prometheus endpoint: every line must be a HELP, TYPE or
//! UNIT comment, a sample of a declared family, or the final `# EOF`;
//! counters must end in `_total` and be non-negative. Anything else panics
//! (a test failure that quotes the line).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One sample: metric name, labels, value.
pub type Sample = (String, HashMap<String, String>, f64);

/// Sends `request` to 127.0.0.1:`port` and reads the whole response
/// (at most 10 s); returns (status code, body).
pub fn http(port: u16, request: &str) -> (u16, String) {
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

/// `GET /metrics` on 127.0.0.1:`port`, which must answer 200; the samples.
pub fn scrape(port: u16) -> Vec<Sample> {
    let (code, body) = http(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(code, 200, "{body}");
    parse(&body)
}

/// Parses an exposition strictly (module doc).
pub fn parse(text: &str) -> Vec<Sample> {
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

/// The value of the one sample named `name` whose labels include `want`
/// (panics when several match).
pub fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Option<f64> {
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

/// The `face` label of the `icnfwd_face_info` series whose `remote` is
/// `remote`, if any.
pub fn face_of(samples: &[Sample], remote: &str) -> Option<String> {
    samples
        .iter()
        .find(|(n, l, _)| {
            n == "icnfwd_face_info" && l.get("remote").map(String::as_str) == Some(remote)
        })
        .map(|(_, l, _)| l["face"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_families_labels_and_escapes() {
        let text = "# HELP a_b Help.\n# TYPE a_b counter\na_b_total{face=\"2\",uri=\"x\\\"y\"} 3\n\
                    # TYPE g gauge\ng 1.5\n# EOF\n";
        let s = parse(text);
        assert_eq!(value(&s, "a_b_total", &[("uri", "x\"y")]), Some(3.0));
        assert_eq!(value(&s, "g", &[]), Some(1.5));
    }

    #[test]
    #[should_panic(expected = "undeclared family")]
    fn a_sample_without_its_type_is_refused() {
        parse("x 1\n# EOF\n");
    }
}
