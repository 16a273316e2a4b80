//! `recvmmsg`/`sendmmsg` batching shared by the UDP and Ethernet faces (and
//! by `examples/loadgen`, so the load generator pays what the daemon pays
//! per datagram): one system call moves up to [`BATCH`] datagrams. Each kept datagram is copied
//! into its own allocation, so a packet the engine keeps holds only its own
//! bytes (slices of one batch buffer made a kept Interest pin ~220 KB).

use std::io;
use std::os::fd::RawFd;

use bytes::Bytes;
use tokio::sync::mpsc;

/// Datagrams per system call.
pub const BATCH: usize = 32;

/// Packets the kernel dropped on this socket so far (`SO_MEMINFO`'s
/// `SK_MEMINFO_DROPS`: a full receive queue, mostly); `None` where the
/// kernel does not say.
pub fn kernel_drops(fd: RawFd) -> Option<u32> {
    let mut info = [0u32; 16]; // SK_MEMINFO_VARS is 9 on current kernels
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: a valid fd and a buffer of `len` bytes the kernel fills.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let at = libc::SK_MEMINFO_DROPS as usize;
    (rc == 0 && len as usize >= (at + 1) * 4).then(|| info[at])
}

/// A C socket address type `recvmmsg` fills.
///
/// # Safety
/// Implementors must be plain C structs for which all-zero bytes are a valid
/// value.
pub unsafe trait RecvAddr: Copy {}

// SAFETY: plain C structs, valid when zeroed.
unsafe impl RecvAddr for libc::sockaddr_storage {}
// SAFETY: as above.
unsafe impl RecvAddr for libc::sockaddr_ll {}

/// A destination address `sendmmsg` reads.
pub trait SendAddr {
    /// Pointer and length for `msg_name`/`msg_namelen`, valid while `self` is.
    fn ptr_len(&self) -> (*const libc::c_void, libc::socklen_t);
}

impl SendAddr for libc::sockaddr_ll {
    fn ptr_len(&self) -> (*const libc::c_void, libc::socklen_t) {
        (
            (self as *const Self).cast(),
            std::mem::size_of::<Self>() as libc::socklen_t,
        )
    }
}

impl SendAddr for socket2::SockAddr {
    fn ptr_len(&self) -> (*const libc::c_void, libc::socklen_t) {
        (self.as_ptr() as *const libc::c_void, self.len())
    }
}

/// One message as `recvmmsg` left it, offered to the caller's filter.
pub struct Received<'a, A> {
    /// Source address, `namelen` bytes of it written by the kernel.
    pub addr: &'a A,
    pub namelen: libc::socklen_t,
    /// The message did not fit its slot.
    pub truncated: bool,
    pub payload: &'a [u8],
    /// On a UDP socket with `UDP_GRO`: the message is several datagrams of
    /// this size back to back (the last may be shorter).
    pub segment: Option<usize>,
}

/// `UDP_GRO` from linux/udp.h (not in every libc build).
pub const UDP_GRO: libc::c_int = 104;

