//! The view's pages, rendered on the server with `maud`: every value a run holds (the model's
//! words, a file's lines, a task) goes in as text and comes out escaped; nothing of a run's
//! is ever markup. Charts are separate SVG documents (`plotters` draws them from numbers),
//! shown as images.

use maud::{html, Markup, DOCTYPE};

use super::diff;
use super::model::{Badge, Item, Status, Summary};
use crate::run::Verified;

/// How diffs are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffMode {
    Unified,
    Split,
}

impl DiffMode {
    /// From the `diff` query value: side by side when asked, else unified.
    pub fn from_query(value: Option<&str>) -> DiffMode {
        match value {
            Some("split") => DiffMode::Split,
            _ => DiffMode::Unified,
        }
    }

    /// The query value.
    pub fn name(self) -> &'static str {
        match self {
            DiffMode::Unified => "unified",
            DiffMode::Split => "split",
        }
    }
}

/// A whole page around `body`.
pub fn layout(title: &str, live: Option<&str>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · slmcode" }
                link rel="stylesheet" href="/static/view.css";
                script src="/static/view.js" defer {}
            }
            body data-live=[live] {
                nav.top {
                    a href="/" { "runs" }
                    " · "
                    a href="/bench" { "bench reports" }
                }
                main { (body) }
            }
        }
    }
}

/// A run's row in the list.
pub struct Row<'a> {
    pub id: &'a str,
    pub summary: &'a Summary,
    pub status: Status,
}

/// The runs list, newest first, with the filter form.
pub fn runs_list(
    rows: &[Row],
    models: &[String],
    status: Option<Status>,
    model: Option<&str>,
    problems: &[String],
) -> Markup {
    let body = html! {
        h1 { "Runs" }
        form.filter method="get" action="/" {
            label { "status " select name="status" {
                option value="" { "any" }
                @for s in Status::ALL {
                    option value=(s.name()) selected[status == Some(s)] { (s.name()) }
                }
            } }
            " "
            label { "model " select name="model" {
                option value="" { "any" }
                @for m in models {
                    option value=(m) selected[model == Some(m.as_str())] { (m) }
                }
            } }
            " "
            button type="submit" { "filter" }
        }
        @for p in problems { p.warning { (p) } }
        @if rows.is_empty() {
            p.empty { "No runs here yet: `slmcode run \"…\"` or `slmcode` records them in .slmcode/runs/." }
        } @else {
            table.runs {
                thead { tr {
                    th { "run" } th { "task" } th { "model" } th { "status" } th { "turns" }
                    th { "files" } th { "verified" } th { "time" } th { "tokens" } th { "started" }
                } }
                tbody {
                    @for row in rows {
                        tr.run data-status=(row.status.name()) {
                            td { a href={ "/runs/" (row.id) } { (row.id) } }
                            td.task { (clip(&row.summary.task, 120)) @if row.summary.plan { " " span.badge.neutral { "plan" } } }
                            td { (row.summary.model) }
                            td { (status_badge(row.status)) }
                            td.num { (row.summary.turns) }
                            td.num { (row.summary.files.len()) }
                            td { (verified_word(row.summary.verified)) }
                            td.num { (duration(row.summary.elapsed_ms())) }
                            td.num { (tokens(row.summary.prompt_tokens + row.summary.completion_tokens)) }
                            td { (when(row.summary.started_ms)) }
                        }
                    }
                }
            }
        }
    };
    layout("runs", None, body)
}

/// What the run page shows beside its timeline.
pub struct RunPage<'a> {
    pub id: &'a str,
    pub summary: &'a Summary,
    pub status: Status,
    pub items: &'a [(usize, Item)],
    pub page: usize,
    pub pages: usize,
    pub diff: DiffMode,
    /// Where live updates come from, when the run is running and this is its last page.
    pub live: Option<String>,
    pub untrusted: Option<String>,
}

/// A run: its summary, the pager, the budget chart, and a page of its timeline.
pub fn run_page(p: &RunPage) -> Markup {
    let link =
        |page: usize, diff: DiffMode| format!("/runs/{}?page={page}&diff={}", p.id, diff.name());
    let body = html! {
        section #summary { (summary(p.id, p.summary, p.status)) }
        @if let Some(u) = &p.untrusted { p.warning { (u) } }
        nav.pager {
            @if p.pages > 1 {
                "turns, page " (p.page) " of " (p.pages) ": "
                @for n in 1..=p.pages {
                    @if n == p.page { b { (n) } } @else { a href=(link(n, p.diff)) { (n) } }
                    " "
                }
                " · "
            }
            "diffs: "
            @if p.diff == DiffMode::Unified { b { "unified" } " " a href=(link(p.page, DiffMode::Split)) { "side by side" } }
            @else { a href=(link(p.page, DiffMode::Unified)) { "unified" } " " b { "side by side" } }
        }
        figure.budget {
            img #budget src={ "/runs/" (p.id) "/budget.svg?page=" (p.page) } alt="prompt, cached and completion tokens and tokens per second, per turn";
        }
        section #timeline data-diff=(p.diff.name()) {
            @for (_, item) in p.items { (render_item(item, p.diff)) }
        }
    };
    layout(&clip(&p.summary.task, 60), p.live.as_deref(), body)
}

