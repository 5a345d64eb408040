//! `slmcode view` over HTTP: every route's status, type and policy; the token; the Host and
//! Origin rules; what a run page shows of a real run (written by `slmcode run` against the
//! OpenAI test server), escaped; paging; the live stream. `browser` loads the same pages in
//! Debian's headless Chromium.

mod browser;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{bin, within, Project};
use crate::openai::{FakeModel, Scripted};
use crate::run::{fix_app, read_app, run_command, APP};
use serde_json::json;

/// A running `slmcode view`, killed when dropped.
pub struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    pub token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Starts `slmcode view` on the project and reads the address it prints.
    pub fn start(p: &Project, extra: &[&str]) -> Served {
        let mut child = bin()
            .arg("view")
            .arg("--root")
            .arg(p.root())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start slmcode view");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("slmcode view printed its address");
        let url = line.trim();
        let rest = url.strip_prefix("http://").expect("an http address");
        let (addr, token) = rest.split_once("/?token=").expect("a token in the address");
        assert!(token.len() >= 32, "{url}");
        Served {
            child,
            addr: addr.to_string(),
            token: token.to_string(),
        }
    }

    /// Sends the server Ctrl-C's signal; how long it took to exit (`None`: not within
    /// `limit`, and it is killed).
    pub fn interrupt(&mut self, limit: Duration) -> Option<Duration> {
        let start = std::time::Instant::now();
        let sent = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let child = &mut self.child;
        within(limit, || {
            child.try_wait().expect("wait").map(|_| start.elapsed())
        })
    }

    /// The address of `path` with the token.
    pub fn url(&self, path: &str) -> String {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("http://{}{path}{sep}token={}", self.addr, self.token)
    }

    /// GET `path` with the token in the query.
    pub fn get(&self, path: &str) -> Response {
        let sep = if path.contains('?') { '&' } else { '?' };
        self.raw(&format!("{path}{sep}token={}", self.token), &[])
    }

    /// GET `target` as given, with these extra headers (a `Host` given replaces the real one).
    pub fn raw(&self, target: &str, headers: &[(&str, &str)]) -> Response {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut req = format!("GET {target} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        Response::parse(&bytes)
    }
}

/// An HTTP response as read off the socket.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    fn parse(bytes: &[u8]) -> Response {
        let text = String::from_utf8_lossy(bytes).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Response {
            status,
            headers,
            body: body.to_string(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A run with something of everything: text with markup in it, a read, an edit whose new line
/// holds HTML, a refused edit, a reply the harness answers with a repair, and a final answer
/// after some reasoning.
pub fn script() -> Vec<Scripted> {
    vec![
        Scripted::Calls(
            "I will read it first <script>document.title='pwned'</script>".into(),
            vec![("ws_read".into(), json!({"path": "app.py"}).to_string())],
        ),
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "    return sum(xs)",
                   "new_str": "    return sum(x for x in xs if x is not None)  # <img src=x onerror=alert(2)>"}),
        ),
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "no such line at all", "new_str": "x"}),
        ),
        // Neither a call nor the final JSON: the harness steers (one repair turn).
        Scripted::text("I think that is all."),
        Scripted::Reasoned(
            "the edit landed; <b>done</b>".into(),
            json!({"status": "done", "summary": "skips None now", "files_changed": ["app.py"], "notes": ""})
                .to_string(),
        ),
    ]
}