/// Asks the kernel to hand over runs of same-size datagrams from one peer
/// (typically one GSO send) as one message (`UDP_GRO`): one receive instead
/// of one per datagram. Best effort.
pub fn enable_gro(fd: RawFd) {
    let on: libc::c_int = 1;
    // SAFETY: a valid fd and an int option of the stated size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_UDP,
            UDP_GRO,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Control-message space per slot (room for one `UDP_GRO` int), aligned for
/// `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct CmsgBuf([u8; 32]);

/// Receive buffers for one `recvmmsg` call: [`BATCH`] slots of `slot` bytes.
pub struct RecvBatch<A: RecvAddr> {
    slot: usize,
    bufs: Vec<u8>,
    addrs: Vec<A>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    ctrl: Vec<CmsgBuf>,
}

// SAFETY: the raw pointers in `iovs`/`hdrs` only ever point into this
// struct's own heap buffers and are rebuilt before every call, so moving the
// batch to another thread is sound.
unsafe impl<A: RecvAddr + Send> Send for RecvBatch<A> {}

impl<A: RecvAddr> RecvBatch<A> {
    /// Buffers for datagrams of up to `slot` bytes (a larger one is reported
    /// as truncated).
    pub fn new(slot: usize) -> Self {
        // SAFETY: all-zero is a valid value for these plain C structs
        // (`RecvAddr`'s contract for `A`).
        let (a, h): (A, libc::mmsghdr) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        RecvBatch {
            slot,
            bufs: vec![0u8; BATCH * slot],
            addrs: vec![a; BATCH],
            iovs: Vec::with_capacity(BATCH),
            hdrs: vec![h; BATCH],
            ctrl: vec![CmsgBuf([0; 32]); BATCH],
        }
    }

    /// One non-blocking `recvmmsg` on `fd`. `keep` sees every message and
    /// returns its metadata and how many leading payload bytes to keep, or
    /// `None` to drop it. A GRO message (`segment` set) comes back as one
    /// datagram per segment, each with a copy of the metadata.
    pub fn recv<T: Clone>(
        &mut self,
        fd: RawFd,
        mut keep: impl FnMut(Received<'_, A>) -> Option<(T, usize)>,
    ) -> io::Result<Vec<(T, Bytes)>> {
        let slot = self.slot;
        self.iovs.clear();
        for i in 0..BATCH {
            self.iovs.push(libc::iovec {
                iov_base: self.bufs[i * slot..].as_mut_ptr().cast(),
                iov_len: slot,
            });
        }
        for i in 0..BATCH {
            let h = &mut self.hdrs[i];
            h.msg_hdr.msg_name = (&mut self.addrs[i] as *mut A).cast();
            h.msg_hdr.msg_namelen = std::mem::size_of::<A>() as libc::socklen_t;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = self.ctrl[i].0.as_mut_ptr().cast();
            h.msg_hdr.msg_controllen = std::mem::size_of::<CmsgBuf>() as _;
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
        // SAFETY: every header points at live buffers of the stated sizes
        // owned by `self`, which outlives the call.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // Each datagram gets its own allocation: a packet the engine keeps
        // (PIT in-record, CS, queue, reassembly) then holds its own bytes
        // only, not the whole batch (one kept 100-octet Interest pinned up
        // to 32 x 8800 octets, ~220 KB per PIT entry in the issue-17 probe).
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let h = &self.hdrs[i];
            let len = (h.msg_len as usize).min(slot);
            let payload = &self.bufs[i * slot..i * slot + len];
            let segment = gro_segment(&h.msg_hdr);
            let got = Received {
                addr: &self.addrs[i],
                namelen: h.msg_hdr.msg_namelen,
                truncated: h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                payload,
                segment,
            };
            let Some((meta, keep_len)) = keep(got) else {
                continue;
            };
            let kept = &payload[..keep_len.min(len)];
            match segment {
                Some(seg) if seg > 0 && kept.len() > seg => {
                    for chunk in kept.chunks(seg) {
                        out.push((meta.clone(), Bytes::copy_from_slice(chunk)));
                    }
                }
                _ => out.push((meta, Bytes::copy_from_slice(kept))),
            }
        }
        Ok(out)
    }
}

/// The segment size of a `UDP_GRO` control message in `hdr`, if any.
fn gro_segment(hdr: &libc::msghdr) -> Option<usize> {
    if hdr.msg_controllen == 0 || hdr.msg_control.is_null() {
        return None;
    }
    // SAFETY: the kernel wrote `msg_controllen` bytes of well-formed control
    // messages into our buffer; CMSG_* walk them within that length.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                let v = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                return usize::try_from(v).ok();
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    None
}

/// One non-blocking `sendmmsg` on `fd` for up to [`BATCH`] of `items`, each
/// sent to `addr(destination)`; returns how many went out.
pub fn send_batch<T, A: SendAddr>(
    fd: RawFd,
    items: &[(T, Bytes)],
    addr: impl Fn(&T) -> A,
) -> io::Result<usize> {
    let items = &items[..items.len().min(BATCH)];
    let addrs: Vec<A> = items.iter().map(|(to, _)| addr(to)).collect();
    let mut iovs: Vec<libc::iovec> = items
        .iter()
        .map(|(_, b)| libc::iovec {
            iov_base: b.as_ptr() as *mut libc::c_void,
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: zeroed mmsghdr is valid; the pointers set below stay alive
    // for the call.
    let mut hdrs: Vec<libc::mmsghdr> = (0..items.len())
        .map(|_| unsafe { std::mem::zeroed() })
        .collect();
    for (i, h) in hdrs.iter_mut().enumerate() {
        let (name, namelen) = addrs[i].ptr_len();
        h.msg_hdr.msg_name = name.cast_mut();
        h.msg_hdr.msg_namelen = namelen;
        h.msg_hdr.msg_iov = &mut iovs[i];
        h.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: headers reference `addrs`, `iovs` and the `Bytes` in `items`,
    // all alive until the call returns; the kernel only reads them.
    let n = unsafe {
        libc::sendmmsg(
            fd,
            hdrs.as_mut_ptr(),
            hdrs.len() as libc::c_uint,
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Appends to `batch` whatever the engine task has already queued, up to
/// four system calls' worth, so a burst goes out in full batches.
pub(crate) fn coalesce<T>(rx: &mut mpsc::Receiver<Vec<T>>, batch: &mut Vec<T>) {
    while batch.len() < BATCH * 4 {
        match rx.try_recv() {
            Ok(more) => batch.extend(more),
            Err(_) => break,
        }
    }
}

/// `UDP_SEGMENT` from linux/udp.h (not in every libc build).
pub const UDP_SEGMENT: libc::c_int = 103;
/// Segments per GSO message (the kernel's UDP_MAX_SEGMENTS is 64 or more).
const GSO_MAX_SEGMENTS: usize = 64;
/// Largest segment sent with GSO: fits the path MTU of any IPv6 link
/// (1280 - 48), because GSO refuses segments that would need IP
/// fragmentation. Larger datagrams go one per message.
pub const GSO_MAX_SEGMENT_BYTES: usize = 1232;
/// Payload bytes per GSO message (one IP packet before segmentation).
const GSO_MAX_BYTES: usize = 60_000;

/// Control buffer holding one `UDP_SEGMENT` cmsg, aligned for `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct SegmentCmsg([u8; 32]);

/// `sendmmsg` buffers, kept across calls. Runs of datagrams to the same
/// peer with the same length go out as one GSO message (`UDP_SEGMENT`):
/// the kernel builds, routes and loops back one packet instead of one
/// per datagram, and the receiver still sees separate datagrams. Only
/// consecutive items form a run: callers group their backlog per peer
/// first (the UDP faces do, in `UdpPort::flush`).
pub struct UdpSendBatch {
    addrs: Vec<socket2::SockAddr>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// Datagrams and segment size per message.
    groups: Vec<(usize, usize)>,
    cmsgs: Vec<SegmentCmsg>,
    /// Cleared for good when the kernel refuses a GSO message.
    gso: bool,
}

// SAFETY: the raw pointers in `iovs`/`hdrs` are rebuilt before every
// call and only used during it.
unsafe impl Send for UdpSendBatch {}

impl Default for UdpSendBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl UdpSendBatch {
    pub fn new() -> Self {
        UdpSendBatch {
            addrs: Vec::with_capacity(BATCH),
            iovs: Vec::new(),
            hdrs: Vec::with_capacity(BATCH),
            groups: Vec::with_capacity(BATCH),
            cmsgs: vec![SegmentCmsg([0; 32]); BATCH],
            gso: true,
        }
    }

    /// One `sendmmsg` call for up to [`BATCH`] messages; returns how many
    /// of `items` went out.
    pub fn send(
        &mut self,
        fd: RawFd,
        items: &[(std::net::SocketAddr, Bytes)],
    ) -> io::Result<usize> {
        match self.send_once(fd, items) {
            Err(e)
                if self.groups.first().is_some_and(|g| g.0 > 1)
                    && matches!(
                        e.raw_os_error(),
                        Some(libc::EINVAL | libc::EIO | libc::EOPNOTSUPP | libc::EMSGSIZE)
                    ) =>
            {
                // How the kernel says GSO is unsupported on this path
                // (no checksum offload, IPsec, too small an MTU). Fall
                // back to one datagram per message for good; other
                // errors (unreachable peer, ...) are the datagram's.
                tracing::debug!(error = %e, "udp: GSO refused, sending datagrams singly");
                self.gso = false;
                self.send_once(fd, items)
            }
            r => r,
        }
    }

    fn send_once(
        &mut self,
        fd: RawFd,
        items: &[(std::net::SocketAddr, Bytes)],
    ) -> io::Result<usize> {
        self.addrs.clear();
        self.iovs.clear();
        self.hdrs.clear();
        self.groups.clear();
        let mut i = 0;
        while i < items.len() && self.groups.len() < BATCH {
            let (to, first) = &items[i];
            let seg = first.len();
            let mut j = i + 1;
            if self.gso && seg > 0 && seg <= GSO_MAX_SEGMENT_BYTES {
                let mut total = seg;
                while j < items.len() && j - i < GSO_MAX_SEGMENTS {
                    let (t, b) = &items[j];
                    if t != to || b.is_empty() || b.len() > seg || total + b.len() > GSO_MAX_BYTES {
                        break;
                    }
                    total += b.len();
                    j += 1;
                    // Only the last segment may be shorter.
                    if b.len() < seg {
                        break;
                    }
                }
            }
            for (_, b) in &items[i..j] {
                self.iovs.push(libc::iovec {
                    iov_base: b.as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                });
            }
            self.addrs.push(socket2::SockAddr::from(*to));
            self.groups.push((j - i, seg));
            i = j;
        }
        // Pointers are taken only now that no vector grows any more.
        let mut iov_off = 0;
        for (g, &(count, seg)) in self.groups.iter().enumerate() {
            // SAFETY: all-zero is a valid mmsghdr.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = self.addrs[g].as_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_namelen = self.addrs[g].len();
            h.msg_hdr.msg_iov = self.iovs[iov_off..].as_mut_ptr();
            h.msg_hdr.msg_iovlen = count as _;
            iov_off += count;
            if count > 1 {
                let buf = &mut self.cmsgs[g];
                h.msg_hdr.msg_control = buf.0.as_mut_ptr().cast();
                // SAFETY: CMSG_* only compute sizes and offsets; the
                // buffer holds CMSG_SPACE(2) bytes (checked below) and
                // is aligned for cmsghdr.
                unsafe {
                    let space = libc::CMSG_SPACE(2) as usize;
                    debug_assert!(space <= buf.0.len());
                    h.msg_hdr.msg_controllen = space as _;
                    let c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                    (*c).cmsg_level = libc::SOL_UDP;
                    (*c).cmsg_type = UDP_SEGMENT;
                    (*c).cmsg_len = libc::CMSG_LEN(2) as _;
                    std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg as u16);
                }
            }
            self.hdrs.push(h);
        }
        // SAFETY: every header points into `addrs`, `iovs`, `cmsgs` and
        // the `Bytes` of `items`, all alive and unchanged until the call
        // returns; the kernel only reads them.
        let n = unsafe {
            libc::sendmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                self.hdrs.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(self.groups[..n as usize].iter().map(|g| g.0).sum())
    }
}
