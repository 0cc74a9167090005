//! `sandbox` of `settings.json` and `--sandbox`: what the shell sandbox of `docs/tools.md`
//! allows. Only the settings live here; whether the kernel can enforce them, and the enforcing
//! itself, are `process::sandbox`'s.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

super::spelled::spelled_enum! {
    /// How much a sandboxed command may write (`--sandbox`, settings `sandbox.mode`).
    pub enum SandboxMode ("sandbox mode") {
        /// No sandbox: every command asks as without one (Codex: danger-full-access)
        Off = "off" | "danger-full-access",
        /// Write in the project root (not its .git/ and .ling/), the temp dir and
        /// sandbox.writableRoots
        WorkspaceWrite = "workspace-write",
        /// Write nowhere (but /dev/null and the like)
        ReadOnly = "read-only",
    }
}

/// `sandbox` of `settings.json` as written.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "Sandbox")]
pub struct RawSandbox {
    /// The sandbox of the `bash` tool when `--sandbox` is not given. Default `workspace-write`
    /// where the kernel has Landlock, else `off` (with a warning).
    pub mode: Option<SandboxMode>,
    /// Let sandboxed commands use the network (TCP, UDP, DNS). Default false.
    #[schemars(extend("default" = false))]
    pub network: Option<bool>,
    /// More directories sandboxed commands may write in `workspace-write` mode: absolute, `~/...`
    /// or relative to the project root.
    pub writable_roots: Option<Vec<String>>,
    /// Fail when the sandbox asked for (`--sandbox`, `mode`) cannot be enforced by this kernel.
    /// With false Ling falls back to asking for every command, with a warning. Default true.
    #[schemars(extend("default" = true))]
    pub required: Option<bool>,
    /// Run command hooks in the same sandbox as the `bash` tool. Default false.
    #[schemars(extend("default" = false))]
    pub hooks: Option<bool>,
    /// More files and directories sandboxed commands cannot read (absolute, `~/...` or relative
    /// to the project root), besides the default list of credential stores (`docs/tools.md`).
    pub deny_read: Option<Vec<String>>,
    /// Entries of the default `denyRead` list to lift (as written there, e.g. `~/.kube`).
    pub allow_read: Option<Vec<String>>,
    /// Unix sockets (or directories of them) sandboxed commands may connect to and make. Without
    /// any, sandboxed commands make no Unix sockets at all (`socketpair` still works).
    pub allow_unix_sockets: Option<Vec<String>>,
}

impl RawSandbox {
    /// The keys of this (project) file that are looser than `user`'s (the user's settings, or
    /// the default where they say nothing), for the trust listing: each as (key, value, what it
    /// does). `root` is the project root: a writable root is shown resolved, and one outside
    /// the root is shown as refused (a project cannot widen the sandbox past its own root).
    pub fn widenings(
        &self,
        user: &RawSandbox,
        root: &Path,
        home: Option<&Path>,
    ) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut add = |key: &str, value: String, effect: &str| {
            out.push((format!("sandbox.{key}"), value, effect.to_string()));
        };
        let rank = |mode: Option<SandboxMode>| match mode {
            Some(SandboxMode::ReadOnly) => 0,
            None | Some(SandboxMode::WorkspaceWrite) => 1,
            Some(SandboxMode::Off) => 2,
        };
        if let Some(mode) = self.mode {
            if mode == SandboxMode::Off {
                add(
                    "mode",
                    mode.to_string(),
                    "bash commands would run without the sandbox",
                );
            } else if rank(Some(mode)) > rank(user.mode) {
                add(
                    "mode",
                    mode.to_string(),
                    "sandboxed commands could write in the project, not only read as your \
                     settings say",
                );
            }
        }
        if self.network == Some(true) && user.network != Some(true) {
            add(
                "network",
                "true".into(),
                "sandboxed commands would reach the network",
            );
        }
        for raw in self.writable_roots.iter().flatten() {
            let Some(resolved) = project_root_entry(raw, root, home) else {
                continue;
            };
            let shown = if Path::new(raw) == resolved {
                raw.clone()
            } else {
                format!("{raw} → {}", resolved.display())
            };
            if !resolved.starts_with(canonical(root)) {
                add(
                    "writableRoots",
                    shown,
                    "refused: it is outside the project, and only your own settings can let \
                     the sandbox write there",
                );
            }
        }
        for path in self.allow_read.iter().flatten() {
            add(
                "allowRead",
                path.clone(),
                "sandboxed commands could read these credentials",
            );
        }
        for path in self.allow_unix_sockets.iter().flatten() {
            add(
                "allowUnixSockets",
                path.clone(),
                "sandboxed commands could talk to the service behind this socket",
            );
        }
        if self.required == Some(false) && user.required != Some(false) {
            add(
                "required",
                "false".into(),
                "without a usable kernel sandbox Ling would go on without one",
            );
        }
        if self.hooks == Some(false) && user.hooks == Some(true) {
            add(
                "hooks",
                "false".into(),
                "command hooks would run outside the sandbox, which your settings put them in",
            );
        }
        out
    }
}

