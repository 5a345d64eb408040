//! Skills: `SKILL.md` files of know-how (front matter `name`, `description`, optional
//! `triggers`) from the project's `.slmcode/skills/` and the user's `~/.config/slmcode/skills/`.
//! Several behavioural directives at once degrade a small model's instruction following, so
//! matched skills are shown as cards (name + description) and at most
//! [`MAX_EXPANDED`] bodies are expanded; `ws_skill {"name"}` pulls any body on demand.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use slmcode_aci::boundary::layout;
use slmcode_aci::path::Jail;
use slmcode_aci::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolError, ToolSpec};
use slmcode_aci::RefusalClass;
use slmcode_aci::Workspace;

/// The most skill bodies put in the prompt at once.
pub const MAX_EXPANDED: usize = 2;

/// The most characters of one skill body in the prompt or a ws_skill result.
pub const MAX_BODY_CHARS: usize = 4000;

/// One skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Words or phrases that make the skill relevant to a task (case-insensitive).
    pub triggers: Vec<String>,
    pub body: String,
    /// Where it came from, for messages.
    pub origin: String,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: String,
    description: String,
    #[serde(default)]
    triggers: Vec<String>,
}

/// Reads one SKILL.md text; `None` with a reason when it lacks the front matter.
pub fn parse_skill(text: &str, origin: &str) -> Result<Skill, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| {
            format!("{origin}: no front matter (start the file with ---, name:, description:, ---)")
        })?;
    let end = rest
        .find("\n---")
        .ok_or_else(|| format!("{origin}: the front matter is not closed with ---"))?;
    let (yaml, body) = rest.split_at(end);
    let body = body
        .trim_start_matches("\n---")
        .trim_start_matches(['\r', '\n'])
        .trim_end()
        .to_string();
    let fm: FrontMatter =
        serde_saphyr::from_str(yaml).map_err(|e| format!("{origin}: front matter: {e}"))?;
    let name = fm.name.trim().to_string();
    if name.is_empty() {
        return Err(format!("{origin}: the skill has an empty name"));
    }
    Ok(Skill {
        name,
        description: fm.description.trim().to_string(),
        triggers: fm.triggers,
        body,
        origin: origin.to_string(),
    })
}

/// Loads the user's skills in `dir` (`NAME/SKILL.md` and `NAME.md` files), skipping unreadable
/// ones with a warning each.
pub fn load_user_dir(dir: &Path, warnings: &mut Vec<String>) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let names: Vec<(String, bool)> = entries
        .flatten()
        .map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect();
    collect(names, warnings, |rel| {
        let p = dir.join(rel);
        slmcode_aci::readback::read_path(&p, slmcode_aci::readback::CONTROL_MAX_BYTES)
            .map(|b| {
                (
                    p.display().to_string(),
                    String::from_utf8_lossy(&b).into_owned(),
                )
            })
            .map_err(|e| Unread {
                missing: e.kind() == std::io::ErrorKind::NotFound,
                message: format!("{}: {e}", p.display()),
            })
    })
}

/// Loads the project's skills from `.slmcode/skills/`, through the jail like every project
/// read (a symlink there cannot bring a file from outside the project into the prompt).
pub fn load_project(jail: &Jail, warnings: &mut Vec<String>) -> Vec<Skill> {
    let dir = layout::path(layout::SKILLS);
    let Ok(entries) = jail.read_dir(&dir) else {
        return Vec::new();
    };
    let names: Vec<(String, bool)> = entries
        .flatten()
        .map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect();
    collect(names, warnings, |rel| {
        let shown = format!(".slmcode/skills/{rel}");
        let unread = |e: ToolError| Unread {
            missing: e.class() == RefusalClass::NotFound,
            message: e.to_string(),
        };
        let path = jail.parse(&shown).map_err(|e| unread(e.into()))?;
        let bytes =
            slmcode_aci::fsx::read_bounded(jail, &path, slmcode_aci::readback::CONTROL_MAX_BYTES)
                .map_err(unread)?;
        Ok((shown, String::from_utf8_lossy(&bytes).into_owned()))
    })
}

/// Why a skill file could not be read: whether it is simply not there (a directory without a
/// SKILL.md is not a skill), and the words for a warning.
struct Unread {
    missing: bool,
    message: String,
}

