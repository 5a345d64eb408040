//! A running run, followed: its trajectory read as it grows ([`LogFollower`]: each line once,
//! checked), its new timeline items rendered as on the page and sent as server-sent events —
//! `items` (HTML to append), `summary` (the header, replaced), `budget` (the chart changed),
//! and `end` once the run's process is gone. The page needs nothing but `EventSource`.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use serde_json::Value;
use slmcode_aci::state::LogFollower;

use super::model::{Item, Reader};
use super::pages::{self, DiffMode};
use super::{writer_alive, Shared, FOLLOW_EVERY};
use crate::trajectory;

#[derive(serde::Deserialize)]
pub(super) struct LiveQuery {
    /// Records the page already shows (a value that is no number: none).
    after: Option<String>,
    diff: Option<String>,
}

/// What one follower keeps between looks at the file.
struct Following {
    state: Shared,
    id: String,
    follower: LogFollower,
    reader: Reader,
    /// Records already on the page (or sent).
    shown: usize,
    diff: DiffMode,
    first: bool,
    done: bool,
}

/// `GET /runs/{id}/live?after=N`: the run's items from its record N on, as they are written.
/// A reconnecting `EventSource` sends `Last-Event-ID` (the records it has), which wins.
pub(super) async fn follow(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(q): Query<LiveQuery>,
    headers: HeaderMap,
) -> Response {
    if slmcode_aci::state::check_id(&id, "run", "the runs list").is_err() {
        return (StatusCode::NOT_FOUND, "there is no such run\n").into_response();
    }
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let following = Following {
        follower: LogFollower::new(trajectory::log_path(&id)),
        state,
        id,
        reader: Reader::default(),
        shown: resumed
            .or_else(|| q.after.as_deref().and_then(|a| a.parse().ok()))
            .unwrap_or(0),
        diff: DiffMode::from_query(q.diff.as_deref()),
        first: true,
        done: false,
    };
    let events = stream::unfold(following, |mut f| async move {
        if f.done {
            return None;
        }
        if !f.first {
            tokio::select! {
                () = tokio::time::sleep(FOLLOW_EVERY) => {}
                // The server is stopping: the stream ends, and with it the connection.
                () = f.state.stopping.cancelled() => return None,
            }
        }
        f.first = false;
        let out = look(&mut f).await;
        Some((stream::iter(out), f))
    })
    .flatten()
    .map(Ok::<Event, std::convert::Infallible>);
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// One look at the trajectory: the events for what is new.
async fn look(f: &mut Following) -> Vec<Event> {
    let alive = writer_alive(&f.id);
    let mut follower = std::mem::replace(
        &mut f.follower,
        LogFollower::new(trajectory::log_path(&f.id)),
    );
    let state = Arc::clone(&f.state);
    let read = tokio::task::spawn_blocking(move || {
        let lines = follower.read_new(&state.jail);
        (follower, lines)
    })
    .await;
    let lines = match read {
        Ok((follower, lines)) => {
            f.follower = follower;
            lines
        }
        Err(_) => Err(slmcode_aci::ToolError::refused(
            slmcode_aci::RefusalClass::Internal,
            "the trajectory could not be read".into(),
        )),
    };
    let lines = match lines {
        Ok(lines) => lines,
        Err(e) => {
            f.done = true;
            return vec![Event::default().event("end").data(e.to_string())];
        }
    };
    let mut html = String::new();
    let mut replies = false;
    for line in &lines {
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let items = f.reader.add(&record);
        if f.reader.records() <= f.shown {
            continue;
        }
        for (_, item) in &items {
            replies |= matches!(item, Item::Reply { .. });
            html.push_str(&pages::render_item(item, f.diff).into_string());
        }
    }
    let mut out = Vec::new();
    let new = f.reader.records() > f.shown;
    if new {
        f.shown = f.reader.records();
        if !html.is_empty() {
            out.push(
                Event::default()
                    .event("items")
                    .id(f.shown.to_string())
                    .data(html),
            );
        }
        if replies {
            out.push(Event::default().event("budget").data("changed"));
        }
    }
    if new || !alive {
        let status = f.reader.summary.status(alive);
        let header = pages::summary(&f.id, &f.reader.summary, status).into_string();
        out.push(Event::default().event("summary").data(header));
    }
    if !alive || f.follower.untrusted_from().is_some() {
        f.done = true;
        out.push(
            Event::default()
                .event("end")
                .data("the run's process is gone"),
        );
    }
    out
}
