//! The user's approvals of a project's own control files — `.slmcode/hooks.json` (its hooks
//! run) and `.slmcode/config.yaml` (it may loosen safety settings). A repository carries these
//! files with it, so they count only for the exact content the user approved: the file's BLAKE3
//! hash per project root, kept in the user's config directory. Any change to the file withdraws
//! the approval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One kind of approval, kept in its own file.
#[derive(Clone, Copy, Debug)]
pub struct Approvals {
    file: &'static str,
}

impl Approvals {
    /// `slmcode hooks trust`.
    pub const HOOKS: Approvals = Approvals {
        file: "trusted-hooks.json",
    };
    /// `slmcode config trust`.
    pub const CONFIG: Approvals = Approvals {
        file: "trusted-configs.json",
    };

    fn path(&self) -> Option<PathBuf> {
        crate::user_config::config_dir().map(|d| d.join(self.file))
    }

    /// Whether the user approved this content (`hash`) for this project.
    pub fn is_approved(&self, root: &Path, hash: &str) -> bool {
        self.path().is_some_and(|p| {
            read(&p)
                .get(&root.display().to_string())
                .map(String::as_str)
                == Some(hash)
        })
    }

    /// Records (or with `None`, removes) the approval for this project. Returns whether
    /// anything changed.
    pub fn set(&self, root: &Path, hash: Option<&str>) -> Result<bool, String> {
        let path = self
            .path()
            .ok_or("no HOME, so there is nowhere to keep the approval")?;
        let mut map = read(&path);
        let key = root.display().to_string();
        let changed = match hash {
            Some(h) => map.insert(key, h.to_string()).as_deref() != Some(h),
            None => map.remove(&key).is_some(),
        };
        let text = serde_json::to_vec_pretty(&map).map_err(|e| e.to_string())?;
        slmcode_aci::fsx::save_private(&path, &text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(changed)
    }
}

/// The approvals in `path`; none when it is missing, unreadable or over the size bound (then
/// nothing is approved, which only asks for an approval again).
fn read(path: &Path) -> BTreeMap<String, String> {
    slmcode_aci::readback::read_path(path, slmcode_aci::readback::CONTROL_MAX_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}
