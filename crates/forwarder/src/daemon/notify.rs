//! sd_notify(3) without libsystemd: one datagram to `$NOTIFY_SOCKET`, so a
//! `Type=notify` unit (and anything else that sets the variable) learns when
//! faces, routes and the sockets are ready.

use std::io;
use std::os::unix::net::UnixDatagram;

/// Sends `state` (e.g. `READY=1`) to `$NOTIFY_SOCKET`. Returns `Ok(false)`
/// when the variable is unset (not started by a notify-aware supervisor).
pub fn notify(state: &str) -> io::Result<bool> {
    match std::env::var_os("NOTIFY_SOCKET") {
        Some(addr) => send(&addr, state).map(|()| true),
        None => Ok(false),
    }
}

/// `RELOADING=1` with the `MONOTONIC_USEC` stamp systemd asks for; send
/// `READY=1` when the reload is done.
pub fn reloading() -> io::Result<bool> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let usec = (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000;
    notify(&format!("RELOADING=1\nMONOTONIC_USEC={usec}"))
}

/// Sends `state` to the notify socket `addr`: a path, or `@name` for a
/// Linux abstract socket (what systemd uses).
pub fn send(addr: &std::ffi::OsStr, state: &str) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = addr.as_bytes();
    let sock = UnixDatagram::unbound()?;
    match bytes.strip_prefix(b"@") {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let a = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sock.send_to_addr(state.as_bytes(), &a)?;
        }
        None if bytes.first() == Some(&b'/') => {
            sock.send_to(state.as_bytes(), std::path::Path::new(addr))?;
        }
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "NOTIFY_SOCKET is neither a path nor @abstract",
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_to_a_path_and_to_an_abstract_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let rx = UnixDatagram::bind(&path).unwrap();
        send(path.as_os_str(), "READY=1").unwrap();
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("icnfwd-notify-test-{}", std::process::id());
        let a = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let rx = UnixDatagram::bind_addr(&a).unwrap();
        send(std::ffi::OsStr::new(&format!("@{name}")), "STOPPING=1").unwrap();
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1");

        assert!(send(std::ffi::OsStr::new("relative"), "READY=1").is_err());
    }
}
