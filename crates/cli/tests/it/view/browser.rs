//! `slmcode view` in a real browser: Debian's headless Chromium renders the runs list and a
//! run page of a run `slmcode run` wrote against the OpenAI test server (the DOM it built is
//! checked: the turns, the badges, the diff, the model's markup as text); a running run's page
//! is watched through the DevTools protocol while the run goes on, and its new turns must
//! appear without a reload. Screenshots of a run page and a bench report page are kept under
//! `target/view-screenshots/` to be looked at.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::{project_with_a_run, run_ids, write_bench_results, Served};
use crate::common::{skip, within, Project};
use crate::openai::{FakeModel, Scripted};
use crate::run::{fix_app, read_app, run_command, APP};

/// Debian's Chromium (`SLMCODE_CHROMIUM` names another); `None` is a counted skip.
fn chromium(what: &str) -> Option<PathBuf> {
    if let Ok(p) = std::env::var("SLMCODE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
        if found.is_some() {
            return found;
        }
    }
    skip(
        what,
        "no Chromium here (apt-get install chromium; .ci/run does)",
    );
    None
}

/// Headless, offline and quiet: no sandbox (CI runs as root), no GPU, no calls home.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
];

fn browser(exe: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Runs a one-shot Chromium command to its end (at most a minute); its stdout.
fn one_shot(mut cmd: Command) -> String {
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("start chromium");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    if within(Duration::from_secs(60), || child.try_wait().expect("wait")).is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("chromium did not finish within a minute");
    }
    reader.join().unwrap_or_default()
}

/// The DOM Chromium built for `url`, after its scripts ran.
fn dump_dom(exe: &Path, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = browser(exe, profile.path());
    cmd.arg("--dump-dom").arg(url);
    one_shot(cmd)
}

