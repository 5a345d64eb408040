//! A bound on the size of one JSON-RPC message read from stdin that still answers the caller.
//!
//! rmcp drops an over-long line and goes on, but the client never hears about it and waits
//! for its answer. [`BoundedLines`] sits between stdin and rmcp: lines up to the limit pass
//! through unchanged; a longer line is never buffered whole — it is skimmed for its top-level
//! `"id"` and replaced by a small request of the method [`OVERSIZED_METHOD`], which the
//! server answers with an error naming the limit. A notification (no id) is dropped.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The method of the stand-in request for a message that was too large.
pub const OVERSIZED_METHOD: &str = "slmcode/oversized_request";

/// An id longer than this is not an id anyone would send; the message is dropped instead.
const MAX_ID_BYTES: usize = 256;

/// Stdin with every line held to `limit` bytes.
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    /// The line being read, released once its newline arrives.
    line: Vec<u8>,
    /// Bytes ready for the reader.
    ready: Vec<u8>,
    ready_at: usize,
    /// Set while skipping the rest of an over-long line.
    skipping: Option<Skipped>,
    chunk: Box<[u8]>,
    eof: bool,
}

struct Skipped {
    scanner: IdScanner,
    bytes: u64,
}

impl<R: AsyncRead + Unpin> BoundedLines<R> {
    pub fn new(inner: R, limit: usize) -> BoundedLines<R> {
        BoundedLines {
            inner,
            limit,
            line: Vec::new(),
            ready: Vec::new(),
            ready_at: 0,
            skipping: None,
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
            eof: false,
        }
    }

    /// Sorts one chunk of input into released lines, the current line, or skipped bytes.
    fn take(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let newline = memchr::memchr(b'\n', data);
            let end = newline.map_or(data.len(), |i| i + 1);
            let (part, rest) = data.split_at(end);
            data = rest;
            if let Some(skipped) = &mut self.skipping {
                skipped.scanner.feed(part);
                skipped.bytes += part.len() as u64;
                if newline.is_some() {
                    if let Some(skipped) = self.skipping.take() {
                        self.stand_in(skipped);
                    }
                }
                continue;
            }
            if self.line.len() + part.len() > self.limit.saturating_add(1) {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.line);
                scanner.feed(part);
                let skipped = Skipped {
                    scanner,
                    bytes: (self.line.len() + part.len()) as u64,
                };
                self.line = Vec::new();
                if newline.is_some() {
                    self.stand_in(skipped);
                } else {
                    self.skipping = Some(skipped);
                }
                continue;
            }
            self.line.extend_from_slice(part);
            if newline.is_some() {
                self.ready.append(&mut self.line);
            }
        }
    }

    /// Queues the small request that stands in for a skipped message, if it had an id.
    fn stand_in(&mut self, skipped: Skipped) {
        if let Some(id) = skipped.scanner.id() {
            let line = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": OVERSIZED_METHOD,
                "params": {"bytes": skipped.bytes, "limit": self.limit},
            });
            self.ready.extend_from_slice(line.to_string().as_bytes());
            self.ready.push(b'\n');
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + n]);
                this.ready_at += n;
                if this.ready_at == this.ready.len() {
                    this.ready.clear();
                    this.ready_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let filled = chunk.filled().len();
                    if filled == 0 {
                        // End of input: a last line without a newline is passed on as it is.
                        this.eof = true;
                        this.skipping = None;
                        let mut line = std::mem::take(&mut this.line);
                        this.ready.append(&mut line);
                    } else {
                        let data = this.chunk[..filled].to_vec();
                        this.take(&data);
                    }
                }
            }
        }
    }
}

/// Finds the value of the top-level `"id"` key in a JSON object streamed through it, without
/// keeping more than the id itself.
#[derive(Default)]
struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    in_key: bool,
    key: Vec<u8>,
    /// The last key read at depth 1 was "id"; its value starts at the next token.
    id_next: bool,
    value: Option<Vec<u8>>,
    value_is_string: bool,
    done: Option<Vec<u8>>,
    gave_up: bool,
}

