//! `slmcode view`: a local web page over the project's runs (`.slmcode/runs/`) and bench
//! reports (`bench/results/`). Runs are read from their trajectories — the records the loop
//! writes as it goes ([`crate::trajectory`]), checked line by line as every state read is —
//! never from printed text; a running run is followed as its trajectory grows and its new
//! turns pushed to the page as server-sent events.
//!
//! Exposure: loopback only; a random token in the address the command prints (then a cookie
//! for this port); the `Host` and `Origin` rules of every slmcode HTTP server
//! ([`crate::local_http`]); a strict Content-Security-Policy (scripts and styles from this
//! server only, nothing fetched elsewhere, no inline script). Read-only: no route changes
//! anything.

mod chart;
mod diff;
mod live;
mod model;
mod pages;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use slmcode_aci::path::Jail;
use slmcode_aci::state::LogFollower;
use slmcode_aci::RefusalClass;

use crate::local_http::{host_allowed, listen, origin_allowed, same_secret, serve_connections};
use crate::trajectory;
pub use model::{badges, Badge, Budget, Item, Reader, Status, Summary, Tone};
use pages::DiffMode;

/// Turns per page of a run's timeline: a run of thousands of turns opens as fast as a short
/// one.
pub const TURNS_PER_PAGE: usize = 50;

/// The policy every page of the view is served with: its own scripts, styles and images
/// only; no inline script; no frames; forms only to itself.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The bench report page carries its styles inline (it is also a file on its own); it runs
/// no script at all.
const BENCH_CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How long a client may take to send a request's headers.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a followed trajectory is looked at for new lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);

/// What `slmcode view` serves, and where.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// A loopback address (port 0: any free port).
    pub bind: SocketAddr,
    /// The secret the printed address carries; every request must show it (in the query
    /// once, then in the cookie the server sets).
    pub token: String,
    /// The bench results directory (`bench/results`, or `bench --results`).
    pub results: PathBuf,
}

/// A new token for the view's address: 24 random bytes (from the thread's CSPRNG, seeded by
/// the OS) as hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 24];
    rand::fill(&mut bytes[..]);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why the view could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("{0}")]
    Exposure(String),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
}

struct ViewState {
    jail: Jail,
    results: PathBuf,
    token: String,
    cookie: String,
    /// Each run as read so far ([`Followed`]): a request reads only what its log gained.
    runs: std::sync::Mutex<std::collections::HashMap<String, Followed>>,
    /// Set when the server is asked to stop: live streams end at once, so no open page
    /// holds the shutdown up.
    stopping: tokio_util::sync::CancellationToken,
}

type Shared = Arc<ViewState>;

