//! What the model is told: a short system prompt carrying the spec's edit-format contract, one
//! worked example and one worked repair (for a small model a demonstration beats a rule), the
//! tool schemas, and — in the first user message — the task with the project's own
//! instructions and the matched skills. The system prompt and the coding tools' schemas stay
//! within [`PROMPT_TOKEN_BUDGET`] (cl100k tokens; a test counts them).

use serde_json::{json, Value};
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::symbols::{self, map::RepoMap};
use slmcode_aci::{Registry, Workspace};

use crate::evolve::Arm;

/// The most tokens the system prompt and the coding tools' schemas may take together.
pub const PROMPT_TOKEN_BUDGET: usize = 1400;

/// Files whose text is the project's instructions to an agent, read in this order.
pub const INSTRUCTION_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", ".slmcode/AGENTS.md"];

/// The most characters of project instructions that reach the prompt (about 1,500 tokens).
pub const MAX_INSTRUCTION_CHARS: usize = 6000;

/// The system prompt for a run whose edit format is `arm`: the contract, one worked example
/// and one worked repair for that format.
pub fn system_prompt(arm: Arm) -> String {
    let head = "You are a coding agent. Change the project only through the tools, ONE tool call per turn. Paths are relative to the project root.\n\nEdit contract:\n";
    let body = match arm {
        Arm::SearchReplace => {
            r#"1. ws_read a file before editing it; old_str must match it byte-for-byte, indentation included.
2. The "42|" prefix ws_read shows is display only: never put it in old_str.
3. Make old_str unique: add 2-3 surrounding lines when a short span repeats.
4. ws_write creates new files; change existing files with ws_edit.
5. When an edit fails, ws_read again and retry. Never rewrite the file with ws_write.

Example: ws_read {"path":"calc.py"} shows
     7|def total(xs):
     8|    return sum(xs)
ws_edit {"path":"calc.py","old_str":"def total(xs):\n    return sum(xs)","new_str":"def total(xs):\n    return sum(x for x in xs if x)"}

Repair: ws_edit {"path":"calc.py","old_str":"     8|    return sum(xs)",...} is refused: "8|" is not in the file. Retry with "old_str":"    return sum(xs)"."#
        }
        Arm::UnifiedDiff => {
            r#"1. ws_read a file before patching it; context and "-" lines must match it exactly, indentation included.
2. The "42|" prefix ws_read shows is display only: never put it in a patch.
3. Keep 2-3 unchanged context lines around each change.
4. ws_write creates new files; change existing files with ws_patch.
5. When a patch fails, ws_read again and retry. Never rewrite the file with ws_write.

Example: ws_read {"path":"calc.py"} shows
     7|def total(xs):
     8|    return sum(xs)
ws_patch {"path":"calc.py","patch":"@@ -7,2 +7,2 @@\n def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x)\n"}

Repair: a patch line "-     8|    return sum(xs)" is refused: "8|" is not in the file. Retry with "-    return sum(xs)"."#
        }
        Arm::WholeFile => {
            r#"1. ws_read a file before changing it, then ws_write its complete new content: every line, not only the changed ones.
2. The "42|" prefix ws_read shows is display only: never put it in content.
3. Keep what you do not mean to change exactly as it was, indentation included.
4. A large file rewritten much shorter is refused: write all of it.
5. When a write fails, ws_read the file again and retry.

Example: ws_read {"path":"calc.py"} shows
     1|def total(xs):
     2|    return sum(xs)
ws_write {"path":"calc.py","content":"def total(xs):\n    return sum(x for x in xs if x)\n"}

Repair: content starting "     1|def total" is wrong: "1|" is not code. Write "def total(xs):\n..." instead."#
        }
    };
    let tail = r#"

When done, or stuck, stop calling tools and reply with only:
{"status":"done","summary":"what you changed","files_changed":["calc.py"],"notes":""}
Use status "blocked", with the reason in notes, if you could not finish."#;
    format!("{head}{body}{tail}")
}

/// The coding tools for an edit format: every tool stays callable, and the format's own edit
/// tool is offered before the other edit tools, whose schemas come last. The prompt teaches
/// the format; a model that calls another edit tool still gets its edit made.
pub fn registry_for(arm: Arm, registry: Registry) -> Registry {
    match arm {
        Arm::SearchReplace => registry.with_last(&["ws_patch"]),
        Arm::UnifiedDiff => registry.with_last(&["ws_edit"]),
        Arm::WholeFile => registry.with_last(&["ws_edit", "ws_patch"]),
    }
}

/// The tools described in the prompt, for a server that refuses the API's `tools` (text
/// mode): one line per tool — its name, its parameters (`?` when optional) and the first
/// sentence of its description — and the one call format the model is asked to write, which
/// the text parser reads like every other.
pub fn text_tools(registry: &Registry) -> String {
    let mut out = String::from(
        "\n\nTools. Call exactly one per turn by writing it like this, with the arguments as JSON, and nothing after it:\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"calc.py\"}}</tool_call>\n",
    );
    for spec in registry.specs() {
        let params: Vec<String> = spec
            .params
            .iter()
            .map(|p| format!("{}{}", p.name, if p.required { "" } else { "?" }))
            .collect();
        let description = spec.description.trim();
        let first = match description.find(". ") {
            Some(i) => &description[..=i],
            None => description,
        };
        out.push_str(&format!(
            "- {} {{{}}}: {}\n",
            spec.name,
            params.join(", "),
            first
        ));
    }
    out
}

