//! `slmcode mcp` over stdin/stdout: one connection, one session, every protocol revision.
//!
//! No single message may end the server. Between stdin and the MCP library sit two stages:
//! [`BoundedLines`] holds each message to [`MAX_STDIO_MESSAGE_BYTES`], and the JSON-RPC check
//! ([`jsonrpc::check`]) answers what is not a JSON-RPC message itself (a parse error, an
//! invalid request, a handshake without its params). What passes goes to the library; its
//! output and the check's answers share one writer, a line at a time, so they never
//! interleave. If the library gives up on the handshake (a stray response or notification
//! before `initialize`), it is started again on the same input, and the client can still
//! initialize; the server ends only when stdin does.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::ServiceExt;
use slmcode_aci::{Registry, Workspace};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc;

use super::bounded::BoundedLines;
use super::jsonrpc::{self, Verdict};
use super::server::SlmcodeServer;
use super::McpError as ServeError;

/// The largest JSON-RPC message read from stdin; a longer line is answered with an error
/// naming the limit, unread, while the connection goes on serving. Large enough for a
/// ws_write of a big file.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Messages waiting for the library; the reader waits when it is this far ahead.
const QUEUED_LINES: usize = 64;

/// Serves `registry` over stdin/stdout until the client closes stdin. Only JSON-RPC goes to
/// stdout; anything else the process says goes to stderr.
pub async fn serve_stdio(registry: Arc<Registry>, workspace: Workspace) -> Result<(), ServeError> {
    let server = SlmcodeServer::new(registry, workspace);
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(write_lines(out_rx, tokio::io::stdout()));
    let (line_tx, line_rx) = mpsc::channel::<Vec<u8>>(QUEUED_LINES);
    let stdin = BoundedLines::new(tokio::io::stdin(), MAX_STDIO_MESSAGE_BYTES);
    let reader = tokio::spawn(read_lines(stdin, line_tx, out_tx.clone()));
    let lines = Arc::new(Mutex::new(line_rx));
    let served = loop {
        // Lines reaching the library are already bounded; its own limit stays above ours.
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(
            LineSource::new(lines.clone()),
            LineSink::new(out_tx.clone()),
        )
        .with_max_line_length(MAX_STDIO_MESSAGE_BYTES + 4096);
        match server.clone().serve(transport).await {
            Ok(running) => {
                break running
                    .waiting()
                    .await
                    .map(|_| ())
                    .map_err(|e| ServeError::Handshake(e.to_string()));
            }
            // The input is over: a client that left before initializing is not an error.
            Err(_) if reader.is_finished() && queue_empty(&lines) => break Ok(()),
            Err(e) => {
                tracing::warn!("the handshake failed ({e}); waiting for the client's initialize");
            }
        }
    };
    drop(out_tx);
    let _ = reader.await;
    let _ = writer.await;
    served
}

fn queue_empty(lines: &Mutex<mpsc::Receiver<Vec<u8>>>) -> bool {
    lines
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_empty()
}

/// Reads stdin a line at a time: a JSON-RPC message goes on to the library, anything else is
/// answered here. Blank lines are skipped.
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    to_library: mpsc::Sender<Vec<u8>>,
    answers: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = tokio::io::BufReader::new(input);
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match jsonrpc::check(&line) {
            Verdict::Pass => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_library.send(line).await.is_err() {
                    return;
                }
            }
            Verdict::Answer(error) => {
                let mut text = error.to_string().into_bytes();
                text.push(b'\n');
                let _ = answers.send(text);
            }
        }
    }
}

/// Writes whole lines to stdout, in the order they were sent, until every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    mut out: W,
) {
    while let Some(line) = lines.recv().await {
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}

/// The library's input: the checked lines, one at a time. Shared, so that a handshake the
/// library gave up on can be started again on what follows.
struct LineSource {
    lines: Arc<Mutex<mpsc::Receiver<Vec<u8>>>>,
    pending: Vec<u8>,
    at: usize,
}

impl LineSource {
    fn new(lines: Arc<Mutex<mpsc::Receiver<Vec<u8>>>>) -> LineSource {
        LineSource {
            lines,
            pending: Vec::new(),
            at: 0,
        }
    }
}

impl AsyncRead for LineSource {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.at >= this.pending.len() {
            let next = this
                .lines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .poll_recv(cx);
            match next {
                Poll::Pending => return Poll::Pending,
                // The input is over.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(line)) => {
                    this.pending = line;
                    this.at = 0;
                }
            }
        }
        let n = buf.remaining().min(this.pending.len() - this.at);
        buf.put_slice(&this.pending[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// The library's output: bytes gathered into whole lines, each handed to the writer.
struct LineSink {
    out: mpsc::UnboundedSender<Vec<u8>>,
    partial: Vec<u8>,
}

impl LineSink {
    fn new(out: mpsc::UnboundedSender<Vec<u8>>) -> LineSink {
        LineSink {
            out,
            partial: Vec::new(),
        }
    }
}

impl AsyncWrite for LineSink {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.partial.extend_from_slice(data);
        while let Some(end) = memchr::memchr(b'\n', &this.partial) {
            let line: Vec<u8> = this.partial.drain(..=end).collect();
            if this.out.send(line).is_err() {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn what_is_no_message_is_answered_and_the_rest_goes_on() {
        let input: &[u8] = b"garbage\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":5}\n";
        let (line_tx, mut line_rx) = mpsc::channel(8);
        let (out_tx, mut out_rx) = mpsc::unbounded_channel();
        read_lines(input, line_tx, out_tx).await;
        let passed = line_rx.recv().await.unwrap();
        assert_eq!(
            passed,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        assert!(line_rx.recv().await.is_none());
        let first: serde_json::Value =
            serde_json::from_slice(&out_rx.recv().await.unwrap()).unwrap();
        assert_eq!(first["error"]["code"], jsonrpc::PARSE_ERROR);
        let second: serde_json::Value =
            serde_json::from_slice(&out_rx.recv().await.unwrap()).unwrap();
        assert_eq!(second["error"]["code"], jsonrpc::INVALID_REQUEST);
        assert_eq!(second["id"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn a_second_source_reads_on_where_the_first_stopped() {
        let (tx, rx) = mpsc::channel(4);
        let shared = Arc::new(Mutex::new(rx));
        tx.send(b"one\n".to_vec()).await.unwrap();
        tx.send(b"two\n".to_vec()).await.unwrap();
        drop(tx);
        let mut first = LineSource::new(shared.clone());
        let mut buf = [0u8; 64];
        let n = first.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"one\n");
        drop(first);
        let mut rest = Vec::new();
        LineSource::new(shared)
            .read_to_end(&mut rest)
            .await
            .unwrap();
        assert_eq!(rest, b"two\n");
    }

    #[tokio::test]
    async fn the_sink_hands_on_whole_lines_only() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut sink = LineSink::new(tx);
        sink.write_all(b"{\"a\":").await.unwrap();
        sink.write_all(b"1}\n{\"b\"").await.unwrap();
        assert_eq!(rx.recv().await.unwrap(), b"{\"a\":1}\n");
        assert!(rx.try_recv().is_err());
    }
}