/// The ids of the project's runs, oldest first.
pub fn run_ids(p: &Project) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(p.path(".slmcode/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids
}

/// Runs `script` to its end in `p`; the run's id.
pub fn run_to_end(p: &Project, script: Vec<Scripted>, task: &str, extra: &[&str]) -> String {
    let before = run_ids(p);
    let model = FakeModel::start(script);
    let out = run_command(p, &model, task, extra, &[])
        .output()
        .expect("run slmcode");
    let new: Vec<String> = run_ids(p)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(
        new.len(),
        1,
        "one new run: {new:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    new[0].clone()
}

/// A project with one finished run of [`script`]; its id.
pub fn project_with_a_run() -> (Project, String) {
    let p = Project::new();
    p.write("app.py", APP);
    let id = run_to_end(&p, script(), "make total() skip None <u>please</u>", &[]);
    (p, id)
}

/// Results of two bench labels, as `slmcode bench run` writes them.
pub fn write_bench_results(p: &Project) {
    for (label, pass) in [("base", false), ("tuned", true)] {
        let mut lines = String::new();
        for (lang, ex) in [("python", "two-fer"), ("rust", "leap"), ("python", "bob")] {
            let passed = pass || ex == "leap";
            lines.push_str(
                &json!({"label": label, "language": lang, "exercise": ex, "attempt": 1, "repeat": 0,
                        "passed": passed, "status": if passed {"done"} else {"blocked"}, "turns": 4,
                        "prompt_tokens": 9000, "completion_tokens": 300, "cached_tokens": 7000,
                        "wall_ms": 12000, "rungs": {"exact": 2}, "refusals": {}, "run_id": "r",
                        "model": "test-model", "settings": {}, "slmcode_version": "0.1.0",
                        "suite_commit": null})
                .to_string(),
            );
            lines.push('\n');
        }
        p.write(&format!("bench/results/{label}/results.jsonl"), lines);
    }
}

#[test]
fn every_route_answers_with_its_type_and_the_policy() {
    let (p, id) = project_with_a_run();
    write_bench_results(&p);
    let v = Served::start(&p, &[]);
    let routes: Vec<(String, u16, &str)> = vec![
        ("/".into(), 200, "text/html"),
        ("/?status=done&model=test-model".into(), 200, "text/html"),
        (format!("/runs/{id}"), 200, "text/html"),
        (format!("/runs/{id}?page=1&diff=split"), 200, "text/html"),
        (
            format!("/runs/{id}?page=abc&diff=%3Cb%3E"),
            200,
            "text/html",
        ),
        (
            format!("/runs/{id}?page=99999999999999999999999"),
            200,
            "text/html",
        ),
        (format!("/runs/{id}/budget.svg"), 200, "image/svg+xml"),
        (format!("/runs/{id}/live"), 200, "text/event-stream"),
        ("/bench".into(), 200, "text/html"),
        (
            "/bench/report?label=base&label=tuned".into(),
            200,
            "text/html",
        ),
        ("/static/view.css".into(), 200, "text/css"),
        ("/static/view.js".into(), 200, "text/javascript"),
        ("/runs/20200101-000000-1".into(), 404, "text/html"),
        ("/runs/..%2F..%2Fetc".into(), 404, "text/html"),
        ("/bench/report?label=..%2F..".into(), 404, "text/html"),
        ("/nothing/here".into(), 404, "text/html"),
    ];
    for (path, status, kind) in routes {
        let r = v.get(&path);
        assert_eq!(r.status, status, "{path}: {}", r.body);
        let ct = r.header("content-type").unwrap_or("");
        assert!(ct.starts_with(kind), "{path}: {ct}");
        let csp = r.header("content-security-policy").unwrap_or("");
        assert!(
            csp.contains("default-src 'none'") && !csp.contains("script-src 'unsafe"),
            "{path}: {csp}"
        );
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    // The bench page compares the two labels.
    let report = v.get("/bench/report?label=base&label=tuned").body;
    assert!(report.contains("flipped"), "{report}");
    assert!(report.contains("<svg"), "charts drawn");
    let listed = v.get("/bench").body;
    assert!(
        listed.contains("base") && listed.contains("tuned"),
        "{listed}"
    );
}

#[test]
fn a_run_page_shows_turns_badges_and_diffs_and_keeps_html_text() {
    let (p, id) = project_with_a_run();
    let v = Served::start(&p, &[]);
    let page = v.get(&format!("/runs/{id}")).body;
    for turn in 1..=5 {
        assert!(page.contains(&format!("id=\"turn-{turn}\"")), "turn {turn}");
    }
    // The harness's repair is marked as steering.
    assert!(page.contains("harness → model (steering)"), "{page}");
    assert!(
        page.contains(r#"<span class="badge good">exact</span>"#),
        "{page}"
    );
    assert!(
        page.contains(r#"<span class="badge bad">refused: not found</span>"#),
        "{page}"
    );
    assert!(page.contains(r#"<span class="tool">ws_edit</span>"#));
    // The diff, with its lines numbered; the model's markup as text, never as markup.
    assert!(
        page.contains(r#"<tr class="del"><td class="n">2</td>"#),
        "{page}"
    );
    assert!(
        page.contains(
            "return sum(x for x in xs if x is not None)  # &lt;img src=x onerror=alert(2)&gt;"
        ),
        "{page}"
    );
    assert!(
        page.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;")
            || page.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("make total() skip None &lt;u&gt;please&lt;/u&gt;"));
    assert!(
        !page.contains("<script>document")
            && !page.contains("<img src=x")
            && !page.contains("<u>please")
    );
    // Reasoning folded; the final answer and its status.
    assert!(
        page.contains("<details class=\"reasoning\"><summary>reasoning ("),
        "{page}"
    );
    assert!(page.contains("the edit landed; &lt;b&gt;done&lt;/b&gt;"));
    assert!(page.contains("final: done") && page.contains("skips None now"));
    assert!(page.contains(r#"<span class="badge status good">done</span>"#));
    // Side by side: the removed line beside the one that replaced it.
    let split = v.get(&format!("/runs/{id}?diff=split")).body;
    assert!(split.contains(r#"<table class="diff split">"#), "{split}");
    assert!(
        split.contains(r#"<td class="code del">    return sum(xs)</td><td class="n add">2</td>"#),
        "{split}"
    );
    // The budget per turn, as a chart drawn from the replies.
    let svg = v.get(&format!("/runs/{id}/budget.svg")).body;
    assert!(
        svg.contains("<svg") && svg.contains("tokens per turn"),
        "{svg}"
    );
}

#[test]
fn without_the_token_or_from_elsewhere_nothing_is_served() {
    let (p, id) = project_with_a_run();
    let v = Served::start(&p, &[]);
    for path in [
        "/".to_string(),
        format!("/runs/{id}"),
        format!("/runs/{id}/live"),
        "/bench".into(),
        "/static/view.js".into(),
    ] {
        let r = v.raw(&path, &[]);
        assert_eq!(r.status, 401, "{path}");
        assert!(r.body.contains("needs the view's token"), "{}", r.body);
        assert!(!r.body.contains("make total()"));
        let r = v.raw(
            &format!("{path}?token=0123456789abcdef0123456789abcdef0123456789abcdef"),
            &[],
        );
        assert_eq!(r.status, 401, "{path} with a wrong token");
    }
    // The token once in the address; then the cookie the server set, for this port.
    let first = v.get("/");
    let cookie = first.header("set-cookie").expect("a cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(
        v.raw(&format!("/runs/{id}"), &[("Cookie", pair)]).status,
        200
    );
    assert_eq!(v.raw("/", &[("Cookie", "slmcode-view-1=nope")]).status, 401);
    // A page of another site, or a name rebound to this machine, is refused even with it.
    let evil = v.raw(
        &format!("/runs/{id}?token={}", v.token),
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(evil.status, 403, "{}", evil.body);
    assert!(!evil.body.contains("make total()"));
    let rebound = v.raw(&format!("/?token={}", v.token), &[("Host", "evil.example")]);
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    let local = format!("http://{}", v.addr);
    assert_eq!(
        v.raw(&format!("/?token={}", v.token), &[("Origin", &local)])
            .status,
        200
    );
}

#[test]
fn runs_are_listed_with_their_facts_and_filtered() {
    let (p, id) = project_with_a_run();
    // A second run that ends blocked.
    let blocked = run_to_end(
        &p,
        vec![Scripted::text(
            json!({"status": "blocked", "summary": "cannot", "files_changed": [], "notes": ""})
                .to_string(),
        )],
        "an impossible task",
        &[],
    );
    let v = Served::start(&p, &[]);
    let all = v.get("/").body;
    assert!(all.contains(&id) && all.contains(&blocked), "{all}");
    assert!(all.contains("make total() skip None &lt;u&gt;please&lt;/u&gt;"));
    assert!(all.contains("test-model"));
    let done = v.get("/?status=done").body;
    assert!(done.contains(&id) && !done.contains(&blocked), "{done}");
    let only_blocked = v.get("/?status=blocked").body;
    assert!(only_blocked.contains(&blocked) && !only_blocked.contains(&id));
    assert!(!v.get("/?model=another-model").body.contains(&id));
    assert!(v.get("/?model=test-model").body.contains(&id));
}

#[test]
fn a_long_run_opens_a_page_of_turns_at_a_time() {
    let p = Project::new();
    let mut script = Vec::new();
    for i in 1..=55 {
        p.write(&format!("f{i}.txt"), format!("file {i}\n"));
        script.push(Scripted::call(
            "ws_read",
            json!({"path": format!("f{i}.txt")}),
        ));
    }
    script.push(Scripted::final_done("read them all"));
    let id = run_to_end(&p, script, "read every file", &["--max-turns", "60"]);
    let v = Served::start(&p, &[]);
    let first = v.get(&format!("/runs/{id}")).body;
    assert!(first.contains("id=\"turn-50\"") && !first.contains("id=\"turn-51\""));
    assert!(first.contains("page 1 of 2"), "{first}");
    let second = v.get(&format!("/runs/{id}?page=2")).body;
    assert!(second.contains("id=\"turn-51\"") && !second.contains("id=\"turn-50\""));
    assert!(second.contains("final: done"));
}

#[test]
fn the_live_stream_of_a_finished_run_sends_its_items_then_ends() {
    let (p, id) = project_with_a_run();
    let v = Served::start(&p, &[]);
    let r = v.get(&format!("/runs/{id}/live?after=0"));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("event: items"), "{}", r.body);
    assert!(r.body.contains("turn-1"));
    assert!(r.body.contains("event: summary") && r.body.contains("event: end"));
    // What the page already has is not sent again.
    let none = v.get(&format!("/runs/{id}/live?after=10000"));
    assert!(!none.body.contains("event: items"), "{}", none.body);
}

#[test]
fn a_plan_run_shows_its_plan_and_links_each_step_s_run() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::with_models(
        vec![
            read_app(),
            Scripted::Text(
                json!({"steps": [{"goal": "make total skip <None>", "files": ["app.py"], "check": ""}]})
                    .to_string(),
            ),
            read_app(),
            fix_app(),
            Scripted::final_done("fixed total"),
        ],
        vec![
            json!({"id": "plan-model", "object": "model"}),
            json!({"id": "edit-model", "object": "model"}),
        ],
    );
    let args = [
        "--plan",
        "--plan-model",
        "plan-model",
        "--edit-model",
        "edit-model",
    ];
    let out = run_command(&p, &model, "fix total", &args, &[])
        .output()
        .expect("run slmcode");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ids = run_ids(&p);
    let log = |id: &String| {
        std::fs::read_to_string(p.path(&format!(".slmcode/runs/{id}.jsonl"))).unwrap()
    };
    let plan = ids
        .iter()
        .find(|id| log(id).contains(r#""type":"plan""#))
        .expect("the plan's run");
    let step = ids
        .iter()
        .find(|id| *id != plan && log(id).contains(r#""type":"file_changed""#))
        .expect("the step's run");
    let v = Served::start(&p, &[]);
    let page = v.get(&format!("/runs/{plan}")).body;
    assert!(page.contains("the plan"), "{page}");
    assert!(
        page.contains("step 1: make total skip &lt;None&gt;"),
        "{page}"
    );
    assert!(page.contains(&format!("href=\"/runs/{step}\"")), "{page}");
    let list = v.get("/").body;
    assert!(
        list.contains(r#"<span class="badge neutral">plan</span>"#),
        "{list}"
    );
    // The step's own run shows its edit.
    let step_page = v.get(&format!("/runs/{step}")).body;
    assert!(step_page.contains("class=\"item file\""), "{step_page}");
}

#[test]
fn ctrl_c_stops_the_server_at_once_even_with_a_live_page_open() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        Scripted::Slow(30_000, Box::new(Scripted::final_done("late"))),
    ]);
    let mut run = run_command(&p, &model, "make total() skip None", &[], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start slmcode run");
    let id = within(Duration::from_secs(30), || {
        run_ids(&p).pop().filter(|id| {
            std::fs::read_to_string(p.path(&format!(".slmcode/runs/{id}.jsonl")))
                .is_ok_and(|log| log.contains(r#""type":"tool""#))
        })
    })
    .expect("the run started");
    let mut v = Served::start(&p, &[]);
    // A page following the running run: its stream stays open.
    let mut stream = TcpStream::connect(&v.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /runs/{id}/live?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
        v.token, v.addr
    )
    .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("event: summary") {
        let n = stream.read(&mut buf).expect("the live stream");
        assert!(n > 0, "the stream stayed open: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(!seen.contains("event: end"), "the run is running: {seen}");
    let took = v.interrupt(Duration::from_secs(4));
    let _ = run.kill();
    let _ = run.wait();
    let took = took.expect("slmcode view exited after Ctrl-C");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn a_run_log_slmcode_did_not_write_is_neither_listed_nor_shown() {
    let (p, id) = project_with_a_run();
    // A log that came with a clone: plain JSON lines, not sealed with this user's key.
    let foreign = "20250101-000000-1";
    p.write(
        &format!(".slmcode/runs/{foreign}.jsonl"),
        format!(
            "{}\n{}\n",
            json!({"type": "start", "task": "planted task", "model": "m", "endpoint": "e"}),
            json!({"type": "reply", "turn": 1, "content": "planted reply"})
        ),
    );
    let v = Served::start(&p, &[]);
    let list = v.get("/").body;
    assert!(list.contains(&id), "{list}");
    assert!(!list.contains("planted task"), "{list}");
    assert!(
        list.contains("not written by slmcode for this user"),
        "{list}"
    );
    let page = v.get(&format!("/runs/{foreign}"));
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(!page.body.contains("planted"), "{}", page.body);
    let live = v.get(&format!("/runs/{foreign}/live"));
    assert!(!live.body.contains("planted"), "{}", live.body);
    // The list reads each log again only where it grew: twice in a row, the same.
    assert_eq!(v.get("/").body, list);
}