/// A path with the symlinks of its existing part resolved (the rest appended as written).
pub fn resolve_existing(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// One `writableRoots` entry of a project, resolved against its root (`~/` against `home`);
/// `None` for an empty entry.
fn project_root_entry(raw: &str, root: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if raw.trim().is_empty() {
        return None;
    }
    let path = if raw == "~" {
        home?.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home?.join(rest)
    } else {
        root.join(raw)
    };
    Some(resolve_existing(&path))
}

/// The sandbox settings, resolved: `--sandbox` over the project's over the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `None`: the default (by what the kernel can do).
    pub mode: Option<SandboxMode>,
    /// Whether `mode` came from `--sandbox` (an error when it cannot be enforced).
    pub explicit: bool,
    pub network: bool,
    /// Absolute paths: the user's, then (after [`SandboxSettings::confine`]) the project's
    /// that lie inside its root.
    pub writable_roots: Vec<PathBuf>,
    /// The project's `writableRoots` as written, until [`SandboxSettings::confine`] takes the
    /// ones inside the project root.
    pub project_roots: Vec<String>,
    pub required: bool,
    pub hooks: bool,
    /// `denyRead` of both files (absolute; added to the defaults).
    pub deny_read: Vec<PathBuf>,
    /// `allowRead` of both files (absolute; lifted from the defaults).
    pub allow_read: Vec<PathBuf>,
    /// `allowUnixSockets` of both files (absolute).
    pub allow_unix_sockets: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: None,
            explicit: false,
            network: false,
            writable_roots: Vec::new(),
            project_roots: Vec::new(),
            required: true,
            hooks: false,
            deny_read: Vec::new(),
            allow_read: Vec::new(),
            allow_unix_sockets: Vec::new(),
        }
    }
}

