mod cc_common;
use cc_common::*;
use icn_forwarder::cc::CcScheme;
use icn_forwarder::testing::flows::{drive, jain, LawFlow};
use icn_forwarder::testing::Network;

#[test]
fn scratch() {
    let scheme = CcScheme::Wincm;
    let mut net = Network::new(7);
    let a = net.add_node(engine(scheme));
    let b = net.add_node(engine(scheme));
    let (ab, ba) = net.connect(a, b, link(20, 10));
    net.node_mut(a).fib_add_nexthop(&"/p".parse().unwrap(), ab, 1).unwrap();
    net.add_producer(b, "/p", 4000, None);
    let end = 40_000;
    let mut flows: Vec<_> = (0..3).map(|i| { let app = net.add_consumer(a); LawFlow::new(app, &format!("/p/f{i}"), law(scheme, 0.0), at(i as u64 * 100), at(end)) }).collect();
    for t in (2000..=end).step_by(2000) {
        drive(&mut net, &mut flows, at(t), ms(1));
        let per: Vec<f64> = flows.iter().map(|f| f.stats.goodput_bps(at(t-2000), at(t))/1e6).collect();
        let w: Vec<String> = flows.iter().map(|f| match &f.law { cc_core::AnyConsumerLaw::Wincm(w) => format!("{:.1}", match cc_core::ConsumerLaw::limit(w) { cc_core::SendLimit::Window{interests} => interests, _ => 0.0 }), _ => String::new() }).collect();
        let marks = net.node(b).face(ba).unwrap().counters.n_out_marked;
        println!("t={t} {:?} jain {:.3} cwnd {:?} marks {} to {:?}", per.iter().map(|x| (x*10.0).round()/10.0).collect::<Vec<_>>(), jain(&per), w, marks, flows.iter().map(|f| f.stats.timeouts).collect::<Vec<_>>());
    }
}
