//! A blocking NFD-management reader for the testbed: fetches the
//! `faces/list` and `faces/icnfwd-state` datasets of a node over its Unix
//! socket. Pathname Unix sockets live in the file system, not the network
//! namespace, so the test process reaches every node from outside.
//!
//! (The forwarder's own `daemon::client::Client` is async; the umbrella
//! package has no tokio dependency, so this one is std-only. Decoding is
//! icn-tlv's `nfd` module, the one the forwarder encodes with.)

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use icn_tlv::nfd::dataset::{items, FaceStatus};
use icn_tlv::nfd::face_state::{self, FaceState};
use icn_tlv::{Component, Data, Interest, Name};

/// One connection to a node's management (it is a face of its own).
pub struct MgmtConn {
    stream: UnixStream,
    buf: BytesMut,
    nonce: u32,
}

/// Both per-face datasets, fetched together.
#[derive(Debug, Clone, Default)]
pub struct FaceSnapshot {
    pub faces: Vec<FaceStatus>,
    pub states: Vec<FaceState>,
}

impl FaceSnapshot {
    pub fn face(&self, id: u64) -> Option<&FaceStatus> {
        self.faces.iter().find(|f| f.face_id == id)
    }
    pub fn state(&self, id: u64) -> Option<&FaceState> {
        self.states.iter().find(|f| f.face_id == id)
    }
}

fn other(e: impl std::fmt::Debug) -> io::Error {
    io::Error::other(format!("{e:?}"))
}

impl MgmtConn {
    /// Connects, retrying until `timeout` (the daemon may still be starting).
    pub fn connect(path: &Path, timeout: Duration) -> io::Result<MgmtConn> {
        let deadline = Instant::now() + timeout;
        loop {
            match UnixStream::connect(path) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(Duration::from_millis(1000)))?;
                    return Ok(MgmtConn {
                        stream,
                        buf: BytesMut::with_capacity(64 * 1024),
                        nonce: std::process::id().rotate_left(7),
                    });
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// The next top-level TLV element from the forwarder.
    fn recv(&mut self) -> io::Result<(u64, Bytes)> {
        loop {
            if let Ok((typ, n1)) = icn_tlv::varnum::read_varnum(&self.buf) {
                if let Ok((len, n2)) = icn_tlv::varnum::read_varnum(&self.buf[n1..]) {
                    let total = n1 + n2 + len as usize;
                    if self.buf.len() >= total {
                        return Ok((typ, self.buf.split_to(total).freeze()));
                    }
                }
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "forwarder closed",
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn express(&mut self, name: Name, can_be_prefix: bool) -> io::Result<Data> {
        let mut i = Interest::new(name);
        i.can_be_prefix = can_be_prefix;
        i.must_be_fresh = true;
        self.nonce = self
            .nonce
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        i.nonce = Some(self.nonce);
        i.lifetime = Some(Duration::from_millis(1000));
        self.stream.write_all(&i.encode())?;
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if Instant::now() > deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no dataset reply"));
            }
            let (typ, el) = self.recv()?;
            // Data (6); anything else (Nacks, LP idle) is skipped.
            if typ == 6 {
                let d = Data::decode(el).map_err(other)?;
                if i.matches_data(&d) {
                    return Ok(d);
                }
            }
        }
    }

    /// A whole status dataset (all segments).
    pub fn dataset(&mut self, name: &str) -> io::Result<Bytes> {
        let base: Name = name.parse().map_err(other)?;
        let first = self.express(base, true)?;
        let mut payload = BytesMut::from(&first.content[..]);
        let last_comp = first.name.get(first.name.len().wrapping_sub(1));
        let Some(seg0) = last_comp.and_then(|c| c.as_segment()) else {
            return Ok(payload.freeze());
        };
        let versioned = first.name.prefix(first.name.len() - 1);
        let last = first
            .meta
            .final_block_id
            .as_ref()
            .and_then(Component::as_segment)
            .unwrap_or(seg0);
        for s in seg0 + 1..=last.min(seg0 + 1000) {
            let d = self.express(versioned.append(Component::segment(s)), false)?;
            payload.extend_from_slice(&d.content);
        }
        Ok(payload.freeze())
    }

    /// `faces/list` and `faces/icnfwd-state`.
    pub fn faces(&mut self) -> io::Result<FaceSnapshot> {
        let faces = items(self.dataset("/localhost/nfd/faces/list")?)
            .map_err(other)?
            .into_iter()
            .map(FaceStatus::decode_value)
            .collect::<Result<_, _>>()
            .map_err(other)?;
        let (m, d) = face_state::DATASET;
        let states = items(self.dataset(&format!("/localhost/nfd/{m}/{d}"))?)
            .map_err(other)?
            .into_iter()
            .map(FaceState::decode_value)
            .collect::<Result<_, _>>()
            .map_err(other)?;
        Ok(FaceSnapshot { faces, states })
    }
}
