//! `slmcode doctor`: checks the endpoint, the model, git, the platform, the sandbox and the
//! grammars, and says what to fix.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use slmcode_aci::path::RelPath;
use slmcode_aci::{syntax, Config, Workspace};

use super::common::open_workspace;
use super::run;
use crate::terminal;

/// The arguments of `slmcode doctor`.
#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Probe this model for real: native tool calls, the call format it writes, a long prompt
    /// against the context in force, its speed; then print the settings to use.
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// Probe a plan-mode role's model the same way: `plan` (plan_model) or `edit`
    /// (edit_model); each falls back to `model`.
    #[arg(long, value_name = "ROLE", conflicts_with = "model", value_parser = ["plan", "edit"])]
    role: Option<String>,
    /// With --model or --role: write those settings to your ~/.config/slmcode/config.yaml.
    #[arg(long)]
    write: bool,
}

/// One line of the doctor's report.
struct Check {
    ok: bool,
    /// Optional checks only warn.
    essential: bool,
    text: String,
}

/// `slmcode doctor`: exit 0 when everything essential is in order.
pub fn run(args: DoctorArgs) -> Result<ExitCode> {
    let mut ws = open_workspace(args.root)?;
    if args.write && args.model.is_none() && args.role.is_none() {
        anyhow::bail!("--write writes what a probe found: give --model M or --role plan|edit");
    }
    // A role's model is probed as --model would probe it.
    let role_model = match args.role.as_deref() {
        Some("plan") => ws.config.plan_model.clone().or(ws.config.model.clone()),
        Some(_) => ws.config.edit_model.clone().or(ws.config.model.clone()),
        None => None,
    };
    if let (Some(role), None) = (&args.role, &role_model) {
        anyhow::bail!("the {role} role has no model: set {role}_model (or model) in the config");
    }
    let model = args.model.clone().or(role_model);
    if let Some(m) = &model {
        ws.config.apply_flag("model", m, "--model")?;
    }
    let mut checks = Vec::new();
    // The endpoint and the model.
    match run::backend(&ws.config, true) {
        Ok(mut backend) => {
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
                    // Plan mode's roles, when they name models of their own.
                    for (key, role) in [
                        ("plan_model", &ws.config.plan_model),
                        ("edit_model", &ws.config.edit_model),
                    ] {
                        if let Some(m) = role {
                            let served = models.iter().any(|x| &x.id == m);
                            checks.push(Check {
                                ok: served,
                                essential: false,
                                text: if served {
                                    format!("{key} {m} is served")
                                } else {
                                    format!("{key} {m} is not served there; plan mode would ask for it anyway (pull it, or change {key})")
                                },
                            });
                        }
                    }
                    // The context the model is served with, and where that was read.
                    let model = ws
                        .config
                        .model
                        .clone()
                        .filter(|m| models.iter().any(|x| &x.id == m))
                        .or_else(|| models.first().map(|m| m.id.clone()));
                    if let Some(model) = model {
                        // Ollama: runs set the context themselves, through its own API.
                        let (window, ollama) = run::settle_context(
                            &runtime,
                            &mut backend,
                            &ws.config,
                            &model,
                            &models,
                        );
                        let warning = window.warning().filter(|_| !ollama);
                        let how = if ollama {
                            " (Ollama: runs use its /api/chat and set num_ctx to this)"
                        } else {
                            ""
                        };
                        checks.push(Check {
                            ok: warning.is_none(),
                            essential: false,
                            text: match warning {
                                Some(w) => format!("{} for {model}: {w}", window.describe()),
                                None => format!("{} for {model}{how}", window.describe()),
                            },
                        });
                    }
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
    // The platform: which implementation of the sandbox and containment, and what it lacks.
    let platform = slmcode_aci::platform::Platform::current();
    checks.push(Check {
        ok: true,
        essential: false,
        text: format!("platform: {}", platform.describe()),
    });
    let missing = platform.missing();
    if !missing.is_empty() {
        checks.push(Check {
            ok: false,
            essential: false,
            text: format!("missing on this platform: {}", missing.join("; ")),
        });
    }
    // The sandbox, through the real ws_shell in a scratch workspace.
    checks.push(sandbox_check(&ws.config));
    // What a command can read (shell_read_allow), in this project.
    let reads = slmcode_aci::shell::exec::reads(&ws);
    checks.push(Check {
        ok: reads.is_confined(),
        essential: false,
        text: format!("ws_shell reads: {}", reads.describe()),
    });
    // The grammars, each parsing a small valid file.
    checks.push(grammar_check());
    // State under .slmcode/ that slmcode did not write for this user.
    checks.push(state_check(&ws));
    let mut out = terminal::stdout();
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
    drop(out);
    if let (Some(model), false) = (&model, failed) {
        probe_model(&ws, model, args.role.as_deref(), args.write)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--model M`: asks the model what a run would, prints what it found and the settings that
/// follow, and with `--write` puts them in the user's config.
fn probe_model(ws: &Workspace, model: &str, role: Option<&str>, write: bool) -> Result<()> {
    // As a config reads a name: trimmed, and never blank.
    let model = model.trim();
    if model.is_empty() {
        anyhow::bail!("--model needs a model's name (`slmcode models` lists them)");
    }
    let mut backend = run::backend(&ws.config, true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let listed = runtime.block_on(backend.models())?;
    let (window, _) = run::settle_context(&runtime, &mut backend, &ws.config, model, &listed);
    let mut out = terminal::stdout();
    writeln!(
        out,
        "\nprobing {model} (a few requests; a long one fills most of the {}-token context)",
        window.tokens
    )?;
    let report = runtime.block_on(slmcode_agent::probe::probe(
        &backend,
        model,
        &slmcode_aci::Registry::coding(),
        window.tokens,
    ))?;
    for line in report.lines() {
        writeln!(out, "      {line}")?;
    }
    let mut settings = report.settings(model, window.tokens);
    if let Some(role) = role {
        // A role names its model under its own key; each role's window is asked of the
        // server for its model, so none is written for it.
        settings.retain(|(key, _)| *key != "context_window");
        for (key, _) in settings.iter_mut() {
            if *key == "model" {
                *key = if role == "plan" {
                    "plan_model"
                } else {
                    "edit_model"
                };
            }
        }
    }
    writeln!(out, "settings to use:")?;
    for (key, value) in &settings {
        writeln!(
            out,
            "      {key}: {}",
            slmcode_agent::probe::yaml_value(value)
        )?;
    }
    if write {
        let Some(path) = slmcode_agent::user_config::config_path() else {
            anyhow::bail!("no home directory to write ~/.config/slmcode/config.yaml in");
        };
        let text =
            match slmcode_aci::readback::read_path(&path, slmcode_aci::readback::CONTROL_MAX_BYTES)
            {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => anyhow::bail!("cannot read {}: {e}; nothing was written", path.display()),
            };
        let updated = slmcode_agent::probe::set_config_keys(&text, &settings);
        slmcode_aci::fsx::save_private(&path, updated.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(out, "written to {}", path.display())?;
    }
    Ok(())
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

/// The state files under `.slmcode/` (runs, checkpoints, pending changes, the index) whose
/// state MAC does not check against the user's key: ignored by every command, listed here.
fn state_check(ws: &Workspace) -> Check {
    let key = slmcode_aci::seal::key_path().map_or_else(
        || "none: no data directory".to_string(),
        |p| p.display().to_string(),
    );
    let untrusted = slmcode_aci::state::audit(&ws.jail);
    if untrusted.is_empty() {
        return Check {
            ok: true,
            essential: false,
            text: format!(
                "state under .slmcode/: all written by slmcode for this user (state key {key})"
            ),
        };
    }
    let listed: Vec<String> = untrusted
        .iter()
        .map(|u| format!("{} ({})", u.path, u.why))
        .collect();
    Check {
        ok: false,
        essential: false,
        text: format!(
            "{} state file(s) under .slmcode/ not written by slmcode for this user, so ignored: {}. Look at them, then remove them (state key {key})",
            untrusted.len(),
            listed.join(", ")
        ),
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