/// Why the `sandbox` settings cannot be used; each message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxSettingsError {
    #[error("sandbox.{0} has an empty entry; remove it")]
    EmptyEntry(&'static str),
    #[error("sandbox.{key} {raw:?} starts with ~ but HOME is not set")]
    NoHome { key: &'static str, raw: String },
}

impl SandboxSettings {
    /// `flag` is `--sandbox`; `project` wins over `user` key by key. The user's
    /// `writableRoots` apply (relative ones against `root`, `~/` against `home`); the project's
    /// are kept for [`SandboxSettings::confine`].
    pub fn resolve(
        flag: Option<SandboxMode>,
        user: &RawSandbox,
        project: &RawSandbox,
        root: &Path,
        home: Option<&Path>,
    ) -> Result<Self, SandboxSettingsError> {
        let mode = flag.or(project.mode).or(user.mode);
        let paths = |key: &'static str, raws: &mut dyn Iterator<Item = &String>| {
            resolve_paths(key, raws, root, home)
        };
        let both = |list: fn(&RawSandbox) -> &Option<Vec<String>>| {
            [user, project]
                .into_iter()
                .flat_map(move |s| list(s).iter().flatten())
        };
        // The user's writable roots as given; the project's only once confined to its root
        // (`SandboxSettings::confine`).
        let writable_roots = paths("writableRoots", &mut user.writable_roots.iter().flatten())?;
        let project_roots = project.writable_roots.clone().unwrap_or_default();
        if project_roots.iter().any(|r| r.trim().is_empty()) {
            return Err(SandboxSettingsError::EmptyEntry("writableRoots"));
        }
        let deny_read = paths("denyRead", &mut both(|s| &s.deny_read))?;
        let allow_read = paths("allowRead", &mut both(|s| &s.allow_read))?;
        let allow_unix_sockets = paths("allowUnixSockets", &mut both(|s| &s.allow_unix_sockets))?;
        Ok(Self {
            mode,
            explicit: flag.is_some() || mode.is_some(),
            network: project.network.or(user.network).unwrap_or(false),
            writable_roots,
            project_roots,
            required: project.required.or(user.required).unwrap_or(true),
            hooks: project.hooks.or(user.hooks).unwrap_or(false),
            deny_read,
            allow_read,
            allow_unix_sockets,
        })
    }

    /// Every path list of these settings, for making relative entries absolute.
    pub fn path_lists_mut(&mut self) -> [&mut Vec<PathBuf>; 4] {
        [
            &mut self.writable_roots,
            &mut self.deny_read,
            &mut self.allow_read,
            &mut self.allow_unix_sockets,
        ]
    }
}

