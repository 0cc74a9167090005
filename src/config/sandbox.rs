//! `sandbox` of `settings.json` and `--sandbox`: what the shell sandbox of `docs/tools.md`
//! allows. Only the settings live here; whether the kernel can enforce them, and the enforcing
//! itself, are `process::sandbox`'s.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

/// How much a sandboxed command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// No sandbox: every command asks as without one.
    Off,
    /// Write in the project root (not its `.git/` and `.ling/`), the temp dir and
    /// `sandbox.writableRoots`.
    WorkspaceWrite,
    /// Write nowhere (but `/dev/null` and the like).
    ReadOnly,
}

impl SandboxMode {
    pub const NAMES: [&str; 3] = ["off", "workspace-write", "read-only"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "workspace-write" => Some(Self::WorkspaceWrite),
            "read-only" => Some(Self::ReadOnly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `sandbox` of `settings.json` as written.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "Sandbox")]
pub struct RawSandbox {
    /// The sandbox of the `bash` tool when `--sandbox` is not given. Default `workspace-write`
    /// where the kernel has Landlock, else `off` (with a warning).
    #[schemars(extend("enum" = SandboxMode::NAMES))]
    pub mode: Option<String>,
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
    /// The keys of this (project) file that turn the sandbox off or widen it, for the trust
    /// listing: each as (key, value, what it does).
    pub fn widenings(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut add = |key: &str, value: String, effect: &str| {
            out.push((format!("sandbox.{key}"), value, effect.to_string()));
        };
        if let Some(mode) = self
            .mode
            .as_ref()
            .filter(|m| *m != "workspace-write" && *m != "read-only")
        {
            add(
                "mode",
                mode.clone(),
                "bash commands would run without the sandbox",
            );
        }
        if self.network == Some(true) {
            add(
                "network",
                "true".into(),
                "sandboxed commands would reach the network",
            );
        }
        for root in self.writable_roots.iter().flatten() {
            add(
                "writableRoots",
                root.clone(),
                "sandboxed commands could write there",
            );
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
        if self.required == Some(false) {
            add(
                "required",
                "false".into(),
                "without a usable kernel sandbox Ling would go on without one",
            );
        }
        out
    }
}

/// The sandbox settings, resolved: `--sandbox` over the project's over the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `None`: the default (by what the kernel can do).
    pub mode: Option<SandboxMode>,
    /// Whether `mode` came from `--sandbox` (an error when it cannot be enforced).
    pub explicit: bool,
    pub network: bool,
    /// Absolute paths.
    pub writable_roots: Vec<PathBuf>,
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
            required: true,
            hooks: false,
            deny_read: Vec::new(),
            allow_read: Vec::new(),
            allow_unix_sockets: Vec::new(),
        }
    }
}

impl SandboxSettings {
    /// `flag` is `--sandbox`; `project` wins over `user` key by key. `writableRoots` of both
    /// apply. Relative roots resolve against `root`, `~/` against `home`.
    pub fn resolve(
        flag: Option<SandboxMode>,
        user: &RawSandbox,
        project: &RawSandbox,
        root: &Path,
        home: Option<&Path>,
    ) -> Result<Self, String> {
        let mode = match flag {
            Some(mode) => Some(mode),
            None => match project.mode.as_ref().or(user.mode.as_ref()) {
                Some(name) => Some(SandboxMode::parse(name).ok_or_else(|| {
                    format!("sandbox.mode {name:?} is not one of off, workspace-write, read-only")
                })?),
                None => None,
            },
        };
        let paths = |key: &str, list: fn(&RawSandbox) -> &Option<Vec<String>>| {
            resolve_paths(
                key,
                [user, project]
                    .iter()
                    .flat_map(|s| list(s).iter().flatten()),
                root,
                home,
            )
        };
        let writable_roots = paths("writableRoots", |s| &s.writable_roots)?;
        let deny_read = paths("denyRead", |s| &s.deny_read)?;
        let allow_read = paths("allowRead", |s| &s.allow_read)?;
        let allow_unix_sockets = paths("allowUnixSockets", |s| &s.allow_unix_sockets)?;
        Ok(Self {
            mode,
            explicit: flag.is_some() || mode.is_some(),
            network: project.network.or(user.network).unwrap_or(false),
            writable_roots,
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
fn resolve_paths<'a>(
    key: &str,
    raws: impl Iterator<Item = &'a String>,
    root: &Path,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for raw in raws {
        if raw.trim().is_empty() {
            return Err(format!("sandbox.{key} has an empty entry; remove it"));
        }
        let path = if raw == "~" {
            home.map(Path::to_path_buf)
        } else if let Some(rest) = raw.strip_prefix("~/") {
            home.map(|h| h.join(rest))
        } else {
            Some(root.join(raw))
        };
        let path =
            path.ok_or_else(|| format!("sandbox.{key} {raw:?} starts with ~ but HOME is not set"))?;
        if !out.contains(&path) {
            out.push(path);
        }
    }
    Ok(out)
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
        let user = raw(r#"{"mode":"read-only","network":true,"writableRoots":["/u"]}"#);
        let project = raw(r#"{"mode":"off","writableRoots":["build","~/cache"]}"#);
        let s =
            SandboxSettings::resolve(None, &user, &project, root, Some(Path::new("/h"))).unwrap();
        assert_eq!(s.mode, Some(SandboxMode::Off));
        assert!(s.explicit && s.network && s.required && !s.hooks);
        assert_eq!(
            s.writable_roots,
            [
                PathBuf::from("/u"),
                PathBuf::from("/p/build"),
                PathBuf::from("/h/cache")
            ]
        );
        let s = SandboxSettings::resolve(
            Some(SandboxMode::WorkspaceWrite),
            &user,
            &project,
            root,
            None,
        )
        .unwrap_err();
        assert!(s.contains("HOME"), "{s}");
        let s = SandboxSettings::resolve(None, &raw("{}"), &raw("{}"), root, None).unwrap();
        assert_eq!(s, SandboxSettings::default());
        let err = SandboxSettings::resolve(None, &raw(r#"{"mode":"on"}"#), &raw("{}"), root, None)
            .unwrap_err();
        assert!(err.contains("not one of off, workspace-write"), "{err}");
    }

    #[test]
    fn widenings_are_the_keys_that_loosen() {
        assert!(
            raw(r#"{"mode":"read-only","required":true}"#)
                .widenings()
                .is_empty()
        );
        let w = raw(r#"{"mode":"off","network":true,"writableRoots":["/x"],"required":false}"#)
            .widenings();
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
    }
}
