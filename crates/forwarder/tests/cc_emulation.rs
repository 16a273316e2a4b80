//! Link emulation: constant delay and seeded loss after the face's pacing.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{EngineConfig, FaceParams, Forwarder, LinkEmulation};
use icn_sim::net::data;

fn t(ms: u64) -> Timestamp {
    Timestamp::ZERO + Duration::from_millis(ms)
}

#[test]
fn delay_holds_frames_and_loss_drops_about_the_configured_share() {
    let mut fwd = Forwarder::new(EngineConfig::default(), 3);
    let em = LinkEmulation::new(Duration::from_millis(10), 0.25);
    let f = fwd.add_face(
        t(0),
        FaceParams::non_local("udp4://192.0.2.1:6363").with_emulation(em),
    );
    let app = fwd.add_face(t(0), FaceParams::local("app://0"));
    assert_eq!(fwd.face(f).unwrap().params.emulation, Some(em));
    // Unsolicited Data are dropped; send_local_data queues straight to a face.
    for i in 0..400 {
        let d: Bytes = data(&format!("/x/{i}"), b"hi", None);
        fwd.send_local_data(t(0), f, d);
    }
    assert!(
        fwd.poll_transmit(t(0)).is_none(),
        "delayed frames leave after 10 ms"
    );
    assert_eq!(fwd.poll_timeout(), Some(t(10)));
    assert!(fwd.poll_transmit(t(9)).is_none());
    let mut n = 0;
    while let Some(tx) = fwd.poll_transmit(t(10)) {
        assert_eq!(tx.face, f);
        n += 1;
    }
    let lost = fwd.face(f).unwrap().emulated_drops;
    assert_eq!(n + lost, 400);
    assert!((60..=140).contains(&lost), "lost {lost} of 400 at p = 0.25");
    let _ = app;
}
