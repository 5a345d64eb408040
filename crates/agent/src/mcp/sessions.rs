//! A bound on the MCP sessions one `slmcode mcp --http` holds.
//!
//! Every session owns a workspace (an open directory, what it read, its checklist), so an
//! unbounded table lets any client that can reach the port exhaust file descriptors and memory
//! with nothing but `initialize` requests. [`CappedSessions`] wraps rmcp's in-memory manager:
//! when the table is full, the session idle the longest is closed to make room (its client
//! gets 404 on its next request, which MCP clients answer by initializing again); when every
//! session is in the middle of a call, the new one is refused with [`Full`] instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use futures_util::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// The sessions one HTTP server keeps unless `--max-sessions` says otherwise: more than a
/// person runs agents at once, few enough that their descriptors and memory stay small.
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// The table is full and every session in it has a call running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "this server already holds its maximum of {max} MCP sessions and every one has a call \
     running; retry when one finishes, close a session you no longer use (HTTP DELETE with \
     its Mcp-Session-Id), or restart the server with a larger --max-sessions"
)]
pub struct Full {
    pub max: usize,
}

/// What can go wrong in the capped manager: the cap, or rmcp's own errors.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(transparent)]
    Full(#[from] Full),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// When a session was last used and how many of its calls are under way.
#[derive(Debug, Clone, Copy)]
struct Activity {
    last: Instant,
    busy: usize,
}

/// rmcp's [`LocalSessionManager`] with a maximum size and least-recently-used eviction.
pub struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    table: Arc<Mutex<HashMap<SessionId, Activity>>>,
}

impl CappedSessions {
    /// `max` is at least one: a server that can hold no session serves nothing.
    pub fn new(inner: LocalSessionManager, max: usize) -> CappedSessions {
        CappedSessions {
            inner,
            max: max.max(1),
            table: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Activity>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes room for one more session: nothing to do below the cap, otherwise the session
    /// idle the longest is closed. Refused when every session has a call running.
    ///
    /// The HTTP layer calls this before an `initialize` reaches rmcp, so that a full server
    /// answers 503 with [`Full`]'s text; [`SessionManager::create_session`] calls it again,
    /// so that concurrent initializes cannot overshoot the cap.
    pub async fn make_room(&self) -> Result<(), Full> {
        loop {
            let victim = {
                let table = self.lock();
                if table.len() < self.max {
                    return Ok(());
                }
                table
                    .iter()
                    .filter(|(_, a)| a.busy == 0)
                    .min_by_key(|(_, a)| a.last)
                    .map(|(id, _)| id.clone())
            };
            let Some(victim) = victim else {
                return Err(Full { max: self.max });
            };
            tracing::info!("closing idle MCP session {victim} to make room for a new one");
            self.lock().remove(&victim);
            // Closing a session whose worker already ended is not an error worth stopping for:
            // it is out of the table either way.
            let _ = self.inner.close_session(&victim).await;
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(a) = self.lock().get_mut(id) {
            a.last = Instant::now();
        }
    }

    /// Marks a call under way until the returned guard is dropped (its response stream ends).
    fn busy(&self, id: &SessionId) -> Busy {
        if let Some(a) = self.lock().get_mut(id) {
            a.busy += 1;
            a.last = Instant::now();
        }
        Busy {
            table: self.table.clone(),
            id: id.clone(),
        }
    }
}

/// A call in flight; when it ends the session counts as used just now.
struct Busy {
    table: Arc<Mutex<HashMap<SessionId, Activity>>>,
    id: SessionId,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(a) = table.get_mut(&self.id) {
            a.busy = a.busy.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await?;
        let (id, transport) = self.inner.create_session().await?;
        // Busy until its `initialize` is answered, so that a burst of initializes cannot
        // evict each other before their clients ever used them.
        self.lock().insert(
            id.clone(),
            Activity {
                last: Instant::now(),
                busy: 1,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let result = self.inner.initialize_session(id, message).await;
        if let Some(a) = self.lock().get_mut(id) {
            a.busy = a.busy.saturating_sub(1);
            a.last = Instant::now();
        }
        Ok(result?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(stream.map(move |m| {
            let _in_flight = &busy;
            m
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A client listening for server messages is not running a call: it stays evictable.
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
