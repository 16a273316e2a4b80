//! Ethernet faces over Linux AF_PACKET sockets (EtherType 0x8624).
//!
//! One `SOCK_DGRAM` packet socket per configured interface: the kernel
//! writes and strips the Ethernet header, so a frame's payload is exactly one
//! NDN element (bare Interest/Data or LpPacket) followed, on real NICs, by
//! padding up to the 46-octet minimum; the receiver trims to the element's
//! own TLV length, as NFD does. The socket joins the NDN multicast MAC
//! `01:00:5e:00:17:aa`; frames sent to it feed the interface's multi-access
//! face, frames sent to this host's MAC feed one on-demand unicast face per
//! peer MAC (the shell maps them). NDNLPv2 fragmentation happens in the
//! engine, which knows the face MTU (the interface MTU unless lowered).
//!
//! IO is batched ([`super::mmsg`]): `recvmmsg` fills up to [`BATCH`] frames
//! per call and copies them into one buffer handed on as `Bytes` slices;
//! `sendmmsg` sends what the engine task queued since the last flush. The non-blocking fd is driven by
//! tokio's `AsyncFd`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use bytes::Bytes;
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use super::mmsg;
use super::stream::{frame, wanted, Frame};
use super::{Inbound, InboundTx};

/// NDN's EtherType.
pub const ETHERTYPE_NDN: u16 = 0x8624;
/// NDN's Ethernet multicast group address.
pub const NDN_MULTICAST_MAC: Mac = [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa];
/// Frames per system call.
pub const BATCH: usize = mmsg::BATCH;
/// Largest payload accepted (jumbo frames); bigger frames are dropped.
pub const MAX_PAYLOAD: usize = 9000;

/// An Ethernet address.
pub type Mac = [u8; 6];

/// Whether `mac` is a group (multicast/broadcast) address.
pub fn is_group(mac: &Mac) -> bool {
    mac[0] & 1 == 1
}

// Values from <linux/if_packet.h>, spelled here so the code does not depend
// on which libc release exports them.
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_MULTICAST: libc::c_ushort = 0;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_HOST: u8 = 0;
const PACKET_BROADCAST: u8 = 1;
const PACKET_MULTICAST: u8 = 2;

/// `struct packet_mreq`.
#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

/// An open packet socket bound to one interface.
pub struct EthSocket {
    fd: AsyncFd<OwnedFd>,
    ifindex: i32,
    /// Interface name.
    pub ifname: String,
    /// This interface's MAC address.
    pub mac: Mac,
    /// The interface MTU (largest payload per frame).
    pub mtu: usize,
}

impl std::fmt::Debug for EthSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EthSocket")
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("mtu", &self.mtu)
            .finish()
    }
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    // SAFETY: all-zero is a valid ifreq.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    Ok(req)
}

/// A `sockaddr_ll` for this interface and EtherType, addressed to `dest`.
fn sockaddr_ll(ifindex: i32, dest: Option<&Mac>) -> libc::sockaddr_ll {
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as libc::c_ushort;
    sa.sll_protocol = ETHERTYPE_NDN.to_be();
    sa.sll_ifindex = ifindex;
    if let Some(d) = dest {
        sa.sll_halen = 6;
        sa.sll_addr[..6].copy_from_slice(d);
    }
    sa
}

