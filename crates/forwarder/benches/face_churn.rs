//! The cost of a face going away against the routes installed on other
//! faces (issue 21's face axis): a node holds N static routes on one
//! producer face; each iteration adds a face, gives it one route and
//! removes it again, as an on-demand UDP face that registers a prefix and
//! then times out. With per-face indexes in the FIB and the RIB the removal
//! touches only that face's route, so the time stays flat in N.
//!
//! `cargo bench -p icn-forwarder --bench face_churn -- --quick`

use bytes::Bytes;
use cc_core::Timestamp;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use icn_forwarder::engine::FaceParams;
use icn_forwarder::mgmt::rib::Route;
use icn_forwarder::node::Node;
use icn_forwarder::router::RouterConfig;
use icn_tlv::{Component, Name};

fn prefix(tag: &'static [u8], i: usize) -> Name {
    Name::root()
        .append(Component::generic(Bytes::from_static(tag)))
        .append(Component::generic(Bytes::from(format!("p{i}"))))
}

/// A node with `routes` static routes on one producer face.
fn node_with_routes(routes: usize) -> Node {
    let mut node = Node::new(RouterConfig::default(), Default::default(), 7);
    let now = Timestamp::from_millis(1);
    let producer = node.add_face(now, FaceParams::non_local("udp4://192.0.2.1:6363"));
    for i in 0..routes {
        node.add_route(prefix(b"fill", i), Route::from_config(producer.0, 10))
            .expect("RIB and FIB sized for the setup");
    }
    node
}

fn bench_face_churn(c: &mut Criterion) {
    let mut g = c.benchmark_group("face_churn");
    // 99 000: the RIB holds at most 100 000 routes by default, one is the churned face's.
    for routes in [10, 10_000, 99_000] {
        let mut node = node_with_routes(routes);
        let now = Timestamp::from_millis(2);
        let mut k = 0usize;
        g.bench_with_input(BenchmarkId::from_parameter(routes), &routes, |b, _| {
            b.iter(|| {
                let face = node.add_face(now, FaceParams::non_local("udp4://192.0.2.9:6363"));
                node.add_route(prefix(b"churn", k), Route::from_config(face.0, 10))
                    .expect("route on the new face");
                node.remove_face(now, face);
                k += 1;
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_face_churn);
criterion_main!(benches);