/// The entries of the list `key` as paths: `~` and `~/...` against `home`, others against
/// `root`; without duplicates.
fn resolve_paths(
    key: &'static str,
    raws: &mut dyn Iterator<Item = &String>,
    root: &Path,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, SandboxSettingsError> {
    let mut out = Vec::new();
    for raw in raws {
        if raw.trim().is_empty() {
            return Err(SandboxSettingsError::EmptyEntry(key));
        }
        let path = if raw == "~" {
            home.map(Path::to_path_buf)
        } else if let Some(rest) = raw.strip_prefix("~/") {
            home.map(|h| h.join(rest))
        } else {
            Some(root.join(raw))
        };
        let path = path.ok_or_else(|| SandboxSettingsError::NoHome {
            key,
            raw: raw.clone(),
        })?;
        if !out.contains(&path) {
            out.push(path);
        }
    }
    Ok(out)
}

impl SandboxSettings {
    /// Takes the project's `writableRoots` that resolve (symlinks and all) inside the project
    /// `root`, as the paths they resolve to; each other one is left out, with a warning: a
    /// project cannot widen the sandbox past its own root, only the user's settings can.
    pub fn confine(&mut self, root: &Path, home: Option<&Path>, file: &Path) -> Vec<String> {
        let mut warnings = Vec::new();
        let inside = canonical(root);
        for raw in std::mem::take(&mut self.project_roots) {
            let Some(path) = project_root_entry(&raw, root, home) else {
                continue;
            };
            if path.starts_with(&inside) {
                if !self.writable_roots.contains(&path) {
                    self.writable_roots.push(path);
                }
            } else {
                warnings.push(format!(
                    "{}: sandbox.writableRoots {raw:?} resolves to {}, outside the project: \
                     ignored (a project cannot let the sandbox write outside its root; your \
                     ~/.ling/settings.json can)",
                    file.display(),
                    path.display()
                ));
            }
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> RawSandbox {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_flag_wins_then_the_project_then_the_user() {
        let root = Path::new("/p");
        let user = raw(r#"{"mode":"read-only","network":true,"writableRoots":["/u","~/c"]}"#);
        let project = raw(r#"{"mode":"off","writableRoots":["build","~/cache"]}"#);
        let s =
            SandboxSettings::resolve(None, &user, &project, root, Some(Path::new("/h"))).unwrap();
        assert_eq!(s.mode, Some(SandboxMode::Off));
        assert!(s.explicit && s.network && s.required && !s.hooks);
        assert_eq!(
            s.writable_roots,
            [PathBuf::from("/u"), PathBuf::from("/h/c")]
        );
        assert_eq!(s.project_roots, ["build", "~/cache"]);
        let s = SandboxSettings::resolve(
            Some(SandboxMode::WorkspaceWrite),
            &user,
            &project,
            root,
            None,
        )
        .unwrap_err();
        assert_eq!(
            s,
            SandboxSettingsError::NoHome {
                key: "writableRoots",
                raw: "~/c".into()
            }
        );
        assert!(s.to_string().contains("HOME"), "{s}");
        let s = SandboxSettings::resolve(None, &raw("{}"), &raw("{}"), root, None).unwrap();
        assert_eq!(s, SandboxSettings::default());
        let err = serde_json::from_str::<RawSandbox>(r#"{"mode":"on"}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected one of off (also danger-full-access), workspace-write"),
            "{err}"
        );
        let codex = raw(r#"{"mode":"danger-full-access"}"#);
        assert_eq!(codex.mode, Some(SandboxMode::Off));
    }

    #[test]
    fn a_project_root_outside_the_project_is_left_out_even_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::os::unix::fs::symlink("/", root.join("cache")).unwrap();
        let project = raw(r#"{"writableRoots":["build","cache","cache/tmp","/srv","~/x","new"]}"#);
        let mut s =
            SandboxSettings::resolve(None, &raw("{}"), &project, &root, Some(Path::new("/h")))
                .unwrap();
        let warnings = s.confine(
            &root,
            Some(Path::new("/h")),
            Path::new(".ling/settings.json"),
        );
        assert_eq!(s.writable_roots, [root.join("build"), root.join("new")]);
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(
            warnings[0].contains("\"cache\" resolves to /,"),
            "{}",
            warnings[0]
        );
        let widened = project.widenings(&raw("{}"), &root, Some(Path::new("/h")));
        let shown: Vec<&str> = widened.iter().map(|(_, v, _)| v.as_str()).collect();
        assert_eq!(
            shown,
            ["cache → /", "cache/tmp → /tmp", "/srv", "~/x → /h/x"]
        );
        assert!(widened.iter().all(|(_, _, e)| e.starts_with("refused")));
    }

    #[test]
    fn widenings_are_the_keys_looser_than_the_users() {
        let none = raw("{}");
        let root = Path::new("/p");
        assert!(
            raw(r#"{"mode":"read-only","required":true}"#)
                .widenings(&none, root, None)
                .is_empty()
        );
        let w = raw(r#"{"mode":"off","network":true,"writableRoots":["/x"],"required":false}"#)
            .widenings(&none, root, None);
        let keys: Vec<_> = w.iter().map(|(k, v, _)| format!("{k}={v}")).collect();
        assert_eq!(
            keys,
            [
                "sandbox.mode=off",
                "sandbox.network=true",
                "sandbox.writableRoots=/x",
                "sandbox.required=false"
            ]
        );
        // Against the user's own: workspace-write over their read-only widens, and so does
        // hooks off over their hooks on; the same values over defaults do not.
        let strict = raw(r#"{"mode":"read-only","hooks":true}"#);
        let project = raw(r#"{"mode":"workspace-write","hooks":false}"#);
        let keys: Vec<_> = project
            .widenings(&strict, root, None)
            .iter()
            .map(|(k, v, _)| format!("{k}={v}"))
            .collect();
        assert_eq!(
            keys,
            ["sandbox.mode=workspace-write", "sandbox.hooks=false"]
        );
        assert!(project.widenings(&none, root, None).is_empty());
    }
}
