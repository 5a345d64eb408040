//! What the caller of a running tool can do while it runs: stop it, and hear how it goes.
//!
//! Tools are synchronous and may run long (ws_shell waits for its command, ws_grep walks a big
//! tree). A [`CallControl`] is handed to one call through
//! [`Registry::call_with`](crate::Registry::call_with); the caller
//! keeps a clone and may [`cancel`](CallControl::cancel) from another thread — an MCP client's
//! `notifications/cancelled`, a user's Ctrl-C. The tools that can take long look at it: ws_shell
//! kills the command's whole process tree at once, the walks of ws_grep and ws_glob stop, and
//! the call's result says it was cancelled. A long call also reports progress through it
//! (ws_shell: the time so far and the last line of output), which an MCP client can show.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How a long call is doing, for a caller that shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Time since the call started.
    pub elapsed: Duration,
    /// The last line of output so far, if the tool has output (ws_shell).
    pub last_line: Option<String>,
}

/// Receives [`Progress`] reports; called on the tool's thread, so it must not block.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// The stop switch and progress sink of one call. Cloning shares them.
#[derive(Clone, Default)]
pub struct CallControl {
    cancelled: Arc<AtomicBool>,
    progress: Option<ProgressSink>,
}

impl std::fmt::Debug for CallControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallControl")
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl CallControl {
    /// A control with no progress sink.
    pub fn new() -> CallControl {
        CallControl::default()
    }

    /// This control, with progress reported to `sink`.
    pub fn with_progress(mut self, sink: ProgressSink) -> CallControl {
        self.progress = Some(sink);
        self
    }

    /// Asks the call to stop as soon as it can. Safe from any thread, any number of times.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether the call was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Whether anyone listens to progress (a tool need not gather it otherwise).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Reports progress to the sink, if there is one.
    pub fn report(&self, progress: Progress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn cancel_is_shared_and_progress_reaches_the_sink() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = seen.clone();
        let control = CallControl::new().with_progress(Arc::new(move |p: Progress| {
            sink_seen.lock().unwrap().push(p);
        }));
        assert!(control.wants_progress() && !control.is_cancelled());
        control.report(Progress {
            elapsed: Duration::from_secs(1),
            last_line: Some("Compiling".into()),
        });
        assert_eq!(seen.lock().unwrap().len(), 1);
        control.clone().cancel();
        assert!(control.is_cancelled());
        assert!(!CallControl::new().wants_progress());
    }
}
