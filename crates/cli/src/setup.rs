//! Setting a project up and checking a machine: `slmcode config show` (every effective key
//! and where it came from), `slmcode init` (a commented config and a .gitignore for the run
//! state), `slmcode doctor` (endpoint, model, git, sandbox, grammars — and what to fix).

use std::io::Write;
use std::process::ExitCode;

use crate::terminal;
use anyhow::Result;
use serde_json::json;
use slmcode_aci::config::Shown;
use slmcode_aci::path::RelPath;
use slmcode_aci::registry::ToolError;
use slmcode_aci::{state, syntax, Config, Workspace};
use slmcode_agent::approvals::Approvals;
use slmcode_agent::user_config::{self, UserConfig};

/// `slmcode config show`.
pub fn show(ws: &Workspace, as_json: bool) -> Result<ExitCode> {
    let user = UserConfig::load()?;
    let user_path = user_config::config_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(no HOME)".into());
    let mut rows = ws.config.show();
    for row in rows.iter_mut() {
        if row.key == "endpoint" && row.from == "default" {
            row.value = slmcode_agent::backend::DEFAULT_ENDPOINT.to_string();
        }
    }
    let servers = if user.mcp_servers.is_empty() {
        "(none)".to_string()
    } else {
        user.mcp_servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let servers_origin = if user.mcp_servers.is_empty() {
        "default".to_string()
    } else {
        user_path.clone()
    };
    rows.push(Shown {
        key: "mcp_servers",
        value: servers,
        from: servers_origin,
        ignored: None,
    });
    let mut out = std::io::stdout().lock();
    if as_json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                let mut row = json!({"key": r.key, "value": r.value, "from": r.from});
                if let Some(i) = &r.ignored {
                    row["ignored"] = json!({"value": i.asked, "from": i.source});
                }
                row
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
    } else {
        let width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0);
        let vwidth = rows
            .iter()
            .map(|r| r.value.chars().count().min(40))
            .max()
            .unwrap_or(0);
        writeln!(
            out,
            "# layers: defaults < {user_path} < .slmcode/config.yaml < SLMCODE_* < flags"
        )?;
        for r in &rows {
            let ignored = r
                .ignored
                .as_ref()
                .map(|i| {
                    format!(
                        "  [IGNORED {}: {} — it would loosen this; `slmcode config trust` approves the file]",
                        i.source, i.asked
                    )
                })
                .unwrap_or_default();
            writeln!(
                out,
                "{:<width$}  {:<vwidth$}  {}{ignored}",
                r.key,
                terminal::escape(&r.value),
                r.from
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `slmcode config trust` / `untrust`: approve (or withdraw the approval of) the current
/// content of the project's config, which may then loosen safety settings.
pub fn trust_config(ws: &Workspace, trust: bool) -> Result<ExitCode> {
    let root = ws.jail.root();
    let mut out = std::io::stdout().lock();
    if !trust {
        Approvals::CONFIG
            .set(root, None)
            .map_err(|e| anyhow::anyhow!(e))?;
        writeln!(
            out,
            "the config of {} is no longer approved: it may only tighten safety settings",
            root.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(hash) = Config::project_hash(&ws.jail)? else {
        writeln!(out, "no .slmcode/config.yaml in {}", root.display())?;
        return Ok(ExitCode::SUCCESS);
    };
    Approvals::CONFIG
        .set(root, Some(&hash))
        .map_err(|e| anyhow::anyhow!(e))?;
    writeln!(
        out,
        "approved .slmcode/config.yaml (content {}) for {}: its values now apply, loosening ones included; any change needs approving again",
        &hash[..12],
        root.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The commented config `slmcode init` writes: every key a project may set, at its default.
fn config_template() -> String {
    let d = Config::default();
    let mut text = String::from(
        "# slmcode settings for this project. Layers, lowest first: built-in defaults, your\n\
         # ~/.config/slmcode/config.yaml, this file, SLMCODE_<KEY> variables, command-line flags.\n\
         # endpoint, api_key_env, mcp_servers and shell_allow are read only from your own config.\n\
         # `slmcode config show` prints what is in effect and where each value came from.\n\n",
    );
    for Shown { key, value, .. } in d.show() {
        if slmcode_aci::config::USER_ONLY_KEYS.contains(&key) {
            continue;
        }
        let value = if value == "(none)" {
            String::new()
        } else {
            value
        };
        text.push_str(&format!("# {key}: {value}\n"));
    }
    text
}

/// What the run-state folders are: local to this machine, never committed.
const GITIGNORE: &str =
    "# slmcode run state: local to this machine\nruns/\ncheckpoints/\npending/\nscratch/\ntmp/\n";

/// `slmcode init`.
pub fn init(ws: &Workspace, force: bool) -> Result<ExitCode> {
    let config = RelPath::root().join(".slmcode").join("config.yaml");
    let ignore = RelPath::root().join(".slmcode").join(".gitignore");
    let mut wrote = Vec::new();
    for (path, text) in [
        (&config, config_template()),
        (&ignore, GITIGNORE.to_string()),
    ] {
        let exists = ws.jail.symlink_metadata(path).is_ok();
        if exists && !force {
            eprintln!("slmcode init: {path} exists; left as it is (--force replaces it)");
            continue;
        }
        state::write_shared(&ws.jail, path, text.as_bytes())
            .map_err(|e: ToolError| anyhow::anyhow!("{e}"))?;
        wrote.push(path.to_string());
    }
    if !wrote.is_empty() {
        writeln!(std::io::stdout().lock(), "wrote {}", wrote.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of the doctor's report.
struct Check {
    ok: bool,
    /// Optional checks only warn.
    essential: bool,
    text: String,
}

/// `slmcode doctor`: exit 0 when everything essential is in order.
pub fn doctor(ws: &Workspace) -> Result<ExitCode> {
    let mut checks = Vec::new();
    // The endpoint and the model.
    match crate::run::backend(&ws.config, true) {
        Ok(backend) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            match runtime.block_on(backend.models()) {
                Ok(models) => {
                    checks.push(Check {
                        ok: true,
                        essential: true,
                        text: format!(
                            "endpoint {} answers ({} model{})",
                            backend.endpoint(),
                            models.len(),
                            if models.len() == 1 { "" } else { "s" }
                        ),
                    });
                    checks.push(match &ws.config.model {
                        Some(m) if models.iter().any(|x| &x.id == m) => Check {
                            ok: true,
                            essential: true,
                            text: format!("model {m} is served"),
                        },
                        Some(m) => Check {
                            ok: false,
                            essential: true,
                            text: format!(
                                "model {m} is not served there (it serves: {}); pull it (ollama pull {m}) or set model: to one of those",
                                models.iter().take(6).map(|x| x.id.as_str()).collect::<Vec<_>>().join(", ")
                            ),
                        },
                        None => match models.first() {
                            Some(first) => Check {
                                ok: true,
                                essential: true,
                                text: format!("no model configured; runs will use the server's first, {}", first.id),
                            },
                            None => Check {
                                ok: false,
                                essential: true,
                                text: "the server serves no models; pull one (ollama pull qwen2.5-coder:7b)".into(),
                            },
                        },
                    });
                }
                Err(e) => checks.push(Check {
                    ok: false,
                    essential: true,
                    text: e.to_string(),
                }),
            }
        }
        Err(e) => checks.push(Check {
            ok: false,
            essential: true,
            text: e.to_string(),
        }),
    }
    // git, for git_status, git_diff and ws_mv.
    let git = std::process::Command::new("git").arg("--version").output();
    checks.push(match git {
        Ok(o) if o.status.success() => Check {
            ok: true,
            essential: false,
            text: String::from_utf8_lossy(&o.stdout).trim().to_string(),
        },
        _ => Check {
            ok: false,
            essential: false,
            text: "git not found: git_status, git_diff and git mv will not work (install git)"
                .into(),
        },
    });
    // The sandbox, through the real ws_shell in a scratch workspace.
    checks.push(sandbox_check(&ws.config));
    // The grammars, each parsing a small valid file.
    checks.push(grammar_check());
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    for c in &checks {
        let mark = match (c.ok, c.essential) {
            (true, _) => "ok  ",
            (false, true) => "FAIL",
            (false, false) => "warn",
        };
        failed |= !c.ok && c.essential;
        writeln!(out, "{mark}  {}", c.text)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn sandbox_check(config: &Config) -> Check {
    let fail = |text: String| Check {
        ok: false,
        essential: false,
        text,
    };
    if config.sandbox == slmcode_aci::config::SandboxMode::Off {
        return fail(
            "ws_shell sandbox: off in the config (sandbox: off) — commands are confined only by the policy, and the network is not isolated".into(),
        );
    }
    let Ok(dir) = tempfile::tempdir() else {
        return fail("cannot make a scratch directory to test the sandbox".into());
    };
    let Ok(ws) = Workspace::open(dir.path(), config.clone()) else {
        return fail("cannot open a scratch workspace to test the sandbox".into());
    };
    // A real command through the real path, so what is reported is what a call gets.
    let protected = slmcode_aci::boundary::Protected::discover(&ws.jail);
    let ran = slmcode_aci::shell::exec::execute(
        &ws,
        "true",
        std::time::Duration::from_secs(30),
        protected,
        Default::default(),
    );
    match ran {
        Ok(done) if done.out.exit == slmcode_aci::shell::run::Exit::Code(0) => Check {
            ok: done.report.is_full(),
            essential: false,
            text: format!(
                "ws_shell sandbox (sandbox: {}, shell_network: {}): {}; {}",
                config.sandbox.name(),
                config.shell_network.name(),
                done.report.describe(),
                done.memory.describe()
            ),
        },
        Ok(done) => fail(format!(
            "the ws_shell sandbox could not run `true`: {}",
            done.out.text().trim()
        )),
        Err(e) => fail(format!(
            "the ws_shell sandbox could not start a command: {e}"
        )),
    }
}

fn grammar_check() -> Check {
    let samples: &[(&str, &str)] = &[
        ("a.rs", "fn main() {}\n"),
        ("a.py", "def f():\n    return 1\n"),
        ("a.go", "package main\nfunc main() {}\n"),
        ("a.js", "const a = 1;\n"),
        ("a.ts", "const a: number = 1;\n"),
        ("a.tsx", "const a = <div />;\n"),
        ("a.json", "{\"a\": 1}\n"),
        ("a.toml", "a = 1\n"),
        ("a.yaml", "a: 1\n"),
        ("a.c", "int main(void) { return 0; }\n"),
        ("a.cpp", "int main() { return 0; }\n"),
        ("a.java", "class A {}\n"),
        ("a.sh", "echo hi\n"),
    ];
    let mut broken = Vec::new();
    for (name, text) in samples {
        let path =
            RelPath::parse(name, std::path::Path::new("/")).unwrap_or_else(|_| RelPath::root());
        if !matches!(
            syntax::check(&path, text.as_bytes()),
            syntax::Verdict::Parses
        ) {
            broken.push(*name);
        }
    }
    if broken.is_empty() {
        Check {
            ok: true,
            essential: false,
            text: format!("{} tree-sitter grammars load and parse", samples.len()),
        }
    } else {
        Check {
            ok: false,
            essential: false,
            text: format!(
                "grammars failed on {}: the syntax check is off for those files",
                broken.join(", ")
            ),
        }
    }
}
