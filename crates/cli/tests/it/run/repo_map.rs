//! The repo map in the task message: the definitions the task names come first, the map stays
//! within its budget, `repo_map_tokens: 0` turns it off, and `slmcode map` prints exactly what
//! the model got.

use super::*;

/// A project of many Python modules, one of which defines what the task is about.
fn project() -> Project {
    let p = Project::new();
    for m in 0..40 {
        let body: String = (0..8)
            .map(|f| format!("def helper_{m}_{f}(x):\n    return x + {f}\n\n"))
            .collect();
        p.write(&format!("pkg/module_{m}.py"), body);
    }
    p.write(
        "billing/invoice.py",
        "from pkg.module_1 import helper_1_0\n\n\nclass Invoice:\n    def total(self):\n        return compute_vat(self.net)\n\n\ndef compute_vat(net):\n    return helper_1_0(net) * 0.2\n",
    );
    p
}

const TASK: &str = "compute_vat rounds the wrong way; fix it";

fn first_task_message(model: &FakeModel) -> String {
    model.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The map block of a task message: from its header to the end of the message.
fn map_block(message: &str) -> &str {
    let at = message.find("Repo map (").expect("a repo map");
    message[at..].trim_end()
}

#[test]
fn a_run_starts_at_the_definition_the_task_names_within_the_budget() {
    let p = project();
    let model = FakeModel::start(vec![Scripted::final_done("looked")]);
    let r = run_with(&p, &model, TASK, &[], &[("SLMCODE_REPO_MAP_TOKENS", "200")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let message = first_task_message(&model);
    let map = map_block(&message);
    // The file defining the named function is the first file of the map, with the function.
    let first_file = map.lines().nth(1).unwrap();
    assert_eq!(first_file, "billing/invoice.py:", "{map}");
    assert!(map.contains("|def compute_vat(net):"), "{map}");
    // 200 tokens at the map's 2.8 characters a token, and far from all 321 definitions.
    assert!(map.chars().count() * 10 / 28 <= 200, "{} chars", map.len());
    assert!(map.lines().count() < 40, "{map}");

    // `slmcode map` prints what the model got.
    let (code, out, _) = p.cli("map", &[TASK, "--tokens", "200"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim_end(), map);
}

#[test]
fn repo_map_tokens_zero_sends_no_map() {
    let p = project();
    let model = FakeModel::start(vec![Scripted::final_done("looked")]);
    let r = run_with(&p, &model, TASK, &[], &[("SLMCODE_REPO_MAP_TOKENS", "0")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!first_task_message(&model).contains("Repo map"));
    // The default map fits the default budget and names the function too.
    let model = FakeModel::start(vec![Scripted::final_done("looked")]);
    let r = run(&p, &model, TASK);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let message = first_task_message(&model);
    let map = map_block(&message);
    assert!(map.contains("|def compute_vat(net):"), "{map}");
    assert!(map.chars().count() * 10 / 28 <= 1024);
}
