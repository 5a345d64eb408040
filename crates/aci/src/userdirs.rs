//! The user's own directories (the XDG base directories, the same layout on every Unix): where
//! slmcode keeps what belongs to the user and never to a project — the state key, learned
//! settings, approvals, the user's config. A repository cannot write there, which is why what
//! lives there may vouch for what lives in a project.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// An XDG base directory: the variable's value when it is absolute (the XDG rule), else
/// `$HOME/<fallback>`; `None` without either.
pub fn base_dir_from(
    xdg: Option<OsString>,
    home: Option<OsString>,
    fallback: &str,
) -> Option<PathBuf> {
    match xdg {
        Some(v) if Path::new(&v).is_absolute() => Some(PathBuf::from(v)),
        _ => home
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(fallback)),
    }
}

/// slmcode's data directory: `$XDG_DATA_HOME/slmcode`, else `~/.local/share/slmcode`.
pub fn data_dir() -> Option<PathBuf> {
    base_dir_from(
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
        ".local/share",
    )
    .map(|d| d.join("slmcode"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_wins_when_absolute_else_home() {
        let d = |x: Option<&str>, h: Option<&str>| {
            base_dir_from(x.map(Into::into), h.map(Into::into), ".local/share")
        };
        assert_eq!(d(Some("/x"), Some("/h")), Some(PathBuf::from("/x")));
        assert_eq!(
            d(Some("rel"), Some("/h")),
            Some(PathBuf::from("/h/.local/share"))
        );
        assert_eq!(d(None, Some("")), None);
        assert_eq!(d(None, None), None);
    }
}
