//! The HTTP side of the metrics endpoint: one request per connection, its
//! head read up to a bound, answered, closed. Bodies of requests are never
//! read (GET has none).

use std::future::Future;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Request heads longer than this are refused (Prometheus sends ~200 B).
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// OpenMetrics text, which `prometheus-client` writes and Prometheus reads.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("connection closed before the request head ended")]
    Closed,
}

/// What a request head asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Metrics,
    NotFound,
    MethodNotAllowed,
    BadRequest,
}

fn route(head: &[u8]) -> Route {
    let Some(line) = head.split(|&b| b == b'\n').next() else {
        return Route::BadRequest;
    };
    let Ok(line) = std::str::from_utf8(line) else {
        return Route::BadRequest;
    };
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Route::BadRequest;
    };
    if !version.starts_with("HTTP/1.") {
        return Route::BadRequest;
    }
    let path = target.split('?').next().unwrap_or(target);
    if path != "/metrics" {
        Route::NotFound
    } else if method != "GET" {
        Route::MethodNotAllowed
    } else {
        Route::Metrics
    }
}

/// Reads until the blank line that ends the head; `None` when it grows
/// past [`MAX_HEAD_BYTES`].
async fn read_head(stream: &mut TcpStream) -> Result<Option<Vec<u8>>, HttpError> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(HttpError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            return Ok(Some(buf));
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
    }
}

fn response(code: u16, reason: &str, content_type: &str, extra: &str, body: &str) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body.as_bytes());
    r
}

/// Answers one request on `stream`; `scrape` yields the exposition or why
/// the forwarder could not be read (then 503).
pub(super) async fn serve<F, Fut>(mut stream: TcpStream, scrape: F) -> Result<(), HttpError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let text = "text/plain; charset=utf-8";
    let resp = match read_head(&mut stream).await?.as_deref().map(route) {
        None => response(
            431,
            "Request Header Fields Too Large",
            text,
            "",
            "request too large\n",
        ),
        Some(Route::BadRequest) => response(400, "Bad Request", text, "", "bad request\n"),
        Some(Route::NotFound) => response(404, "Not Found", text, "", "only /metrics is served\n"),
        Some(Route::MethodNotAllowed) => response(
            405,
            "Method Not Allowed",
            text,
            "Allow: GET\r\n",
            "only GET\n",
        ),
        Some(Route::Metrics) => match scrape().await {
            Ok(body) => response(200, "OK", CONTENT_TYPE, "", &body),
            Err(e) => response(
                503,
                "Service Unavailable",
                text,
                "",
                &format!("forwarder unreachable: {e}\n"),
            ),
        },
    };
    stream.write_all(&resp).await?;
    stream.shutdown().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_is_routed_to_the_scrape() {
        assert_eq!(
            route(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
            Route::Metrics
        );
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"), Route::Metrics);
        assert_eq!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Route::MethodNotAllowed
        );
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET /metrics/x HTTP/1.1\r\n\r\n"), Route::NotFound);
    }

    #[test]
    fn malformed_request_lines_are_bad_requests() {
        for head in [
            &b"\r\n\r\n"[..],
            b"GET /metrics\r\n\r\n",
            b"GET /metrics HTTP/1.1 extra\r\n\r\n",
            b"GET /metrics SPDY/3\r\n\r\n",
            b"\xff\xfe /metrics HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(route(head), Route::BadRequest, "{head:?}");
        }
    }
}