/// The run's header: what it was asked and how it stands (replaced live as it goes).
pub fn summary(id: &str, s: &Summary, status: Status) -> Markup {
    html! {
        h1 { "Run " (id) " " (status_badge(status)) }
        pre.task { (s.task) }
        dl.facts {
            dt { "model" } dd { (s.model) }
            dt { "turns" } dd #turns { (s.turns) }
            dt { "files changed" } dd { (s.files.len()) @for f in &s.files { " " code { (f) } } }
            dt { "verified" } dd { (verified_word(s.verified)) }
            dt { "time" } dd { (duration(s.elapsed_ms())) " (started " (when(s.started_ms)) ")" }
            dt { "tokens" } dd {
                (tokens(s.prompt_tokens)) " prompt (" (tokens(s.cached_tokens)) " cached) · "
                (tokens(s.completion_tokens)) " completion"
            }
            @if let Some(from) = &s.resumed_from {
                dt { "follows" } dd { a href={ "/runs/" (from) } { (from) } }
            }
        }
    }
}

/// One item of the timeline.
pub fn render_item(item: &Item, mode: DiffMode) -> Markup {
    match item {
        Item::Start {
            model,
            endpoint,
            task,
            resumed_from,
        } => html! {
            div.item.start {
                span.what { "started" } " with " code { (model) } " at " code { (endpoint) }
                @if let Some(from) = resumed_from { ", following run " a href={ "/runs/" (from) } { (from) } }
                details { summary { "task" } pre { (task) } }
            }
        },
        Item::Message { number, text } => html! {
            div.item.message.steer[*number > 1] {
                span.what { @if *number > 1 { "you (message " (number) ") — steering" } @else { "you (the task)" } }
                pre { (text) }
            }
        },
        Item::Turn { number } => html! { h2.turn id={ "turn-" (number) } { "turn " (number) } },
        Item::Reply {
            text,
            reasoning,
            calls,
            budget,
        } => html! {
            div.item.reply {
                @if !reasoning.trim().is_empty() {
                    details.reasoning { summary { "reasoning (" (reasoning.chars().count()) " characters)" } pre { (reasoning) } }
                }
                @if !text.trim().is_empty() { pre.text { (text) } }
                @for c in calls { div.native { span.what { "native call" } " " code { (clip(c, 400)) } } }
                @if let Some(b) = budget {
                    div.budgetline {
                        (tokens(b.prompt)) " prompt · " (tokens(b.cached)) " cached · "
                        (tokens(b.completion)) " completion · " (format!("{:.1}", b.tokens_per_sec)) " tok/s"
                    }
                }
            }
        },
        Item::Call {
            name,
            args,
            badges,
            is_error,
            result,
        } => html! {
            div.item.call.refused[*is_error] {
                div.head { span.tool { (name) } @for b in badges { " " (badge(b)) } }
                @if args.lines().count() > 12 {
                    details.args { summary { "arguments (" (args.lines().count()) " lines)" } pre { (args) } }
                } @else { pre.args { (args) } }
                details.result open[result.lines().count() <= 8] {
                    summary { "result (" (result.lines().count()) " lines, as the model read it)" }
                    pre { (result) }
                }
            }
        },
        Item::FileChanged {
            path,
            added,
            removed,
            diff: text,
        } => html! {
            div.item.file {
                div.head { code { (path) } " " span.added { "+" (added) } " " span.removed { "−" (removed) } }
                @if mode == DiffMode::Split { (diff::split(text)) } @else { (diff::unified(text)) }
            }
        },
        Item::Compacted { before, after } => html! {
            div.item.mark.compacted { "context compacted: about " (tokens(*before)) " → " (tokens(*after)) " tokens (old tool results elided)" }
        },
        Item::Steer { text } => html! {
            div.item.mark.steer { span.what { "harness → model (steering)" } pre { (text) } }
        },
        Item::Note { text, warning } => html! {
            div.item.note.warning[*warning] { (text) }
        },
        Item::Check {
            command,
            passed,
            before,
            result,
        } => html! {
            div.item.check.passed[*passed].failed[!*passed] {
                span.what { @if *before { "check before the change" } @else { "verify" } }
                " " code { (command) } " " @if *passed { span.badge.good { "passed" } } @else { span.badge.bad { "failed" } }
                details { summary { "output" } pre { (result) } }
            }
        },
        Item::ModelSwitched { from, to } => html! {
            div.item.mark { "model switched: " code { (from) } " → " code { (to) } }
        },
        Item::Undone { messages } => html! {
            div.item.mark.undo { "undone: " @for m in messages { q { (clip(m, 80)) } " " } }
        },
        Item::Final {
            answer,
            turns,
            elapsed_ms,
        } => html! {
            div.item.final.(answer.status.as_str()) {
                h2 { "final: " (answer.status) }
                pre.text { (answer.summary) }
                @if !answer.files_changed.is_empty() {
                    p { "files changed: " @for f in &answer.files_changed { code { (f) } " " } }
                }
                @if !answer.notes.trim().is_empty() { p.notes { (answer.notes) } }
                p { (verified_word(answer.verified)) " · " (turns) " turns · " (duration(*elapsed_ms)) }
            }
        },
        Item::Error { text } => html! { div.item.error { span.what { "error" } " " (text) } },
        Item::Plan { steps } => html! {
            div.item.plan {
                h2 { "the plan" }
                ol { @for s in steps { li { (s.goal) @for f in &s.files { " " code { (f) } }
                    @if !s.check.is_empty() { " — check " code { (s.check) } } } } }
            }
        },
        Item::PlanPhase { run_id, status } => html! {
            div.item.mark { "planned by run " a href={ "/runs/" (run_id) } { (run_id) } " (" (status) ")" }
        },
        Item::Step {
            number,
            goal,
            files,
            run_id,
            status,
            summary,
        } => html! {
            div.item.step.(status.as_str()) {
                h2 { "step " (number) ": " (goal) " " span.badge.(if status == "done" { "good" } else { "bad" }) { (status) } }
                p { @for f in files { code { (f) } " " } "— run " a href={ "/runs/" (run_id) } { (run_id) } }
                pre.text { (summary) }
            }
        },
    }
}