/// Serves the view of the project in `jail` until `shutdown` resolves; `ready` hears the
/// address it listens on (the port, when 0 was asked for).
pub async fn serve(
    jail: Jail,
    options: ViewOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ViewError> {
    if !options.bind.ip().is_loopback() {
        return Err(ViewError::Exposure(format!(
            "{} is not a loopback address; the view shows your runs (their prompts, your code) \
             and is served on this machine only: bind 127.0.0.1 or [::1]",
            options.bind
        )));
    }
    if options.token.chars().count() < crate::mcp::server::MIN_TOKEN_CHARS {
        return Err(ViewError::Exposure(format!(
            "the view's token must be at least {} characters",
            crate::mcp::server::MIN_TOKEN_CHARS
        )));
    }
    let (listener, local) = listen(options.bind)
        .await
        .map_err(|e| ViewError::Bind(options.bind, e))?;
    let stopping = tokio_util::sync::CancellationToken::new();
    let state = Arc::new(ViewState {
        jail,
        results: options.results,
        token: options.token,
        cookie: format!("slmcode-view-{}", local.port()),
        runs: Default::default(),
        stopping: stopping.clone(),
    });
    let router = router(state);
    ready(local);
    let shutdown = async move {
        shutdown.await;
        stopping.cancel();
    };
    serve_connections(listener, router, READ_TIMEOUT, shutdown).await;
    Ok(())
}

fn router(state: Shared) -> axum::Router {
    axum::Router::new()
        .route("/", get(runs_list))
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/budget.svg", get(budget_chart))
        .route("/runs/{id}/live", get(live::follow))
        .route("/bench", get(bench_list))
        .route("/bench/report", get(bench_report))
        .route("/static/view.css", get(stylesheet))
        .route("/static/view.js", get(script))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Before any route: the host and origin are this machine's, the token is shown; after: the
/// headers every response carries.
async fn guard(
    State(state): State<Shared>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !host_allowed(host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "this server answers requests for localhost, 127.0.0.1 and [::1] only (the Host header named another: a DNS rebinding attempt?)",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !origin.to_str().is_ok_and(origin_allowed) {
            return refuse(
                StatusCode::FORBIDDEN,
                "requests from pages of other sites are refused (Origin is not this machine)",
            );
        }
    }
    let from_query = Query::<Vec<(String, String)>>::try_from_uri(req.uri())
        .ok()
        .and_then(|q| q.0.into_iter().find(|(k, _)| k == "token").map(|(_, v)| v))
        .filter(|t| same_secret(t.as_bytes(), state.token.as_bytes()));
    let from_cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .any(|(k, v)| k == state.cookie && same_secret(v.as_bytes(), state.token.as_bytes()));
    if from_query.is_none() && !from_cookie {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "this page needs the view's token: open the address `slmcode view` printed (it ends in ?token=…)",
        );
    }
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    if from_query.is_some() {
        let cookie = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            state.cookie, state.token
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            h.insert(header::SET_COOKIE, v);
        }
    }
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A refusal in words, as plain text.
fn refuse(status: StatusCode, text: &str) -> Response {
    let mut r = (status, format!("{text}\n")).into_response();
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    r
}

/// A page saying what is missing, with its status.
fn page_error(status: StatusCode, title: &str, text: &str) -> Response {
    (status, Html(pages::message(title, text).into_string())).into_response()
}

async fn not_found() -> Response {
    page_error(
        StatusCode::NOT_FOUND,
        "Not found",
        "There is no such page here.",
    )
}

/// Runs the blocking reads of a request off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

/// A run as read so far: where its log was left, its summary, and — once its page was asked
/// for — its timeline. Logs only grow, so each request reads only what was appended.
struct Followed {
    follower: LogFollower,
    reader: Reader,
    items: Option<Vec<(usize, Item)>>,
}

impl Followed {
    fn new(id: &str, timeline: bool) -> Followed {
        Followed {
            follower: LogFollower::new(trajectory::log_path(id)),
            reader: Reader::default(),
            items: timeline.then(Vec::new),
        }
    }

    fn pages(&self) -> usize {
        self.reader.summary.turns.div_ceil(TURNS_PER_PAGE).max(1)
    }

    fn items(&self) -> &[(usize, Item)] {
        self.items.as_deref().unwrap_or_default()
    }
}

/// Whether run `id`'s process is still alive.
fn writer_alive(id: &str) -> bool {
    trajectory::writer_pid(id).is_some_and(slmcode_aci::platform::host::process_alive)
}

/// Brings run `id` up to date — only the lines slmcode wrote for this user, and with its
/// timeline when `timeline` is asked (a run first seen in the list is read once more from
/// its start then) — and hands it to `f`.
fn with_run<T>(
    state: &ViewState,
    id: &str,
    timeline: bool,
    f: impl FnOnce(&Followed) -> T,
) -> Result<T, (StatusCode, String)> {
    slmcode_aci::state::check_id(id, "run", "the runs list")
        .map_err(|e| (StatusCode::NOT_FOUND, e.to_string()))?;
    let mut runs = state
        .runs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let run = runs
        .entry(id.to_string())
        .or_insert_with(|| Followed::new(id, timeline));
    if timeline && run.items.is_none() {
        *run = Followed::new(id, true);
    }
    let lines = match run.follower.read_new(&state.jail) {
        Ok(lines) => lines,
        Err(e) => {
            // Nothing is kept of a run that cannot be read (a missing one included), so
            // asking for made-up ids cannot grow the table.
            runs.remove(id);
            return Err(match e.class() {
                RefusalClass::NotFound => (StatusCode::NOT_FOUND, format!("there is no run {id}")),
                RefusalClass::Untrusted => (StatusCode::FORBIDDEN, e.to_string()),
                _ => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
            });
        }
    };
    for line in &lines {
        if let Ok(record) = serde_json::from_slice::<Value>(line) {
            let items = run.reader.add(&record);
            if let Some(timeline) = &mut run.items {
                timeline.extend(items);
            }
        }
    }
    if run.follower.untrusted_from() == Some(1) {
        return Err((
            StatusCode::FORBIDDEN,
            format!("run {id}'s log was not written by slmcode for this user, so it is not shown"),
        ));
    }
    Ok(f(run))
}

#[derive(serde::Deserialize)]
struct ListQuery {
    status: Option<String>,
    model: Option<String>,
}

async fn runs_list(State(state): State<Shared>, Query(q): Query<ListQuery>) -> Response {
    let shown = blocking(move || {
        let mut problems = Vec::new();
        let ids = trajectory::ids(&state.jail).unwrap_or_else(|e| {
            if e.class() != RefusalClass::NotFound {
                problems.push(format!("the runs could not be listed: {e}"));
            }
            Vec::new()
        });
        let mut runs = Vec::new();
        for id in ids.into_iter().rev() {
            match with_run(&state, &id, false, |run| run.reader.summary.clone()) {
                Ok(summary) => {
                    let status = summary.status(writer_alive(&id));
                    runs.push((id, summary, status));
                }
                Err((_, why)) => problems.push(why),
            }
        }
        let mut models: Vec<String> = runs
            .iter()
            .map(|(_, summary, _)| summary.model.clone())
            .filter(|m| !m.is_empty())
            .collect();
        models.sort();
        models.dedup();
        let status = Status::ALL
            .into_iter()
            .find(|s| q.status.as_deref() == Some(s.name()));
        let model = q.model.filter(|m| !m.is_empty());
        let rows: Vec<pages::Row> = runs
            .iter()
            .map(|(id, summary, status)| pages::Row {
                id,
                summary,
                status: *status,
            })
            .filter(|r| status.is_none_or(|s| r.status == s))
            .filter(|r| model.as_deref().is_none_or(|m| r.summary.model == m))
            .collect();
        pages::runs_list(&rows, &models, status, model.as_deref(), &problems).into_string()
    })
    .await;
    match shown {
        Some(html) => Html(html).into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// A run page's query. Values are read leniently: a page that is no number is the first.
#[derive(serde::Deserialize)]
struct RunQuery {
    page: Option<String>,
    diff: Option<String>,
}

impl RunQuery {
    /// The page asked for, within `1..=pages`.
    fn page(&self, pages: usize) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(1)
            .clamp(1, pages)
    }
}

/// The items of one page: turns `(page-1)*N+1 ..= page*N`; what precedes the first turn is on
/// the first page.
fn page_items(items: &[(usize, Item)], page: usize) -> &[(usize, Item)] {
    let low = (page - 1) * TURNS_PER_PAGE;
    let high = page * TURNS_PER_PAGE;
    let from = if page == 1 {
        0
    } else {
        items.partition_point(|(t, _)| *t <= low)
    };
    let to = items.partition_point(|(t, _)| *t <= high);
    &items[from..to.max(from)]
}

async fn run_page(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(q): Query<RunQuery>,
) -> Response {
    let shown = blocking(move || {
        let alive = writer_alive(&id);
        let html = with_run(&state, &id, true, |run| {
            let pages = run.pages();
            let page = q.page(pages);
            let diff = DiffMode::from_query(q.diff.as_deref());
            let live = (alive && page == pages).then(|| {
                format!(
                    "/runs/{id}/live?after={}&diff={}",
                    run.reader.records(),
                    diff.name()
                )
            });
            pages::run_page(&pages::RunPage {
                id: &id,
                summary: &run.reader.summary,
                status: run.reader.summary.status(alive),
                items: page_items(run.items(), page),
                page,
                pages,
                diff,
                live,
                untrusted: run
                    .follower
                    .untrusted_from()
                    .map(|from| trajectory_untrusted(&id, from)),
            })
            .into_string()
        });
        match html {
            Ok(html) => Html(html).into_response(),
            Err((status, why)) => page_error(status, "No such run", &why),
        }
    })
    .await;
    shown.unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn trajectory_untrusted(id: &str, from: usize) -> String {
    slmcode_aci::state::untrusted_lines(&trajectory::log_path(id), from).to_string()
}

async fn budget_chart(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(q): Query<RunQuery>,
) -> Response {
    let drawn = blocking(move || {
        let budgets: Vec<Budget> = with_run(&state, &id, true, |run| {
            page_items(run.items(), q.page(run.pages()))
                .iter()
                .filter_map(|(_, item)| match item {
                    Item::Reply {
                        budget: Some(b), ..
                    } => Some(*b),
                    _ => None,
                })
                .collect()
        })?;
        chart::budget_svg(&budgets).map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))
    })
    .await;
    match drawn {
        Some(Ok(svg)) => ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response(),
        Some(Err((status, why))) => (status, format!("{why}\n")).into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn bench_list(State(state): State<Shared>) -> Response {
    let labels = crate::bench::report::labels(&state.results);
    let problem = (!state.results.is_dir()).then(|| {
        format!(
            "{} is not a directory: no bench has recorded results here",
            state.results.display()
        )
    });
    Html(pages::bench_list(&labels, problem.as_deref()).into_string()).into_response()
}

async fn bench_report(
    State(state): State<Shared>,
    Query(q): Query<Vec<(String, String)>>,
) -> Response {
    let known = crate::bench::report::labels(&state.results);
    let labels: Vec<String> = q
        .into_iter()
        .filter(|(k, _)| k == "label")
        .map(|(_, v)| v)
        .collect();
    // Only labels that are directories of results: a name from the query is never a path.
    if let Some(unknown) = labels.iter().find(|l| !known.contains(l)) {
        return page_error(
            StatusCode::NOT_FOUND,
            "No such label",
            &format!("there are no results labelled {unknown}"),
        );
    }
    let results = state.results.clone();
    let made =
        blocking(move || crate::bench::report::Report::build(&results, &labels)?.html()).await;
    match made {
        Some(Ok(page)) => {
            let mut r = Html(page).into_response();
            r.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(BENCH_CSP),
            );
            r
        }
        Some(Err(e)) => page_error(StatusCode::BAD_REQUEST, "No report", &e.to_string()),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn stylesheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("view.css"),
    )
        .into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("view.js"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hold_their_turns() {
        let items: Vec<(usize, Item)> = (0..=120).map(|t| (t, Item::Turn { number: t })).collect();
        let first = page_items(&items, 1);
        assert_eq!((first[0].0, first.last().unwrap().0), (0, 50));
        let second = page_items(&items, 2);
        assert_eq!((second[0].0, second.last().unwrap().0), (51, 100));
        let third = page_items(&items, 3);
        assert_eq!((third[0].0, third.len()), (101, 20));
        assert!(page_items(&items, 4).is_empty());
    }
}
