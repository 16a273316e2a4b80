//! End-to-end load test of one `icnfwd` on loopback UDP.
//!
//! Starts the `icnfwd` binary built next to this example with a temporary
//! config (a UDP listener, a permanent UDP face to the producer, a route
//! `/load` to it), then runs a producer and a windowed consumer in two
//! threads that speak plain NDN over UDP with batched socket calls
//! (`recvmmsg`/`sendmmsg`, runs of equal-size datagrams as one GSO message)
//! and 4 MiB socket buffers, so that a full window is never dropped by the
//! kernel. Every Interest has a unique name, so every
//! exchange crosses the whole forwarder (PIT insert, FIB lookup, Data
//! matching, CS insert). Prints exchanges per second and the CPU time the
//! forwarder and the load generator itself used.
//!
//! ```text
//! cargo build --release -p icn-forwarder --bin icnfwd && cargo build --release --example loadgen
//! target/release/examples/loadgen --exchanges 500000 --window 256
//! ```

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use icnfwd_workspace::tlv::{decode_packet, Component, Data, Interest, Name, NetPacket};

const BATCH: usize = 64;
const MAX_DGRAM: usize = 9000;

struct Args {
    exchanges: u64,
    window: usize,
    payload_bytes: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        exchanges: 1_000_000,
        window: 512,
        payload_bytes: 100,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--exchanges" => a.exchanges = v.parse().expect("--exchanges N"),
            "--window" => a.window = v.parse().expect("--window N"),
            "--payload" => a.payload_bytes = v.parse().expect("--payload BYTES"),
            _ => {
                eprintln!("usage: loadgen [--exchanges N] [--window N] [--payload BYTES]");
                std::process::exit(2);
            }
        }
    }
    a
}

/// Receives up to `BATCH` datagrams with one `recvmmsg` call.
fn recv_batch(
    sock: &UdpSocket,
    bufs: &mut [[u8; MAX_DGRAM]],
    out: &mut Vec<(usize, SocketAddr)>,
) -> io::Result<()> {
    out.clear();
    let n = bufs.len().min(BATCH);
    let mut iov: Vec<libc::iovec> = bufs[..n]
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: MAX_DGRAM,
        })
        .collect();
    // SAFETY: zeroed sockaddr_storage is a valid "no address" value.
    let mut addrs: Vec<libc::sockaddr_storage> =
        (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
    // SAFETY: zeroed mmsghdr is valid; every pointer is set below.
    let mut msgs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
    for i in 0..n {
        msgs[i].msg_hdr.msg_iov = &mut iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = (&mut addrs[i] as *mut libc::sockaddr_storage).cast();
        msgs[i].msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as u32;
    }
    // SAFETY: msgs/iov/addrs live until the call returns and describe valid buffers.
    let got = unsafe {
        libc::recvmmsg(
            sock.as_raw_fd(),
            msgs.as_mut_ptr(),
            n as u32,
            libc::MSG_WAITFORONE,
            std::ptr::null_mut(),
        )
    };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    for (i, msg) in msgs.iter().enumerate().take(got as usize) {
        let sa = &addrs[i];
        let addr = if sa.ss_family as i32 == libc::AF_INET {
            // SAFETY: the kernel filled an IPv4 address of this family.
            let sin: &libc::sockaddr_in = unsafe { &*(sa as *const libc::sockaddr_storage).cast() };
            SocketAddr::from((
                std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            ))
        } else {
            continue;
        };
        out.push((msg.msg_len as usize, addr));
    }
    Ok(())
}

/// `UDP_SEGMENT` from linux/udp.h.
const UDP_SEGMENT: libc::c_int = 103;
/// Payload bytes per GSO message (one IP packet before segmentation).
const GSO_MAX_BYTES: usize = 60_000;
/// Segments per GSO message (the kernel's UDP_MAX_SEGMENTS is at least 64).
const GSO_MAX_SEGMENTS: usize = 64;
/// Cleared when the kernel refuses GSO; then every datagram is its own message.
static GSO: AtomicBool = AtomicBool::new(true);

/// Control buffer for one `UDP_SEGMENT` cmsg, aligned for `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct SegmentCmsg([u8; 32]);

