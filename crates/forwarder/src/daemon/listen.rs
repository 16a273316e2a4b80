//! Sockets for the shell: listeners, accept loops, TCP connects, the
//! multicast socket.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, UdpSocket, UnixListener};

use super::{AnyStream, ConnectPurpose, Inbound, InboundTx};

const TCP_CONNECT_TIMEOUT: Duration = Duration::from_millis(800);

pub(super) fn spawn_connect(
    peer: SocketAddr,
    purpose: ConnectPurpose,
    delay: Duration,
    tx: InboundTx,
) {
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let result =
            match tokio::time::timeout(TCP_CONNECT_TIMEOUT, tokio::net::TcpStream::connect(peer))
                .await
            {
                Ok(r) => r,
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connect timed out",
                )),
            };
        if let Ok(s) = &result {
            let _ = s.set_nodelay(true);
        }
        let _ = tx.send(vec![Inbound::Connected { purpose, result }]).await;
    });
}

pub(super) fn tcp_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    s.listen(256)?;
    TcpListener::from_std(s.into())
}

/// Binds the Unix socket so that it appears at `path` only once it is
/// listening and world-connectable: bound under a temporary name, chmod
/// 0666, then renamed into place (clients poll for the path).
pub(super) fn unix_listener(path: &std::path::Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if path.exists() && std::os::unix::net::UnixStream::connect(path).is_ok() {
        // A socket left by a crashed run is replaced; a live one is not.
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            "another forwarder is listening",
        ));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let l = match UnixListener::bind(&tmp) {
        Ok(l) => l,
        // The temporary name may exceed sun_path where `path` still fits.
        Err(_) => {
            let _ = std::fs::remove_file(path);
            let l = UnixListener::bind(path)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
            return Ok(l);
        }
    };
    let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o666))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(l)
}

pub(super) fn multicast_socket(
    group: SocketAddr,
    iface: std::net::Ipv4Addr,
) -> std::io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let SocketAddr::V4(g) = group else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "IPv4 group only",
        ));
    };
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::from(([0, 0, 0, 0], g.port())).into())?;
    s.join_multicast_v4(g.ip(), &iface)?;
    s.set_multicast_if_v4(&iface)?;
    s.set_multicast_loop_v4(false)?;
    UdpSocket::from_std(s.into())
}

pub(super) async fn accept_tcp(l: TcpListener, tx: InboundTx) {
    loop {
        match l.accept().await {
            Ok((s, _)) => {
                let _ = s.set_nodelay(true);
                if tx
                    .send(vec![Inbound::Accepted(AnyStream::Tcp(s))])
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "TCP accept");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

pub(super) async fn accept_unix(l: UnixListener, tx: InboundTx) {
    loop {
        match l.accept().await {
            Ok((s, _)) => {
                if tx
                    .send(vec![Inbound::Accepted(AnyStream::Unix(s))])
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "Unix accept");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