/// Where screenshots are kept for people to look at (CI keeps `target/`).
fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .join("view-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn screenshot(exe: &Path, url: &str, name: &str, height: u32) -> PathBuf {
    let profile = tempfile::tempdir().unwrap();
    let out = screenshots().join(name);
    let _ = std::fs::remove_file(&out);
    let mut cmd = browser(exe, profile.path());
    cmd.arg(format!("--screenshot={}", out.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(url);
    one_shot(cmd);
    let bytes = std::fs::read(&out).unwrap_or_default();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "a screenshot of {url} in {}",
        out.display()
    );
    out
}

#[test]
fn chromium_renders_the_runs_list_and_a_run_page() {
    let Some(exe) = chromium("the view in a browser") else {
        return;
    };
    let (p, id) = project_with_a_run();
    write_bench_results(&p);
    let v = Served::start(&p, &[]);

    let list = dump_dom(&exe, &v.url("/"));
    assert!(list.contains(&format!("href=\"/runs/{id}\"")), "{list}");
    assert!(
        list.contains(r#"<span class="badge status good">done</span>"#),
        "{list}"
    );

    let page = dump_dom(&exe, &v.url(&format!("/runs/{id}")));
    for turn in 1..=4 {
        assert!(
            page.contains(&format!("id=\"turn-{turn}\"")),
            "turn {turn}: {page}"
        );
    }
    assert!(
        page.contains(r#"<span class="badge good">exact</span>"#),
        "{page}"
    );
    assert!(page.contains("refused: not found"), "{page}");
    assert!(
        page.contains(r#"<tr class="add"><td class="n"></td><td class="n">2</td>"#),
        "{page}"
    );
    // The model's `<script>` stayed text: it is in the DOM as characters, and it never ran.
    assert!(page.contains("&lt;script&gt;document.title="), "{page}");
    assert!(!page.contains("<title>pwned"), "{page}");
    assert!(!page.contains("<img src=\"x\""), "{page}");
    assert!(page.contains("final: done"));

    let shot = screenshot(&exe, &v.url(&format!("/runs/{id}")), "run.png", 2400);
    screenshot(
        &exe,
        &v.url(&format!("/runs/{id}?diff=split")),
        "run-split.png",
        2400,
    );
    screenshot(&exe, &v.url("/"), "runs.png", 900);
    screenshot(
        &exe,
        &v.url("/bench/report?label=base&label=tuned"),
        "bench.png",
        2000,
    );
    eprintln!("screenshots in {}", shot.parent().unwrap().display());
}

/// A Chromium with a page open, driven through the DevTools protocol.
struct Devtools {
    child: Child,
    socket: tungstenite::WebSocket<std::net::TcpStream>,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Devtools {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Devtools {
    fn open(exe: &Path, url: &str) -> Devtools {
        let profile = tempfile::tempdir().unwrap();
        let child = browser(exe, profile.path())
            .arg("--remote-debugging-port=0")
            .arg(url)
            .stdout(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium writes the port it took into the profile.
        let port_file = profile.path().join("DevToolsActivePort");
        let port = within(Duration::from_secs(30), || {
            std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.lines().next()?.trim().parse::<u16>().ok())
        })
        .expect("chromium's DevTools port");
        let page = within(Duration::from_secs(30), || {
            let list = http_get(port, "/json/list")?;
            let targets: Vec<Value> = serde_json::from_str(&list).ok()?;
            targets
                .iter()
                .find(|t| {
                    t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains("/runs/"))
                })
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_string))
        })
        .expect("the page's DevTools address");
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let (socket, _) = tungstenite::client(page.as_str(), stream).expect("a DevTools session");
        Devtools {
            child,
            socket,
            next: 0,
            _profile: profile,
        }
    }

    /// The value of `expression` in the page.
    fn eval(&mut self, expression: &str) -> Value {
        self.next += 1;
        let id = self.next;
        let call = json!({"id": id, "method": "Runtime.evaluate",
                          "params": {"expression": expression, "returnByValue": true}});
        self.socket
            .send(tungstenite::Message::text(call.to_string()))
            .expect("send");
        loop {
            let message = self.socket.read().expect("a DevTools message");
            let Ok(text) = message.to_text() else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if v["id"] == id {
                return v["result"]["result"]["value"].clone();
            }
        }
    }
}

fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    // Read what comes until the server closes or pauses: the list is small.
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

#[test]
fn a_running_run_s_turns_appear_on_its_open_page() {
    let Some(exe) = chromium("the live view in a browser") else {
        return;
    };
    let p = Project::new();
    p.write("app.py", APP);
    let slow = |s: Scripted| Scripted::Slow(1500, Box::new(s));
    let model = FakeModel::start(vec![
        read_app(),
        slow(fix_app()),
        slow(read_app()),
        slow(Scripted::final_done("skips None")),
    ]);
    let mut run = run_command(&p, &model, "make total() skip None", &[], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start slmcode run");
    // The run is under way: its first turn is in its trajectory.
    let id = within(Duration::from_secs(30), || {
        let id = run_ids(&p).pop()?;
        let log = std::fs::read_to_string(p.path(&format!(".slmcode/runs/{id}.jsonl"))).ok()?;
        log.contains(r#""type":"tool""#).then_some(id)
    })
    .expect("the run started");
    let v = Served::start(&p, &[]);
    eprintln!("run {id} under way; opening its page");
    let mut page = Devtools::open(&exe, &v.url(&format!("/runs/{id}")));
    let live = within(Duration::from_secs(30), || {
        let ready = page
            .eval("document.readyState === 'complete' && document.body.getAttribute('data-live')");
        ready.as_str().map(str::to_string)
    });
    assert!(
        live.is_some_and(|l| l.contains("/live")),
        "the page of a running run follows it"
    );
    eprintln!("the page follows the run");
    // A mark a reload would wipe.
    page.eval("window.__notReloaded = 42");
    let calls_at_first = page.eval("document.querySelectorAll('#timeline .call').length");
    let ended = within(Duration::from_secs(60), || {
        let v = page.eval("document.querySelector('#timeline .final') !== null");
        (v == true).then_some(())
    });
    let _ = run.wait();
    assert!(
        ended.is_some(),
        "the final answer appeared on the open page"
    );
    let calls = page.eval("document.querySelectorAll('#timeline .call').length");
    assert!(
        calls.as_u64() > calls_at_first.as_u64(),
        "new calls appeared: {calls_at_first} then {calls}"
    );
    assert_eq!(
        page.eval("document.querySelectorAll('#timeline .file').length"),
        1
    );
    assert_eq!(
        page.eval("window.__notReloaded"),
        42,
        "the page was not reloaded"
    );
    let diff = page.eval("document.querySelector('#timeline .file').textContent");
    assert!(
        diff.as_str()
            .is_some_and(|d| d.contains("return sum(x for x in xs if x is not None)")),
        "{diff}"
    );
    // Once the run's process is gone the page says so, still without a reload.
    let done = within(Duration::from_secs(10), || {
        let s = page.eval("document.querySelector('#summary .status').textContent");
        (s == "done").then_some(())
    });
    assert!(done.is_some(), "the header shows the run done");
}