/// Sends every packet to `to` with as few `sendmmsg` calls as possible.
/// Runs of equal-length packets go out as one GSO message (`UDP_SEGMENT`),
/// which the receiver still sees as separate datagrams: the load generator
/// spends less of the shared CPU than the forwarder it measures.
fn send_batch(sock: &UdpSocket, pkts: &[Bytes], to: SocketAddr) -> io::Result<()> {
    let SocketAddr::V4(v4) = to else {
        return Err(io::Error::other("IPv4 only"));
    };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let mut iov: Vec<libc::iovec> = pkts
        .iter()
        .map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        })
        .collect();
    // Messages as (first packet, packet count, segment size).
    let gso = GSO.load(Ordering::Relaxed);
    let mut groups: Vec<(usize, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < pkts.len() {
        let seg = pkts[i].len();
        let mut j = i + 1;
        let mut total = seg;
        while gso && j < pkts.len() && j - i < GSO_MAX_SEGMENTS {
            let l = pkts[j].len();
            if l == 0 || l > seg || total + l > GSO_MAX_BYTES {
                break;
            }
            total += l;
            j += 1;
            if l < seg {
                break;
            }
        }
        groups.push((i, j - i, seg));
        i = j;
    }
    let mut cmsgs = vec![SegmentCmsg([0; 32]); groups.len()];
    // SAFETY: zeroed mmsghdr is valid; pointers set below.
    let mut msgs: Vec<libc::mmsghdr> = (0..groups.len())
        .map(|_| unsafe { std::mem::zeroed() })
        .collect();
    for (g, m) in msgs.iter_mut().enumerate() {
        let (first, count, seg) = groups[g];
        m.msg_hdr.msg_iov = iov[first..].as_mut_ptr();
        m.msg_hdr.msg_iovlen = count as _;
        m.msg_hdr.msg_name = (&sin as *const libc::sockaddr_in as *mut libc::sockaddr_in).cast();
        m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
        if count > 1 {
            m.msg_hdr.msg_control = cmsgs[g].0.as_mut_ptr().cast();
            // SAFETY: the aligned 32-byte buffer holds CMSG_SPACE(2) bytes;
            // CMSG_* only compute offsets into it.
            unsafe {
                m.msg_hdr.msg_controllen = libc::CMSG_SPACE(2) as _;
                let c = libc::CMSG_FIRSTHDR(&m.msg_hdr);
                (*c).cmsg_level = libc::SOL_UDP;
                (*c).cmsg_type = UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(2) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg as u16);
            }
        }
    }
    let mut sent = 0usize;
    while sent < msgs.len() {
        let n = (msgs.len() - sent).min(BATCH);
        // SAFETY: msgs/iov/cmsgs/sin outlive the call; buffers are valid for reads.
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs[sent..].as_mut_ptr(), n as u32, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if groups[sent].1 > 1 && GSO.swap(false, Ordering::Relaxed) {
                // GSO unsupported here: resend the rest one per message.
                let rest: Vec<Bytes> = pkts[groups[sent].0..].to_vec();
                return send_batch(sock, &rest, to);
            }
            return Err(e);
        }
        sent += r as usize;
    }
    Ok(())
}

/// Large kernel buffers, so that a full window never overflows a socket.
fn set_buffers(sock: &UdpSocket) {
    let size: libc::c_int = 4 << 20;
    for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
        // SAFETY: a valid fd and a c_int option value of the stated size.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

fn producer(sock: UdpSocket, payload: Bytes, stop: Arc<AtomicBool>) {
    sock.set_read_timeout(Some(Duration::from_millis(100))).ok();
    let mut bufs = vec![[0u8; MAX_DGRAM]; BATCH];
    let mut got = Vec::with_capacity(BATCH);
    let mut replies: Vec<Bytes> = Vec::with_capacity(BATCH);
    let mut out = BytesMut::with_capacity(BATCH * (payload.len() + 128));
    while !stop.load(Ordering::Relaxed) {
        if recv_batch(&sock, &mut bufs, &mut got).is_err() {
            continue;
        }
        replies.clear();
        let mut to = None;
        for (i, &(len, from)) in got.iter().enumerate() {
            to = Some(from);
            let wire = Bytes::copy_from_slice(&bufs[i][..len]);
            let Ok((_, Some(NetPacket::Interest(interest)))) = decode_packet(wire) else {
                continue;
            };
            let data = Data::new(interest.name.clone(), payload.clone());
            data.encode_signed_digest_sha256_into(&mut out);
            replies.push(out.split().freeze());
        }
        if let Some(to) = to {
            let _ = send_batch(&sock, &replies, to);
        }
    }
}

struct ConsumerResult {
    received: u64,
    lost: u64,
    elapsed: Duration,
}

fn consumer(sock: UdpSocket, fwd: SocketAddr, args: &Args) -> ConsumerResult {
    sock.set_read_timeout(Some(Duration::from_millis(50))).ok();
    let run: u64 = std::process::id() as u64;
    let prefix: Name = format!("/load/r{run}").parse().expect("prefix");
    let mut next_seq: u64 = 0;
    let mut received: u64 = 0;
    let mut lost: u64 = 0;
    // Outstanding Interests in send order; `done` marks those answered.
    let mut outstanding: VecDeque<(u64, Instant)> = VecDeque::new();
    let mut done = vec![false; args.exchanges as usize + 1];
    let mut bufs = vec![[0u8; MAX_DGRAM]; BATCH];
    let mut got = Vec::with_capacity(BATCH);
    let mut out = BytesMut::with_capacity(64 * 1024);
    let mut pkts: Vec<Bytes> = Vec::with_capacity(BATCH * 8);
    let start = Instant::now();
    let mut in_flight = 0usize;
    let mut nonce: u32 = 0x1234_5678;
    while received + lost < args.exchanges {
        pkts.clear();
        while in_flight < args.window && next_seq < args.exchanges {
            let mut i = Interest::new(prefix.append(Component::sequence_num(next_seq)));
            nonce = nonce.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            i.nonce = Some(nonce);
            i.lifetime = Some(Duration::from_secs(2));
            i.encode_into(&mut out);
            pkts.push(out.split().freeze());
            outstanding.push_back((next_seq, Instant::now()));
            next_seq += 1;
            in_flight += 1;
        }
        if !pkts.is_empty() {
            send_batch(&sock, &pkts, fwd).expect("send Interests");
        }
        if recv_batch(&sock, &mut bufs, &mut got).is_ok() {
            for (k, &(len, _)) in got.iter().enumerate() {
                let wire = Bytes::copy_from_slice(&bufs[k][..len]);
                if let Ok((_, Some(NetPacket::Data(d)))) = decode_packet(wire) {
                    if let Some(seq) = d.name.last().and_then(|c| c.as_sequence_num()) {
                        if let Some(slot) = done.get_mut(seq as usize) {
                            if !*slot {
                                *slot = true;
                                received += 1;
                                in_flight -= 1;
                            }
                        }
                    }
                }
            }
        }
        // Retire answered Interests and give up on those older than 2 s.
        while let Some(&(seq, at)) = outstanding.front() {
            if done[seq as usize] {
                outstanding.pop_front();
            } else if at.elapsed() > Duration::from_secs(2) {
                done[seq as usize] = true;
                lost += 1;
                in_flight -= 1;
                outstanding.pop_front();
            } else {
                break;
            }
        }
    }
    ConsumerResult {
        received,
        lost,
        elapsed: start.elapsed(),
    }
}

fn icnfwd_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/examples/loadgen -> target/<profile>/icnfwd
    let dir = exe.parent().and_then(|p| p.parent()).expect("target dir");
    dir.join("icnfwd")
}

fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields after the command: state is index 0; utime is 11, stime is 12.
    let ticks: f64 = f.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz.max(1.0)
}

struct Daemon(Child);
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let args = parse_args();
    let dir = tempfile::tempdir().expect("tempdir");
    let prod_sock = UdpSocket::bind("127.0.0.1:0").expect("bind producer");
    let prod_addr = prod_sock.local_addr().expect("addr");
    let cons_sock = UdpSocket::bind("127.0.0.1:0").expect("bind consumer");
    set_buffers(&prod_sock);
    set_buffers(&cons_sock);
    let fwd_port = {
        let probe = UdpSocket::bind("127.0.0.1:0").expect("probe port");
        probe.local_addr().expect("addr").port()
    };
    let fwd_addr: SocketAddr = format!("127.0.0.1:{fwd_port}").parse().expect("addr");
    let cfg = format!(
        r#"log_level = "warn"
[unix]
path = "{sock}"
[udp]
listen = ["{fwd_addr}"]
[tcp]
enabled = false
[[face]]
uri = "udp4://{prod_addr}"
[[route]]
prefix = "/load"
face = "udp4://{prod_addr}"
cost = 0
"#,
        sock = dir.path().join("nfd.sock").display()
    );
    let cfg_path = dir.path().join("icnfwd.toml");
    std::fs::write(&cfg_path, cfg).expect("write config");
    let bin = icnfwd_path();
    let child = Command::new(&bin)
        .arg("--config")
        .arg(&cfg_path)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "start {}: {e} (build it: cargo build --release --bin icnfwd)",
                bin.display()
            )
        });
    let pid = child.id();
    let _daemon = Daemon(child);
    let sock_path = dir.path().join("nfd.sock");
    let t0 = Instant::now();
    while !sock_path.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let payload = Bytes::from(vec![0x5a; args.payload_bytes]);
    let p = {
        let stop = stop.clone();
        std::thread::spawn(move || producer(prod_sock, payload, stop))
    };
    let cpu0 = cpu_seconds(pid);
    let own0 = own_cpu_seconds();
    let r = consumer(cons_sock, fwd_addr, &args);
    let cpu1 = cpu_seconds(pid);
    let own1 = own_cpu_seconds();
    stop.store(true, Ordering::Relaxed);
    let _ = p.join();

    let secs = r.elapsed.as_secs_f64();
    println!(
        "exchanges: {} answered, {} lost, in {:.2} s",
        r.received, r.lost, secs
    );
    println!(
        "throughput: {:.0} Interest/Data exchanges per second",
        r.received as f64 / secs
    );
    println!(
        "icnfwd CPU: {:.2} s ({:.0}% of one core), {:.2} us per exchange",
        cpu1 - cpu0,
        100.0 * (cpu1 - cpu0) / secs,
        1e6 * (cpu1 - cpu0) / r.received.max(1) as f64
    );
    println!(
        "loadgen CPU: {:.2} s ({:.0}% of one core), {:.2} us per exchange",
        own1 - own0,
        100.0 * (own1 - own0) / secs,
        1e6 * (own1 - own0) / r.received.max(1) as f64
    );
}

/// CPU time (user + system) of this process, both threads together.
fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