/// The bench labels, with a form to report one or compare two.
pub fn bench_list(labels: &[String], problem: Option<&str>) -> Markup {
    let body = html! {
        h1 { "Bench reports" }
        @if let Some(p) = problem { p.warning { (p) } }
        @if labels.is_empty() {
            p.empty { "No results under bench/results/ yet: `slmcode bench run SUITE --label NAME` records them." }
        } @else {
            form method="get" action="/bench/report" {
                p { "Pick one label, or two to compare them (the exercises that flipped are listed)." }
                ul.labels { @for l in labels {
                    li { label { input type="checkbox" name="label" value=(l); " " (l) } " · " a href={ "/bench/report?label=" (l) } { "report" } }
                } }
                button type="submit" { "report" }
            }
        }
    };
    layout("bench", None, body)
}

/// A page that says what went wrong.
pub fn message(title: &str, text: &str) -> Markup {
    layout(
        title,
        None,
        html! { h1 { (title) } p { (text) } p { a href="/" { "all runs" } } },
    )
}

fn badge(b: &Badge) -> Markup {
    html! { span.badge.(b.tone.class()) { (b.label) } }
}

fn status_badge(s: Status) -> Markup {
    let tone = match s {
        Status::Done => "good",
        Status::Blocked => "bad",
        Status::Stopped => "neutral",
        Status::Running => "live",
    };
    html! { span.badge.status.(tone) { (s.name()) } }
}

fn verified_word(v: Option<Verified>) -> &'static str {
    match v {
        Some(Verified::Passed) => "verified: failed before, passes after",
        Some(Verified::Failed) => "verify: still fails",
        Some(Verified::PassedBeforeAndAfter) => "passed before and after (proves nothing)",
        None => "no check",
    }
}

/// Text cut to `max` characters, with an ellipsis when cut.
pub fn clip(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.0}k", n as f64 / 1000.0)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// A time in ms since the epoch, as UTC.
fn when(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = crate::trajectory::civil_date(secs / 86_400);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_words_stay_text() {
        let item = Item::Reply {
            text: "<script>alert(1)</script>".into(),
            reasoning: "<img src=x onerror=alert(2)>".into(),
            calls: vec![],
            budget: None,
        };
        let html = render_item(&item, DiffMode::Unified).into_string();
        assert!(
            !html.contains("<script>") && !html.contains("<img"),
            "{html}"
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
    }

    #[test]
    fn numbers_read_as_people_read_them() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(tokens(45_600), "46k");
        assert_eq!(duration(1500), "1.5 s");
        assert_eq!(duration(125_000), "2 min 5 s");
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(clip("abcdef", 3), "abc…");
    }
}
