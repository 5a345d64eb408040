//! ws_list: one directory's entries, sorted, directories marked with `/`, `.git` skipped.
//! Never an empty string: an empty or missing directory is said in words.

use std::borrow::Cow;

use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::path::PathError;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, ANY_PATH_ALIASES};
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::workspace::Workspace;

pub struct ListTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_list",
    description: Cow::Borrowed("List one directory; subdirectories end with \"/\"."),
    params: &[Param {
        name: "path",
        kind: Kind::String,
        required: false,
        description: "directory (default: the project root)",
        aliases: ANY_PATH_ALIASES,
    }],
    example: "{\"path\":\"src\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "List a subdirectory with ws_list {\"path\":…}, or find files by name with ws_glob.",
};

impl Tool for ListTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = ws.jail.parse_or_root(args.str("path"))?;
        let entries = match ws.jail.read_dir(&path) {
            Ok(entries) => entries,
            Err(e) => {
                // Reading a file as a directory fails in several ways; ask what the path is.
                if ws.jail.metadata(&path).is_ok_and(|m| !m.is_dir()) {
                    return Err(ToolError::refused(RefusalClass::Other, format!(
                        "{path} is a file, not a directory. Read it with ws_read {{\"path\":\"{path}\"}}, or list its directory with ws_list {{\"path\":\"{}\"}}.",
                        path.parent()
                    )));
                }
                if let PathError::NotFound { .. } = e {
                    let similar = similar_paths(&ws.jail, &path, Want::Dir);
                    return Err(ToolError::refused(RefusalClass::NotFound, format!(
                        "no such directory: {path}.{} List the parent with ws_list {{\"path\":\"{}\"}} or find it with ws_glob {{\"pattern\":\"**/{}\"}}.",
                        did_you_mean(&similar),
                        path.parent(),
                        path.file_name()
                    )));
                }
                return Err(e.into());
            }
        };

        let mut names: Vec<String> = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| {
                ToolError::refused(RefusalClass::Io, format!("listing {path} failed: {e}"))
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            let child = path.join(&name);
            let kind = entry.file_type().ok();
            let shown = if kind.is_some_and(|t| t.is_dir()) {
                format!("{name}/")
            } else if kind.is_some_and(|t| t.is_symlink()) {
                // Where the link leads, as far as the jail lets us see.
                match ws.jail.metadata(&child) {
                    Ok(m) if m.is_dir() => format!("{name}/ (symlink)"),
                    Ok(_) => format!("{name} (symlink)"),
                    Err(PathError::Escapes { .. }) => {
                        format!("{name} (symlink leading outside the project)")
                    }
                    Err(_) => format!("{name} (broken symlink)"),
                }
            } else {
                name
            };
            names.push(shown);
        }
        if names.is_empty() {
            return Ok(format!("({path} is an empty directory)").into());
        }
        names.sort();
        let dirs = names.iter().filter(|n| n.contains('/')).count();
        let mut out = names.join("\n");
        out.push_str(&format!(
            "\n({} entries in {path}: {} files, {dirs} directories)",
            names.len(),
            names.len() - dirs
        ));
        Ok(out.into())
    }
}
