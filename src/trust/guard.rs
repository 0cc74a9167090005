//! The run's side of "what the user approves is what runs": every command hook and stdio
//! server of the run gets a [`CodeCheck`] of the files it runs from places a sandboxed command
//! can write, checked again before each run; and those files are what the sandbox keeps
//! read-only and the file tools ask about. For the project's own hooks and servers the files
//! must be what the user trusted (a script's bytes; that a program exists, or does not); for
//! the user's own, what they were when the session started. The files and folders the
//! settings' `env` names (`LD_PRELOAD=./x.so`, `PATH=./bin:...`) reach every child, so they are
//! kept read-only too, and checked before each hook and server starts outside the sandbox
//! ([`Outside`], which the process layer holds).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ProjectConfig;
use super::code::{self, Areas, FileState, Role, Runs};
use crate::config::code_check::{CodeCheck, Expected, Watched, expected_now};
use crate::config::hooks::{HandlerKind, HooksConfig};
use crate::config::mcp::{ServerConfig, TransportConfig};
use crate::process::Outside;

/// What the run's checks cover: the files and folders to keep read-only inside the sandbox
/// (existing, resolved, in the areas a sandboxed command can write), and what children
/// outside the sandbox are kept from.
#[derive(Debug, Clone, Default)]
pub struct Guarded {
    pub protect: Vec<PathBuf>,
    pub outside: Outside,
}

/// Gives each command hook of `hooks` and each stdio server of `servers` its check.
/// `writable_roots`: the sandbox's (settings `sandbox.writableRoots`), watched like the project.
/// `env`: the settings' `env`, which every child gets.
pub fn attach(
    project: &ProjectConfig,
    hooks: &mut HooksConfig,
    servers: &mut [ServerConfig],
    writable_roots: &[PathBuf],
    env: &BTreeMap<String, String>,
) -> Guarded {
    let areas = Areas::new(project.root(), writable_roots);
    let project_files: Vec<&Path> = project
        .layer()
        .files()
        .iter()
        .map(|f| f.path.as_path())
        .collect();
    let from_project = |source: &Path| project_files.contains(&source);
    let mut protect = BTreeSet::new();
    for group in &mut hooks.groups {
        let ours = from_project(&group.source);
        for handler in &mut group.handlers {
            let HandlerKind::Command { command } = &handler.kind else {
                continue;
            };
            let runs = code::hook(command, &areas);
            let check = check_of(&runs, ours.then_some(project), &[], &mut protect, &areas);
            handler.code = Some(Arc::new(check));
        }
    }
    for server in servers.iter_mut() {
        let TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } = &server.transport
        else {
            continue;
        };
        let runs = code::server(command, args, env, cwd, &areas);
        let ours = from_project(&server.source);
        let check = check_of(&runs, ours.then_some(project), env, &mut protect, &areas);
        server.code = Some(Arc::new(check));
    }
    // The settings' `env`: a file a project's `env` names is as trusted (its listing found it),
    // one of the user's as the session started.
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let runs = code::environment(&env, &areas);
    let trusted = project.status() == super::TrustStatus::Trusted
        && runs
            .files
            .iter()
            .any(|f| project.code_state(&f.path).is_some());
    let env_check = check_of(&runs, trusted.then_some(project), &[], &mut protect, &areas);
    Guarded {
        protect: protect.into_iter().collect(),
        outside: Outside {
            writable: areas.writable(),
            env_check,
        },
    }
}

/// The check of one entry. `trusted`: the project, for an entry of its own, whose files must be
/// as trusted.
fn check_of(
    runs: &Runs,
    trusted: Option<&ProjectConfig>,
    env: &[(String, String)],
    protect: &mut BTreeSet<PathBuf>,
    areas: &Areas,
) -> CodeCheck {
    let mut files = Vec::new();
    for file in &runs.files {
        if file.role == Role::Folder {
            // A folder is kept read-only while it exists (its entries are the user's to
            // change); one that appears where none was is a change.
            let absent = match trusted.and_then(|p| p.code_state(&file.path)) {
                Some(state) => *state == FileState::Absent,
                None => !file.path.exists(),
            };
            if !absent {
                if file.path.is_dir() {
                    protect.insert(file.path.clone());
                }
                continue;
            }
        }
        let expected = match trusted.and_then(|p| p.code_state(&file.path)) {
            Some(FileState::Absent) => Expected::Absent,
            Some(FileState::Script { sha256, .. }) => Expected::Content {
                sha256: sha256.clone(),
                stamp: None,
            },
            // A binary is trusted to exist; its bytes are the session's from here on.
            Some(FileState::Binary { .. } | FileState::Folder { .. }) | None => {
                expected_now(&file.path)
            }
        };
        if !matches!(expected, Expected::Absent) && areas.contains(&file.path) {
            protect.insert(file.path.clone());
        }
        files.push(Watched {
            named: file.named_path.clone(),
            path: file.path.clone(),
            shown: file.shown.clone(),
            expected,
        });
    }
    let sets_python_path = env.iter().any(|(name, _)| name == "PYTHONSAFEPATH")
        || runs.env.iter().any(|v| v.name == "PYTHONSAFEPATH");
    CodeCheck {
        files,
        remedy: match trusted {
            Some(_) => "you trusted this project; run `ling trust` to review the change".into(),
            None => "this session started; restart Ling to run the new version".into(),
        },
        safe_python: !runs.python_script_outside && !sets_python_path,
    }
}