/// Reads `NAME/SKILL.md` for each directory and `NAME.md` for each file, in name order.
fn collect(
    mut names: Vec<(String, bool)>,
    warnings: &mut Vec<String>,
    read: impl Fn(&str) -> Result<(String, String), Unread>,
) -> Vec<Skill> {
    names.sort();
    let mut skills = Vec::new();
    for (name, is_dir) in names {
        let rel = if is_dir {
            format!("{name}/SKILL.md")
        } else if name.ends_with(".md") {
            name
        } else {
            continue;
        };
        match read(&rel) {
            Ok((origin, text)) => match parse_skill(&text, &origin) {
                Ok(s) => skills.push(s),
                Err(e) => warnings.push(e),
            },
            // A directory without a SKILL.md is not a skill; say so only for real read errors.
            Err(e) if is_dir && e.missing => {}
            Err(e) => warnings.push(e.message),
        }
    }
    skills
}

/// The project's skills, then the user's; a project skill wins over a user skill of the same
/// name.
pub fn load(jail: &Jail, user_dir: Option<&Path>, warnings: &mut Vec<String>) -> Vec<Skill> {
    let mut skills = load_project(jail, warnings);
    if let Some(dir) = user_dir {
        for s in load_user_dir(dir, warnings) {
            if !skills.iter().any(|x| x.name == s.name) {
                skills.push(s);
            }
        }
    }
    skills
}

/// How strongly a skill matches a task: triggers found in it, and its name.
fn score(skill: &Skill, task: &str) -> usize {
    let task = task.to_lowercase();
    let mut n = skill
        .triggers
        .iter()
        .filter(|t| !t.trim().is_empty() && task.contains(&t.trim().to_lowercase()))
        .count();
    let name = skill.name.to_lowercase().replace(['-', '_'], " ");
    if task.contains(&name) || task.contains(&skill.name.to_lowercase()) {
        n += 1;
    }
    n
}

/// The skills section of the first message: cards for the matched skills, up to
/// [`MAX_EXPANDED`] bodies of the best matches, and the names of the others.
pub fn render(skills: &[Skill], task: &str) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut matched: Vec<(usize, &Skill)> = skills
        .iter()
        .map(|s| (score(s, task), s))
        .filter(|(n, _)| *n > 0)
        .collect();
    matched.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let mut text = String::new();
    if !matched.is_empty() {
        text.push_str("Skills that fit this task:\n");
        for (i, (_, s)) in matched.iter().enumerate() {
            text.push_str(&format!("- {}: {}\n", s.name, s.description));
            if i < MAX_EXPANDED {
                text.push_str(&indent(&capped_body(s)));
            }
        }
    }
    let others: Vec<&str> = skills
        .iter()
        .filter(|s| !matched.iter().any(|(_, m)| m.name == s.name))
        .map(|s| s.name.as_str())
        .collect();
    if !others.is_empty() {
        text.push_str(&format!(
            "Other skills (ws_skill {{\"name\": …}} shows one): {}\n",
            others.join(", ")
        ));
    } else if matched.len() > MAX_EXPANDED {
        text.push_str("ws_skill {\"name\": …} shows the body of a skill listed without one.\n");
    }
    Some(text)
}

fn capped_body(s: &Skill) -> String {
    if s.body.chars().count() <= MAX_BODY_CHARS {
        return s.body.clone();
    }
    let cut: String = s.body.chars().take(MAX_BODY_CHARS).collect();
    format!(
        "{cut}\n[skill {} cut at {MAX_BODY_CHARS} characters]",
        s.name
    )
}

fn indent(body: &str) -> String {
    body.lines().map(|l| format!("    {l}\n")).collect()
}

const SKILL_PARAMS: &[Param] = &[Param {
    name: "name",
    kind: Kind::String,
    required: true,
    description: "the skill's name",
    aliases: &["skill", "skill_name"],
}];

/// `ws_skill`: a skill's full body on demand. Registered by the harness when skills exist.
pub struct SkillTool {
    spec: ToolSpec,
    skills: Vec<Skill>,
}