/// The tools in the OpenAI `tools` format.
pub fn tool_definitions(registry: &Registry) -> Vec<Value> {
    registry
        .specs()
        .map(|s| {
            json!({
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.schema(),
                }
            })
        })
        .collect()
}

/// The project's instructions to agents (AGENTS.md, CLAUDE.md, .slmcode/AGENTS.md), read
/// through the jail and held to [`MAX_INSTRUCTION_CHARS`] in all.
pub fn project_instructions(jail: &Jail) -> Option<String> {
    let mut out = String::new();
    for name in INSTRUCTION_FILES {
        let Ok(path) = RelPath::parse(name, jail.root()) else {
            continue;
        };
        // Through the size bound: a 1 GiB (sparse) file is not read, only left out.
        let Ok(bytes) =
            slmcode_aci::fsx::read_bounded(jail, &path, slmcode_aci::readback::CONTROL_MAX_BYTES)
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let room = MAX_INSTRUCTION_CHARS.saturating_sub(out.chars().count());
        if room < 200 {
            out.push_str(&format!("\n[{name} not shown: the instructions budget is used up; ws_read {name} if you need it]\n"));
            continue;
        }
        out.push_str(&format!("From {name}:\n"));
        if text.chars().count() > room {
            let cut: String = text.chars().take(room).collect();
            out.push_str(&cut);
            out.push_str(&format!(
                "\n[{name} cut at {room} characters; ws_read {name} for the rest]\n"
            ));
        } else {
            out.push_str(text);
            out.push('\n');
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The first user message: the task, then the project's instructions and the skills.
pub fn task_message(
    task: &str,
    instructions: Option<&str>,
    map: Option<&str>,
    skills: Option<&str>,
) -> String {
    let mut text = format!("Task: {}\n", task.trim());
    if let Some(i) = instructions {
        text.push_str("\nProject instructions:\n");
        text.push_str(i.trim_end());
        text.push('\n');
    }
    if let Some(m) = map {
        text.push('\n');
        text.push_str(m.trim_end());
        text.push('\n');
    }
    if let Some(s) = skills {
        text.push('\n');
        text.push_str(s.trim_end());
        text.push('\n');
    }
    text
}

/// The repo map a task starts with: the definitions the task and the project instructions
/// point at, ranked over the project's symbol index, within `tokens` ([`map_tokens`]).
/// `None` when `tokens` is 0 or the project has no indexed code. Shared by `slmcode run` and `slmcode map`, so the map printed is the map sent.
pub fn repo_map(
    ws: &mut Workspace,
    task: &str,
    instructions: Option<&str>,
    tokens: usize,
) -> Option<RepoMap> {
    repo_map_within(ws, task, instructions, tokens, &[])
}

/// [`repo_map`] restricted to the files `within` names and their neighbours (a plan step's
/// files); empty: the whole project.
pub fn repo_map_within(
    ws: &mut Workspace,
    task: &str,
    instructions: Option<&str>,
    tokens: usize,
    within: &[String],
) -> Option<RepoMap> {
    if tokens == 0 {
        return None;
    }
    let Workspace {
        jail,
        session,
        control,
        ..
    } = ws;
    session.symbols.refresh(jail, control);
    let context: Vec<&str> = std::iter::once(task).chain(instructions).collect();
    symbols::map::build_within(
        &session.symbols,
        jail,
        &context,
        &|text| map_tokens(text) <= tokens,
        within,
    )
}

/// Tokens of a rendered map, counted at 2.8 characters a token rather than the loop's 3.5:
/// an outline's `%6d|` gutters and indentation tokenize densely (3.0 characters a cl100k
/// token measured on the benchmark's maps), and the budget is a promise.
pub fn map_tokens(text: &str) -> usize {
    (text.chars().count() * 10).div_ceil(28)
}

/// The tokens a repo map gets: the configured amount, but never more than an eighth of the
/// context window (the default, 1,024, is that eighth of an 8K context).
pub fn repo_map_budget(configured: usize, context_window: usize) -> usize {
    configured.min(context_window / 8)
}

/// The message that continues a finished run with a new instruction (`slmcode run --resume`).
/// The conversation above it is the earlier task, kept as the model saw it.
pub fn follow_up_message(task: &str, skills: Option<&str>) -> String {
    let mut text = format!(
        "Follow-up task: {}\nIt continues the work above. Files may have changed since: a tool tells you when one must be read again. One tool call per turn; when done, reply with the final JSON.\n",
        task.trim()
    );
    if let Some(s) = skills {
        text.push('\n');
        text.push_str(s.trim_end());
        text.push('\n');
    }
    text
}

/// The question a `done` gets when the model tried edits in this task and none changed a
/// file: small models often answer done after a refused edit.
pub const NOTHING_CHANGED: &str = "Nothing changed — is the task done? Your edits in this task did not change any file. If the task needs no change, answer again with the final JSON and say why in notes; otherwise make the change.";

/// What the model is told after its thinking was stopped at the budget.
pub const THINK_BUDGET_SPENT: &str = "Your thinking reached its budget, so it was stopped; your notes are above. Do not think further: answer now with one tool call, or with the final JSON if you are done.";

/// The note added to a request when few turns are left.
pub fn turns_left_warning(left: usize) -> String {
    format!(
        "You have {left} turn{} left. Finish the change now; if it is done, reply with the final JSON instead of another tool call.",
        if left == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_carries_the_contract_the_example_and_the_repair() {
        let p = system_prompt(Arm::SearchReplace);
        for needle in [
            "ONE tool call per turn",
            "byte-for-byte",
            "never put it in old_str",
            "2-3 surrounding lines",
            "Never rewrite the file with ws_write",
            "Example:",
            "Repair:",
            "\"status\":\"done\"",
        ] {
            assert!(p.contains(needle), "{needle}");
        }
    }

    #[test]
    fn the_prompt_and_coding_schemas_fit_the_budget() {
        let bpe = tiktoken_rs::cl100k_base().unwrap();
        // Every edit format with its tools, and with the whole coding set.
        let mut sets: Vec<(Arm, Registry)> = Arm::ALL
            .iter()
            .map(|a| (*a, registry_for(*a, Registry::coding())))
            .collect();
        sets.extend(Arm::ALL.iter().map(|a| (*a, Registry::coding())));
        for (arm, registry) in sets {
            let tools = serde_json::to_string(&tool_definitions(&registry)).unwrap();
            let n = bpe.encode_with_special_tokens(&system_prompt(arm)).len()
                + bpe.encode_with_special_tokens(&tools).len();
            eprintln!(
                "{arm} with {} tools: {n} cl100k tokens",
                registry.names().len()
            );
            assert!(
                n <= PROMPT_TOKEN_BUDGET,
                "{arm}: system prompt + schemas = {n} tokens"
            );
            // Text mode: the same tools described in the prompt, no schemas sent.
            let text = format!("{}{}", system_prompt(arm), text_tools(&registry));
            let n = bpe.encode_with_special_tokens(&text).len();
            eprintln!("{arm} in text mode: {n} cl100k tokens");
            assert!(n <= PROMPT_TOKEN_BUDGET, "{arm} in text mode = {n} tokens");
        }
    }

    #[test]
    fn text_mode_names_every_tool_its_parameters_and_the_call_format() {
        let registry = Registry::coding();
        let text = text_tools(&registry);
        assert!(text.contains("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"calc.py\"}}</tool_call>"));
        for name in registry.names() {
            assert!(text.contains(&format!("\n- {name} {{")), "{name}: {text}");
        }
        assert!(
            text.contains("- ws_edit {path, old_str?, new_str, replace_all?}: Replace old_str"),
            "{text}"
        );
    }

    #[test]
    fn each_format_offers_its_edit_tool_first_and_keeps_the_others() {
        let position = |names: &[&str], tool: &str| names.iter().position(|n| *n == tool);
        for (arm, tool, other) in [
            (Arm::SearchReplace, "ws_edit", "ws_patch"),
            (Arm::UnifiedDiff, "ws_patch", "ws_edit"),
        ] {
            let names = registry_for(arm, Registry::coding()).names();
            assert!(
                position(&names, tool) < position(&names, other)
                    && position(&names, other).is_some(),
                "{arm}: {names:?}"
            );
            assert_eq!(names.last(), Some(&other), "{arm}: {names:?}");
            assert!(system_prompt(arm).contains(&format!("{tool} {{\"path\":\"calc.py\"")));
        }
        let names = registry_for(Arm::WholeFile, Registry::coding()).names();
        assert_eq!(
            &names[names.len() - 2..],
            ["ws_edit", "ws_patch"],
            "{names:?}"
        );
        assert!(names.contains(&"ws_write"));
        assert!(
            system_prompt(Arm::WholeFile).contains("ws_write {\"path\":\"calc.py\",\"content\"")
        );
    }

    #[test]
    fn instructions_are_read_in_order_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("AGENTS.md"),
            "Run cargo test before you finish.\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join(".slmcode")).unwrap();
        std::fs::write(dir.path().join(".slmcode/AGENTS.md"), "x".repeat(10_000)).unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let text = project_instructions(&jail).unwrap();
        assert!(text.starts_with("From AGENTS.md:\nRun cargo test"));
        assert!(text.contains("[.slmcode/AGENTS.md cut at"), "{text}");
        assert!(text.chars().count() < MAX_INSTRUCTION_CHARS + 300);
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            project_instructions(&Jail::open(empty.path()).unwrap()),
            None
        );
    }
}
