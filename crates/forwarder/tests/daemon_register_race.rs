//! rib/register over the daemon's Unix socket: once the 200 is back, an
//! Interest sent at once (from another connection, a fresh one or not,
//! while the previous producer's connection is closing) reaches the new
//! producer, never Nack(NoRoute) or silence.

#[path = "interop/harness.rs"]
mod harness;

use std::time::Duration;

use bytes::Bytes;
use harness::*;
use icn_forwarder::daemon::client::Client;
use icn_forwarder::mgmt::ControlParameters;
use icn_tlv::{Component, Data, Interest, LpPacket, Name};

const ROUNDS: u32 = 150;

/// Registers `prefix` from `producer`, then at once expresses an Interest
/// under it from `consumer`; the producer answers it.
async fn register_then_fetch(
    consumer: &mut Client,
    producer: &mut Client,
    prefix: &Name,
    nonce: u32,
) -> Result<(), String> {
    let params = ControlParameters {
        name: Some(prefix.clone()),
        ..Default::default()
    };
    let resp = producer
        .command("rib", "register", &params)
        .await
        .map_err(|e| format!("register: {e}"))?;
    if resp.code != 200 {
        return Err(format!("register: {} {}", resp.code, resp.text));
    }
    let name = prefix.append(Component::generic(format!("x{nonce}")));
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime = Some(cc_core::Duration::from_millis(1000));
    consumer
        .send(&i.encode())
        .await
        .map_err(|e| e.to_string())?;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(1500);
    let produce = async {
        loop {
            let (typ, el) = producer
                .recv_until(deadline)
                .await
                .map_err(|e| format!("producer: {e}"))?;
            if typ == 5 && Interest::decode(el).is_ok_and(|g| g.name == name) {
                let d = Data::new(name.clone(), Bytes::from_static(b"ok"));
                producer
                    .send(&d.encode_signed_digest_sha256())
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok::<(), String>(());
            }
        }
    };
    let consume = async {
        loop {
            let (typ, el) = consumer
                .recv_until(deadline)
                .await
                .map_err(|e| format!("consumer: {e}"))?;
            match typ {
                6 => return Ok::<(), String>(()),
                100 => {
                    if let Some(nack) = LpPacket::decode(el).ok().and_then(|lp| lp.nack) {
                        return Err(format!("Nack {nack:?}"));
                    }
                }
                _ => {}
            }
        }
    };
    let (p, c) = tokio::join!(produce, consume);
    c.and(p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interest_right_after_register_200_is_routed() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, sock) = write_config(dir.path(), "race", free_udp_port(), "");
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    let mut long_lived = Client::connect(&sock).await.unwrap();
    let mut previous: Option<Client> = None;
    let mut failures = Vec::new();
    for k in 0..ROUNDS {
        let mut producer = Client::connect(&sock).await.unwrap();
        // The previous producer goes away while this one registers.
        drop(previous.take());
        let prefix: Name = format!("/race/{k}").parse().unwrap();
        let mut fresh;
        let consumer = if k % 2 == 0 {
            &mut long_lived
        } else {
            fresh = Client::connect(&sock).await.unwrap();
            &mut fresh
        };
        if let Err(e) = register_then_fetch(consumer, &mut producer, &prefix, 0x5000 + k).await {
            failures.push(format!("round {k}: {e}"));
        }
        previous = Some(producer);
    }
    assert!(failures.is_empty(), "{failures:?}");
    // Routes of closed producers are gone; the last one's is there.
    drop(previous);
    let fib = long_lived.snapshot().await.unwrap().fib;
    assert!(
        fib.iter()
            .filter(|e| e.name.to_string().starts_with("/race/"))
            .count()
            <= 1,
        "{fib:?}"
    );
}
