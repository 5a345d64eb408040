//! A runtime of its own for the tools that await network I/O (mcp_call, find_models) from the
//! registry's synchronous call. A call is spawned on this runtime and waited for on the calling
//! thread, which works from a plain thread and from a tokio blocking thread alike (where
//! `block_on` would panic).

use std::future::Future;

/// One worker thread, timers and I/O enabled.
pub struct BlockingRuntime {
    runtime: tokio::runtime::Runtime,
}

impl BlockingRuntime {
    /// Starts the runtime; its thread is named `name`.
    pub fn new(name: &str) -> std::io::Result<BlockingRuntime> {
        Ok(BlockingRuntime {
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name(name)
                .enable_all()
                .build()?,
        })
    }

    /// Runs `future` here and waits for its output. `None` only if the task was lost (it
    /// panicked).
    pub fn wait<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_from_a_plain_thread_and_from_inside_a_runtime() {
        let rt = std::sync::Arc::new(BlockingRuntime::new("test").unwrap());
        assert_eq!(rt.wait(async { 1 + 1 }), Some(2));
        let outer = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let inner = rt.clone();
        let got = outer.block_on(async move {
            tokio::task::spawn_blocking(move || inner.wait(async { "ok" }))
                .await
                .unwrap()
        });
        assert_eq!(got, Some("ok"));
    }
}
