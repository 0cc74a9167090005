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
}

impl RawSandbox {
    /// The keys of this (project) file that turn the sandbox off or widen it, for the trust
    /// listing: each as (key, value, what it does).
    pub fn widenings(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut add = |key: &str, value: String, effect: &str| {
            out.push((format!("sandbox.{key}"), value, effect.to_string()));
        };
        if let Some(mode) = self.mode.filter(|m| *m == SandboxMode::Off) {
            add(
                "mode",
                mode.to_string(),
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
        let mode = flag.or(project.mode).or(user.mode);
        let mut writable_roots = Vec::new();
        for raw in [user, project]
            .iter()
            .flat_map(|s| s.writable_roots.iter().flatten())
        {
            let path = if raw == "~" {
                home.map(Path::to_path_buf)
            } else if let Some(rest) = raw.strip_prefix("~/") {
                home.map(|h| h.join(rest))
            } else {
                Some(root.join(raw))
            };
            let path = path.ok_or_else(|| {
                format!("sandbox.writableRoots {raw:?} starts with ~ but HOME is not set")
            })?;
            if raw.trim().is_empty() {
                return Err("sandbox.writableRoots has an empty entry; remove it".into());
            }
            if !writable_roots.contains(&path) {
                writable_roots.push(path);
            }
        }
        Ok(Self {
            mode,
            explicit: flag.is_some() || mode.is_some(),
            network: project.network.or(user.network).unwrap_or(false),
            writable_roots,
            required: project.required.or(user.required).unwrap_or(true),
            hooks: project.hooks.or(user.hooks).unwrap_or(false),
        })
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
