use super::*;

#[tokio::test]
async fn reader_chunks_and_ends() {
    let data: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
    let mut rx = spawn_reader(Box::new(std::io::Cursor::new(data.clone())), 1000);
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    while let Some(b) = rx.recv().await {
        sizes.push(b.len());
        got.extend_from_slice(&b);
    }
    assert_eq!(sizes, vec![1000, 1000, 500]);
    assert_eq!(got, data);
}

#[test]
fn gaps_are_skipped_in_order_and_reported_as_ranges() {
    use icn_multicast::GroupPacket;
    use icn_tlv::Data;
    let g: Name = "/g".parse().unwrap();
    let cfg = ReceiverConfig {
        repair: None,
        ..ReceiverConfig::default()
    };
    let mut rx = MulticastReceiver::new(g.clone(), cfg, Timestamp::ZERO);
    let mut out = Vec::new();
    let mut report = SubscribeReport::default();
    for seq in [0u64, 2, 3, 6] {
        let wire = GroupPacket {
            group: g.clone(),
            seq,
            rate_bps: 1,
            payload: Bytes::from(vec![seq as u8; 2]),
            end: false,
        }
        .encode(None);
        let d = Data::decode(wire).unwrap();
        rx.handle_data(Timestamp::ZERO, &d).unwrap();
        write_deliveries(&mut rx, &mut out, &mut report).unwrap();
    }
    rx.finish();
    write_deliveries(&mut rx, &mut out, &mut report).unwrap();
    assert_eq!(out, vec![0, 0, 2, 2, 3, 3, 6, 6]);
    assert_eq!(report.unrepaired, 3);
    assert_eq!(report.unrepaired_ranges, vec![(1, 1), (4, 5)]);
}

#[test]
fn summary_names_loss_and_rates() {
    let r = SubscribeReport {
        packets: 99,
        lost: 1,
        loss_ratio: 0.01,
        mean_rate_bps: 1.5e6,
        announced_min_bps: 50_000,
        announced_max_bps: 1_500_000,
        announced_last_bps: 1_500_000,
        ..SubscribeReport::default()
    };
    let s = r.summary();
    assert!(s.contains("lost 1 (1.00 %)"), "{s}");
    assert!(s.contains("1.500 Mbit/s"), "{s}");
}
