//! What every HTTP server slmcode runs on this machine shares (`slmcode mcp --http`,
//! `slmcode view`): the browser origins and hosts it answers (this machine's only, so that a
//! web page elsewhere — or a DNS name rebound to 127.0.0.1 — cannot reach it), the connection
//! loop with its cap and header deadline, and the comparison of secrets.

use std::sync::Arc;
use std::time::Duration;

/// Browser origins that may call a server: pages served from this machine only, any port. A
/// request without an Origin header (any non-browser client) is not affected.
pub const LOCAL_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// The names a request's `Host` may carry (with any port): this machine's.
const LOCAL_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// Open connections served at once. Past this the server stops accepting until one closes, so
/// a flood of connections waits in the kernel's queue instead of using up descriptors.
pub const MAX_HTTP_CONNECTIONS: usize = 256;

/// How long connections get to finish after shutdown is asked for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Listens on `bind`; the address it got (the port, when 0 was asked for).
pub async fn listen(
    bind: std::net::SocketAddr,
) -> std::io::Result<(tokio::net::TcpListener, std::net::SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(bind).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Whether a `Host` header names this machine (`localhost`, `127.0.0.1` or `[::1]`, any port). Anything else is a
/// name that resolved here without being this machine's: a DNS rebinding attempt.
pub fn host_allowed(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let name = match host.rsplit_once(':') {
        // `[::1]:8080` and `127.0.0.1:8080`; a bare `[::1]` has its colons inside brackets.
        Some((name, port)) if !port.contains(']') && port.parse::<u16>().is_ok() => name,
        Some(_) if !host.starts_with('[') => return false,
        _ => host.as_str(),
    };
    LOCAL_HOSTS.contains(&name)
}

/// Whether an `Origin` header is one of [`LOCAL_ORIGINS`].
pub fn origin_allowed(origin: &str) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    LOCAL_ORIGINS.iter().any(|allowed| {
        let Some(base) = allowed.strip_suffix(":*") else {
            return origin == *allowed;
        };
        match origin.strip_prefix(base) {
            Some("") => true,
            Some(rest) => rest
                .strip_prefix(':')
                .is_some_and(|port| port.parse::<u16>().is_ok()),
            None => false,
        }
    })
}

/// Compares two secrets in time that depends only on their lengths.
pub fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// Accepts and serves HTTP/1.1 connections until `shutdown` resolves: at most
/// [`MAX_HTTP_CONNECTIONS`] at once, each dropped when its headers take longer than
/// `read_timeout`. (axum's own `serve` sets no header timeout.)
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    read_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_HTTP_CONNECTIONS));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slot else { break };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was accepted: the
                    // listener itself is fine, so wait a moment and go on.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let stop = stop.child_token();
        tokio::spawn(async move {
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                }
            }
        });
    }
    stop.cancel();
    // Every connection holds a slot until it is done: getting them all back means all closed.
    let all = u32::try_from(MAX_HTTP_CONNECTIONS).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, slots.acquire_many(all)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_only() {
        for host in [
            "localhost",
            "127.0.0.1:8080",
            "[::1]:3",
            "[::1]",
            "LOCALHOST:1",
        ] {
            assert!(host_allowed(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:80",
            "127.0.0.2:80",
            "localhost.evil:1",
            "",
        ] {
            assert!(!host_allowed(host), "{host}");
        }
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:9",
        ] {
            assert!(origin_allowed(origin), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "http://127.0.0.1.evil.example",
            "http://localhost:80@evil",
            "null",
            "file://",
        ] {
            assert!(!origin_allowed(origin), "{origin}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
