//! What one reply may cost: how long (a first-token deadline, then a whole-reply deadline,
//! `reply_timeout`) and how much (its text and calls, its bytes on the wire, a page about the
//! server). A server that never stops sending, or numbers a call a billion, is cut here.

use std::time::Duration;

use serde_json::Value;

use super::{Reply, Transient};

/// The most bytes of text, reasoning and calls one reply may bring: far past any real reply
/// (`max_tokens` of 1,000,000 at 16 bytes a token), and what a server that never stops
/// sending can cost in memory. A reply that reaches it is cut as if it reached `max_tokens`.
pub const MAX_REPLY_BYTES: usize = 16 << 20;

/// The most bytes the body of one reply may bring, its framing included (an SSE event of
/// ~200 bytes carries a few characters): past it the reply is cut, so that a line that never
/// ends cannot grow the stream reader's buffer without bound.
pub(crate) const MAX_WIRE_BYTES: usize = 256 << 20;

/// The most native calls one reply keeps: the loop runs one a turn, and a server may number
/// a call anything (`"index": 1000000000`), which must never size anything.
pub const MAX_REPLY_CALLS: usize = 64;

/// The deadlines of one reply: its first sign by `first` (a server reading a long prompt is
/// slow to start), then all of it within `reply` of that sign. Reports of the prompt being
/// read do not start the reply, but cannot hold it off past `first`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Clock {
    pub(super) first: tokio::time::Instant,
    reply: Duration,
    /// When the reply must be finished, once it has begun.
    until: Option<tokio::time::Instant>,
}

impl Clock {
    pub(super) fn new(first_token: Duration, reply: Duration) -> Clock {
        Clock {
            first: tokio::time::Instant::now() + first_token,
            reply,
            until: None,
        }
    }

    /// The reply has begun (again, for a report of the prompt's progress): from now, or from
    /// the first-token deadline if that came first.
    pub(super) fn begin(&mut self) {
        self.until = Some(tokio::time::Instant::now().min(self.first) + self.reply);
    }

    /// What the next wait may last until.
    pub(super) fn deadline(&self) -> tokio::time::Instant {
        self.until.unwrap_or(self.first)
    }

    /// The next piece of a reply's stream, by the deadline in force; the first piece begins
    /// the reply.
    pub(super) async fn next_piece<S>(
        &mut self,
        stream: &mut S,
    ) -> Result<Option<S::Item>, Transient>
    where
        S: futures_util::Stream + Unpin,
    {
        use futures_util::StreamExt;
        let piece = tokio::time::timeout_at(self.deadline(), stream.next())
            .await
            .map_err(|_| match self.until {
                None => Transient::NoFirstToken,
                Some(_) => Transient::ReplyDeadline,
            })?;
        if self.until.is_none() {
            self.begin();
        }
        Ok(piece)
    }
}

/// A reply's body (`response.bytes_stream()`), ending once [`MAX_WIRE_BYTES`] have come;
/// the flag says that the body was cut there.
pub(super) fn bounded_body<S, D, E>(
    body: S,
) -> (
    impl futures_util::Stream<Item = Result<D, E>>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
)
where
    S: futures_util::Stream<Item = Result<D, E>>,
    D: AsRef<[u8]>,
{
    use futures_util::StreamExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let cut = std::sync::Arc::new(AtomicBool::new(false));
    let flag = cut.clone();
    let mut seen = 0usize;
    let body = body.take_while(move |piece| {
        if let Ok(bytes) = piece {
            seen = seen.saturating_add(bytes.as_ref().len());
        }
        let within = seen <= MAX_WIRE_BYTES;
        if !within {
            flag.store(true, Ordering::Relaxed);
        }
        std::future::ready(within)
    });
    (body, cut)
}

/// The body of `response`, read to its end but never past `limit` bytes: a server's page is
/// read whole only when it is the size of a page.
pub(crate) async fn body_bytes(
    response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, String> {
    use futures_util::StreamExt;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(piece) = stream.next().await {
        let piece = piece.map_err(|e| format!("the reply broke: {e}"))?;
        if body.len() + piece.len() > limit {
            return Err(format!("the reply is larger than {} MiB", limit >> 20));
        }
        body.extend_from_slice(&piece);
    }
    Ok(body)
}

/// The most bytes of an error body or a page about the server that are read.
pub(crate) const MAX_PAGE_BYTES: usize = 16 << 20;

/// A page about the server (its version, its models, its context), as JSON; `None` when it
/// is not JSON or larger than [`MAX_PAGE_BYTES`].
pub(crate) async fn page_json(response: reqwest::Response) -> Option<Value> {
    let body = body_bytes(response, MAX_PAGE_BYTES).await.ok()?;
    serde_json::from_slice(&body).ok()
}

/// The bytes a reply holds so far: text, reasoning and calls.
pub(super) fn reply_bytes(reply: &Reply) -> usize {
    reply.content.len()
        + reply.reasoning.len()
        + reply
            .tool_calls
            .iter()
            .map(|c| c.id.len() + c.function.name.len() + c.function.arguments.len())
            .sum::<usize>()
}
