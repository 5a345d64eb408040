//! `notifications/progress` for a long call whose client asked for it (a `progressToken` in
//! the request's `_meta`): ws_shell's reports — the time so far and the last line of output —
//! go to the client as they come, so it can show that a build is alive and what it is doing.

use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use slmcode_aci::control::{CallControl, Progress};
use tokio::task::JoinHandle;

/// A control whose progress goes to the client as `notifications/progress` under `token`, and
/// the task that sends them; it ends once every clone of the control is dropped.
pub(super) fn forward(
    token: ProgressToken,
    peer: Peer<RoleServer>,
) -> (CallControl, Option<JoinHandle<()>>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let control = CallControl::new().with_progress(Arc::new(move |p| {
        // The receiver is gone only when the call's response was sent; nothing to tell then.
        let _ = tx.send(p);
    }));
    let task = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            let param = ProgressNotificationParam::new(token.clone(), p.elapsed.as_secs_f64())
                .with_message(message(&p));
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    (control, Some(task))
}

/// What a client shows: `running for 12 s: Compiling serde v1.0`.
fn message(p: &Progress) -> String {
    let secs = p.elapsed.as_secs();
    match &p.last_line {
        Some(line) => format!("running for {secs} s: {line}"),
        None => format!("running for {secs} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_message_says_the_time_and_the_last_line() {
        let p = Progress {
            elapsed: Duration::from_millis(12_400),
            last_line: Some("Compiling serde v1.0".into()),
        };
        assert_eq!(message(&p), "running for 12 s: Compiling serde v1.0");
        let p = Progress {
            elapsed: Duration::from_secs(3),
            last_line: None,
        };
        assert_eq!(message(&p), "running for 3 s");
    }
}
