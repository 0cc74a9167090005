//! Where a tool's `path` argument points: relative paths resolve against the project root, `..` is
//! normalised, symlinks of the longest existing prefix are resolved, and (unless the session runs in
//! `bypass` mode) the result must stay inside the canonical project root.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::{ToolContext, ToolError};

/// Resolves `raw` for a file tool. The returned path is absolute with every existing component's
/// symlinks resolved, so it is also the key recorded in `ctx.read_files`.
pub fn resolve(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    if raw.trim().is_empty() {
        return Err(ToolError::failed(
            "path is empty; give a file path relative to the project root or an absolute path",
        ));
    }
    let root = canonical_root(ctx)?;
    let resolved = resolve_under(&root, raw)
        .map_err(|e| ToolError::failed(format!("cannot resolve path {raw}: {e}")))?;
    let added = ctx.extra_roots.iter().any(|dir| resolved.starts_with(dir));
    if ctx.confine_to_root && !resolved.starts_with(&root) && !added {
        return Err(ToolError::failed(format!(
            "path {raw} is outside the project root {}; file tools only work inside the project \
             and the --add-dir directories (use a path under the root, or run ling with \
             --add-dir DIR or --permission-mode bypass)",
            root.display()
        )));
    }
    Ok(resolved)
}

/// [`resolve`] for a read: a background command's output file (in the session's temp dir) may
/// be read too, wherever it is.
pub fn resolve_readable(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    if let Some(shells) = &ctx.shells
        && let Ok(root) = canonical_root(ctx)
        && let Ok(resolved) = resolve_under(&root, raw)
        && shells.holds_file(&resolved)
    {
        return Ok(resolved);
    }
    resolve(ctx, raw)
}

/// `raw` resolved against `root` (already canonical) exactly as the file tools resolve it, but
/// without the confinement check: permission rules match on this path, so a symlink or `..`
/// cannot dodge them.
pub fn resolve_under(root: &Path, raw: &str) -> io::Result<PathBuf> {
    resolve_lenient(&root.join(expand_home(raw)))
}

/// An absolute path with `..` applied and the symlinks of its existing part resolved.
pub fn resolve_lenient(path: &Path) -> io::Result<PathBuf> {
    resolve_existing_prefix(&normalize(path))
}

/// The project root with its symlinks resolved, which is what resolved paths are compared with.
pub fn canonical_root(ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    std::fs::canonicalize(&ctx.root).map_err(|e| {
        ToolError::failed(format!(
            "the project root {} cannot be resolved: {e}",
            ctx.root.display()
        ))
    })
}

/// How a path is shown to the model and the user: relative to the root when inside it.
pub fn display(ctx: &ToolContext, path: &Path) -> String {
    let root = std::fs::canonicalize(&ctx.root).unwrap_or_else(|_| ctx.root.clone());
    match path.strip_prefix(&root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Models sometimes write `~/x`; a literal `~` directory is rarer than that intent.
pub fn expand_home(raw: &str) -> PathBuf {
    match (raw.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(raw),
    }
}

/// Removes `.` and applies `..` lexically (an absolute path never climbs above `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalises the longest prefix of `path` that exists and appends the rest unchanged, so a
/// file about to be created under an existing directory still resolves.
fn resolve_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(canonical) => {
                let mut resolved = canonical;
                resolved.extend(rest.iter().rev());
                return Ok(resolved);
            }
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.kind() == io::ErrorKind::NotADirectory =>
            {
                let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                    return Err(e);
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(dir.to_path_buf())
    }

    #[test]
    fn relative_paths_resolve_against_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            resolve(&ctx(dir.path()), "a.txt").unwrap(),
            root.join("a.txt")
        );
        assert_eq!(
            resolve(&ctx(dir.path()), "./sub/../a.txt").unwrap(),
            root.join("a.txt")
        );
    }

    #[test]
    fn a_new_file_under_new_dirs_resolves() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            resolve(&ctx(dir.path()), "new/deeper/f.rs").unwrap(),
            root.join("new/deeper/f.rs")
        );
    }

    #[test]
    fn dotdot_and_absolute_paths_outside_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve(&ctx(dir.path()), "../x").unwrap_err().to_string();
        assert!(err.contains("outside the project root"), "{err}");
        let err = resolve(&ctx(dir.path()), "/etc/passwd")
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside the project root"), "{err}");
    }

    #[test]
    fn a_symlink_pointing_out_is_refused_unless_unconfined() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let err = resolve(&ctx(dir.path()), "link/new.txt")
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside the project root"), "{err}");
        let mut free = ctx(dir.path());
        free.confine_to_root = false;
        let resolved = resolve(&free, "link/new.txt").unwrap();
        assert_eq!(
            resolved,
            std::fs::canonicalize(outside.path())
                .unwrap()
                .join("new.txt")
        );
    }

    #[test]
    fn display_is_relative_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let p = resolve(&c, "src/main.rs").unwrap();
        assert_eq!(display(&c, &p), "src/main.rs");
        assert_eq!(display(&c, Path::new("/elsewhere/x")), "/elsewhere/x");
    }
}