impl IdScanner {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.gave_up {
                return;
            }
            self.step(b);
        }
    }

    fn push_value(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            if v.len() >= MAX_ID_BYTES {
                self.gave_up = true;
            } else {
                v.push(b);
            }
        }
    }

    fn finish_value(&mut self) {
        if let Some(v) = self.value.take() {
            if self.done.is_none() {
                self.done = Some(v);
            }
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            let closes = if self.escaped {
                self.escaped = false;
                false
            } else {
                self.escaped = b == b'\\';
                b == b'"'
            };
            if self.in_key {
                if closes {
                    self.in_string = false;
                    self.in_key = false;
                    self.expect_key = false;
                    self.id_next = self.key == b"id";
                } else if self.key.len() < 3 {
                    // Only "id" matters: three bytes tell it from every longer key.
                    self.key.push(b);
                }
                return;
            }
            if self.value_is_string {
                self.push_value(b);
            }
            if closes {
                self.in_string = false;
                if self.value_is_string {
                    self.value_is_string = false;
                    self.finish_value();
                }
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                if !self.value_is_string {
                    self.finish_value();
                }
            }
            b'{' | b'[' => {
                self.finish_value();
                self.id_next = false;
                self.depth += 1;
                if self.depth == 1 && b == b'{' {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => {
                self.finish_value();
                self.depth = self.depth.saturating_sub(1);
            }
            b',' => {
                self.finish_value();
                if self.depth == 1 {
                    self.expect_key = true;
                }
            }
            b':' => {}
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.in_key = true;
                    self.key.clear();
                } else if self.depth == 1 && self.id_next {
                    self.id_next = false;
                    self.value = Some(vec![b'"']);
                    self.value_is_string = true;
                }
            }
            _ => {
                if self.depth == 1 && self.id_next {
                    self.id_next = false;
                    self.value = Some(Vec::new());
                }
                self.push_value(b);
            }
        }
    }

    /// The id, if one was found and it is a JSON number or string.
    fn id(mut self) -> Option<serde_json::Value> {
        if self.gave_up {
            return None;
        }
        if !self.value_is_string {
            self.finish_value();
        }
        let raw = self.done?;
        match serde_json::from_slice::<serde_json::Value>(&raw).ok()? {
            v @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn scan(text: &str) -> Option<serde_json::Value> {
        let mut s = IdScanner::default();
        // Fed byte by byte and whole: the answer must not depend on chunking.
        for b in text.as_bytes() {
            s.feed(std::slice::from_ref(b));
        }
        let mut whole = IdScanner::default();
        whole.feed(text.as_bytes());
        let a = s.id();
        assert_eq!(a, whole.id());
        a
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_is() {
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(7.into())
        );
        assert_eq!(
            scan(r#"{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":"abc"}"#),
            Some("abc".into())
        );
        assert_eq!(scan(r#"{ "id" : -3 , "x": 1}"#), Some((-3).into()));
        assert_eq!(
            scan(r#"{"params":{"s":"\"id\":9"},"id":4}"#),
            Some(4.into())
        );
        assert_eq!(scan(r#"{"i\"d":1,"idx":2}"#), None);
        assert_eq!(scan(r#"{"method":"notifications/x"}"#), None);
        assert_eq!(scan(r#"{"id":{"a":1}}"#), None);
        assert_eq!(scan(r#"{"id":"a\"b"}"#), Some("a\"b".into()));
        assert_eq!(scan(r#"[{"id":1}]"#), None);
        assert_eq!(scan("not json at all"), None);
    }

    async fn filtered(input: Vec<u8>, limit: usize) -> String {
        let mut out = String::new();
        BoundedLines::new(&input[..], limit)
            .read_to_string(&mut out)
            .await
            .unwrap();
        out
    }

    #[tokio::test]
    async fn short_lines_pass_long_ones_become_a_stand_in() {
        let short = "{\"id\":1}\n";
        assert_eq!(filtered(short.into(), 64).await, short);
        let mut input = b"{\"a\":1}\n{\"method\":\"m\",\"params\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1000));
        input.extend(b"\",\"id\":42}\n{\"b\":2}\nlast");
        let out = filtered(input, 64).await;
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], "{\"a\":1}");
        let stand_in: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(stand_in["id"], 42);
        assert_eq!(stand_in["method"], OVERSIZED_METHOD);
        assert_eq!(stand_in["params"]["limit"], 64);
        assert_eq!(lines[2], "{\"b\":2}");
        assert_eq!(lines[3], "last");
        // A notification that is too long is dropped without a word.
        let mut input = b"{\"method\":\"n\",\"params\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'y', 1000));
        input.extend(b"\"}\n{\"c\":3}\n");
        assert_eq!(filtered(input, 64).await, "{\"c\":3}\n");
    }
}