impl EthSocket {
    /// Opens a packet socket on `ifname`, joins the NDN multicast group and
    /// reads the interface's MAC and MTU. Needs CAP_NET_RAW.
    pub fn open(ifname: &str) -> io::Result<EthSocket> {
        let mut req = ifreq_for(ifname)?;
        // SAFETY: plain socket(2); the fd is owned right away.
        let raw = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?;
        // SAFETY: `raw` is a fresh fd nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ioctls with a properly initialised ifreq on our fd.
        let ifindex = unsafe {
            cvt(libc::ioctl(raw, libc::SIOCGIFINDEX, &mut req))?;
            req.ifr_ifru.ifru_ifindex
        };
        let mtu = unsafe {
            cvt(libc::ioctl(raw, libc::SIOCGIFMTU, &mut req))?;
            req.ifr_ifru.ifru_mtu
        };
        let mac = unsafe {
            cvt(libc::ioctl(raw, libc::SIOCGIFHWADDR, &mut req))?;
            let sa = req.ifr_ifru.ifru_hwaddr;
            let mut m = [0u8; 6];
            for (d, s) in m.iter_mut().zip(sa.sa_data.iter()) {
                *d = *s as u8;
            }
            m
        };
        let sa = sockaddr_ll(ifindex, None);
        // SAFETY: bind(2) with a sockaddr_ll of the stated size.
        cvt(unsafe {
            libc::bind(
                raw,
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        let mreq = PacketMreq {
            mr_ifindex: ifindex,
            mr_type: PACKET_MR_MULTICAST,
            mr_alen: 6,
            mr_address: {
                let mut a = [0u8; 8];
                a[..6].copy_from_slice(&NDN_MULTICAST_MAC);
                a
            },
        };
        set_opt(raw, libc::SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
        // Our own transmissions would otherwise come back to this socket;
        // older kernels lack the option and the receive path filters them.
        let _ = set_opt(
            raw,
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &1 as &libc::c_int,
        );
        let _ = set_opt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &(4 << 20) as &libc::c_int,
        );
        let _ = set_opt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            &(4 << 20) as &libc::c_int,
        );
        // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open
        // and unchanged for its whole lifetime.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)?;
        Ok(EthSocket {
            fd,
            ifindex,
            ifname: ifname.to_owned(),
            mac,
            mtu: usize::try_from(mtu).unwrap_or(1500).min(MAX_PAYLOAD),
        })
    }

    fn raw(&self) -> RawFd {
        self.fd.get_ref().as_raw_fd()
    }
}

fn set_opt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: setsockopt(2) reads size_of::<T>() bytes from `v`.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// One received frame, already trimmed to its NDN element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame802 {
    pub from: Mac,
    /// Sent to a group address (the multicast face) rather than to us.
    pub multicast: bool,
    pub pkt: Bytes,
}

/// Per-frame buffer: the largest payload plus room to see truncation.
const SLOT: usize = MAX_PAYLOAD + 64;

/// Keeps a frame sent to us or to a group, trimmed to its NDN element; our
/// own transmissions (PACKET_OUTGOING), other hosts' frames, truncated ones
/// and those from `own` are dropped.
fn accept(d: mmsg::Received<'_, libc::sockaddr_ll>, own: &Mac) -> Option<((Mac, bool), usize)> {
    let a = d.addr;
    let multicast = match a.sll_pkttype {
        PACKET_HOST => false,
        PACKET_BROADCAST | PACKET_MULTICAST => true,
        _ => return None,
    };
    if d.truncated || a.sll_halen != 6 {
        return None;
    }
    let mut from = [0u8; 6];
    from.copy_from_slice(&a.sll_addr[..6]);
    if from == *own {
        return None;
    }
    Some(((from, multicast), element_len(d.payload)?))
}

/// One `recvmmsg` call on `fd`: the frames kept by [`accept`].
fn recv_frames(
    batch: &mut mmsg::RecvBatch<libc::sockaddr_ll>,
    fd: RawFd,
    own: &Mac,
) -> io::Result<Vec<Frame802>> {
    let frames = batch.recv(fd, |d| accept(d, own))?;
    Ok(frames
        .into_iter()
        .map(|((from, multicast), pkt)| Frame802 {
            from,
            multicast,
            pkt,
        })
        .collect())
}

/// Length of the NDN element at the start of a frame payload (padding after
/// it is ignored); `None` for truncated, oversized or unwanted elements.
pub fn element_len(payload: &[u8]) -> Option<usize> {
    match frame(payload) {
        Frame::Complete { typ, len } if wanted(typ, len) => Some(len),
        _ => None,
    }
}

/// Sends up to [`BATCH`] frames in one `sendmmsg`; returns how many left.
fn send_batch(sock: &EthSocket, items: &[(Mac, Bytes)]) -> io::Result<usize> {
    mmsg::send_batch(sock.raw(), items, |m| sockaddr_ll(sock.ifindex, Some(m)))
}

/// Receives frames from `sock` and hands them to the engine task.
pub async fn recv_loop(sock: Arc<EthSocket>, chan: usize, tx: InboundTx) {
    let mut batch = mmsg::RecvBatch::new(SLOT);
    loop {
        let Ok(mut guard) = sock.fd.readable().await else {
            return;
        };
        match guard.try_io(|fd| recv_frames(&mut batch, fd.as_raw_fd(), &sock.mac)) {
            Ok(Ok(frames)) => {
                if frames.is_empty() {
                    continue;
                }
                let msgs = frames
                    .into_iter()
                    .map(|f| Inbound::Eth {
                        chan,
                        from: f.from,
                        multicast: f.multicast,
                        pkt: f.pkt,
                    })
                    .collect();
                if tx.send(msgs).await.is_err() {
                    return;
                }
            }
            Ok(Err(e)) => {
                // ENETDOWN while the link is down: do not spin.
                tracing::debug!(iface = %sock.ifname, error = %e, "ethernet recv");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(_would_block) => {}
        }
    }
}

/// Sends the batches the engine task queues for this interface.
pub async fn send_loop(sock: Arc<EthSocket>, mut rx: mpsc::Receiver<Vec<(Mac, Bytes)>>) {
    while let Some(mut batch) = rx.recv().await {
        mmsg::coalesce(&mut rx, &mut batch);
        let mut off = 0;
        while off < batch.len() {
            let Ok(mut guard) = sock.fd.writable().await else {
                return;
            };
            match guard.try_io(|_| send_batch(&sock, &batch[off..])) {
                Ok(Ok(n)) => off += n.max(1),
                Ok(Err(e)) => {
                    tracing::debug!(iface = %sock.ifname, error = %e, "ethernet send");
                    off += 1;
                }
                Err(_would_block) => {}
            }
        }
    }
}

/// Formats a MAC address as `aa:bb:cc:dd:ee:ff`.
pub fn mac_string(m: &Mac) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_after_the_element_is_trimmed() {
        // A 6-octet Interest-shaped element padded to the 46-octet minimum.
        let mut p = vec![0x05, 0x04, 0x07, 0x02, 0x08, 0x00];
        p.resize(46, 0);
        assert_eq!(element_len(&p), Some(6));
        // Truncated element, keep-alive and unknown types are not delivered.
        assert_eq!(element_len(&[0x06, 0x10, 1, 2]), None);
        assert_eq!(element_len(&[0x64, 0x00, 0, 0]), None);
        assert_eq!(element_len(&[0x07, 0x00]), None);
    }

    #[test]
    fn group_bit_and_formatting() {
        assert!(is_group(&NDN_MULTICAST_MAC));
        assert!(!is_group(&[0x02, 0, 0, 0, 0, 1]));
        assert_eq!(mac_string(&NDN_MULTICAST_MAC), "01:00:5e:00:17:aa");
    }

    #[test]
    fn sockaddr_carries_ethertype_and_destination() {
        let sa = sockaddr_ll(7, Some(&NDN_MULTICAST_MAC));
        assert_eq!(sa.sll_ifindex, 7);
        assert_eq!(u16::from_be(sa.sll_protocol), ETHERTYPE_NDN);
        assert_eq!(sa.sll_halen, 6);
        assert_eq!(&sa.sll_addr[..6], &NDN_MULTICAST_MAC);
    }

    #[test]
    fn bad_interface_names_are_refused_before_any_syscall() {
        assert!(ifreq_for("").is_err());
        assert!(ifreq_for("a-name-much-too-long-for-linux").is_err());
        assert!(ifreq_for("eth0").is_ok());
    }
}