impl SkillTool {
    pub fn new(skills: Vec<Skill>) -> SkillTool {
        SkillTool {
            spec: ToolSpec {
                name: "ws_skill",
                description: Cow::Borrowed("Show the full text of a skill by name."),
                params: SKILL_PARAMS,
                example: "{\"name\":\"atomic-coding\"}",
                effect: Effect::READ_ONLY,
                rest_hint: "",
                passes_unknown_args: false,
            },
            skills,
        }
    }
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run(&self, _ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let want = args.str("name").unwrap_or_default().trim();
        match self
            .skills
            .iter()
            .find(|s| s.name == want || s.name.eq_ignore_ascii_case(want))
        {
            Some(s) => Ok(Reply::from(format!(
                "{}: {}\n\n{}",
                s.name,
                s.description,
                capped_body(s)
            ))),
            None => Err(ToolError::refused(
                RefusalClass::NotFound,
                format!(
                    "no skill \"{want}\". Skills: {}",
                    self.skills
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, triggers: &[&str]) -> Skill {
        Skill {
            name: name.into(),
            description: format!("about {name}"),
            triggers: triggers.iter().map(|t| t.to_string()).collect(),
            body: format!("BODY OF {name}"),
            origin: "test".into(),
        }
    }

    #[test]
    fn front_matter_is_read() {
        let s = parse_skill(
            "---\nname: atomic-coding\ndescription: small steps\ntriggers: [refactor, rename]\n---\n\nDo one thing at a time.\n",
            "x",
        )
        .unwrap();
        assert_eq!(s.name, "atomic-coding");
        assert_eq!(s.triggers, vec!["refactor", "rename"]);
        assert_eq!(s.body, "Do one thing at a time.");
        assert!(parse_skill("no front matter", "x")
            .unwrap_err()
            .contains("no front matter"));
        assert!(parse_skill("---\nname: a\n", "x")
            .unwrap_err()
            .contains("not closed"));
        assert!(parse_skill("---\ndescription: d\n---\nb", "x").is_err());
    }

    #[test]
    fn matched_skills_are_cards_and_two_bodies_at_most() {
        let skills = vec![
            skill("testing", &["test"]),
            skill("rename", &["rename", "move"]),
            skill("flags", &["flag"]),
            skill("docs", &["readme"]),
        ];
        let text = render(&skills, "rename the flag and move the test").unwrap();
        assert!(text.contains("- rename: about rename"));
        assert!(text.contains("- testing: about testing") && text.contains("- flags: about flags"));
        assert_eq!(text.matches("BODY OF").count(), MAX_EXPANDED, "{text}");
        // The best match (two triggers) is expanded first.
        assert!(
            text.find("BODY OF rename") < text.find("- testing"),
            "{text}"
        );
        assert!(text.contains("Other skills (ws_skill {\"name\": …} shows one): docs"));
        assert_eq!(render(&[], "x"), None);
    }

    #[test]
    fn ws_skill_gives_a_body_or_the_list() {
        let tool = SkillTool::new(vec![skill("testing", &[]), skill("docs", &[])]);
        let dir = tempfile::tempdir().unwrap();
        let mut ws = Workspace::open(dir.path(), slmcode_aci::Config::default()).unwrap();
        let registry = slmcode_aci::Registry::coding().with(std::sync::Arc::new(tool));
        let r = registry.call(&mut ws, "ws_skill", &serde_json::json!({"name": "docs"}));
        assert!(!r.is_error && r.text.contains("BODY OF docs"), "{}", r.text);
        let r = registry.call(&mut ws, "ws_skill", &serde_json::json!({"name": "nope"}));
        assert!(
            r.is_error && r.text.contains("no skill \"nope\". Skills: testing, docs"),
            "{}",
            r.text
        );
    }

    #[test]
    fn project_skills_win_and_bad_files_warn() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let dir = project.path().join(".slmcode/skills/testing");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: testing\ndescription: project\n---\nP",
        )
        .unwrap();
        std::fs::write(
            user.path().join("testing.md"),
            "---\nname: testing\ndescription: user\n---\nU",
        )
        .unwrap();
        std::fs::write(
            user.path().join("other.md"),
            "---\nname: other\ndescription: o\n---\nO",
        )
        .unwrap();
        std::fs::write(user.path().join("broken.md"), "nothing").unwrap();
        let mut warnings = Vec::new();
        let jail = Jail::open(project.path()).unwrap();
        let skills = load(&jail, Some(user.path()), &mut warnings);
        let names: Vec<(&str, &str)> = skills
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(names, vec![("testing", "project"), ("other", "o")]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        // A symlink out of the project is not followed.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("secret.md"),
            "---\nname: secret\ndescription: s\n---\nS",
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            project.path().join(".slmcode/skills/secret.md"),
        )
        .unwrap();
        let mut warnings = Vec::new();
        let skills = load(&jail, None, &mut warnings);
        assert!(skills.iter().all(|s| s.name != "secret"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }
}
