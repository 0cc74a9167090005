//! What a run's children may do, decided once: the trust guard gives each command hook and
//! stdio server the check that the files it runs are the ones trusted; the run's surface
//! (`trust::surface`) is what Ling reads or runs outside the sandbox, which the sandbox keeps
//! read-only and file edits of which ask; the sandbox decision, completed with that surface,
//! goes into the one [`ChildEnv`] every child starts from (the `bash` tool's, hooks', stdio
//! servers'), where the agent and the status read it back.

use std::path::{Path, PathBuf};

use crate::config::extensions::Extensions;
use crate::config::{Paths, Settings};
use crate::process::ChildEnv;
use crate::process::sandbox::{self, SandboxError};
use crate::trust::ProjectConfig;
use crate::trust::surface::{Part, Surface};

use super::files::ConfigFiles;
use super::{RunOptions, children, user_instruction_files};

/// The run's children, bounded.
pub(super) struct Confined {
    /// What children start with, the sandbox decision inside.
    pub child_env: ChildEnv,
    /// What Ling reads or runs outside the sandbox (file edits of it ask).
    pub surface: Surface,
}

/// Guards the hooks and servers of `files`, finds the run's surface and decides the sandbox.
pub(super) fn confine(
    paths: &Paths,
    options: &RunOptions,
    project: &ProjectConfig,
    files: &mut ConfigFiles,
) -> Result<Confined, SandboxError> {
    // Each hook and server checks, before it runs, that the files it runs are the ones
    // trusted; the sandbox keeps them read-only and file edits of them ask.
    let guarded = crate::trust::guard::attach(
        project,
        &mut files.hooks,
        &mut files.servers,
        &files.settings.sandbox.writable_roots,
        &files.settings.env,
    );
    let mut decision = sandbox::decide(
        &files.settings.sandbox,
        sandbox::availability(),
        &paths.home,
        sandbox::home_dir().as_deref(),
    )?;
    let child_env = children(&files.settings);
    let surface = surface_of(
        paths,
        options,
        &files.settings,
        project,
        &guarded.protect,
        &files.extensions,
        child_env.trampoline_exe(),
    );
    decision.read_only = surface.read_only();
    let child_env = child_env
        .with_sandbox(decision, paths.project_root.clone())
        .with_outside(guarded.outside);
    Ok(Confined { child_env, surface })
}

impl Confined {
    /// What the user is told at start about the sandbox: why it is off though wanted, what it
    /// cannot do here.
    pub fn warn(&self, paths: &Paths, warn: &dyn Fn(&str)) {
        let decision = self.child_env.decision();
        if let Some(warning) = &decision.warning {
            warn(warning);
        }
        if let Some(notice) = sandbox::start_notice(decision, &paths.project_root) {
            warn(&notice);
        }
    }
}

/// What Ling reads or runs outside the sandbox in this run (`trust::surface`): every config
/// file, the files hooks and servers run (`code`), the commands, skills and agents, the
/// instruction files and Ling's own programs. `LING_HOME` is made first when missing, so that
/// the sandbox can keep it read-only (a sandboxed command must not be the one to make it).
fn surface_of(
    paths: &Paths,
    options: &RunOptions,
    settings: &Settings,
    project: &ProjectConfig,
    code: &[PathBuf],
    extensions: &Extensions,
    ling: Option<&Path>,
) -> Surface {
    let _ = crate::config::private_fs::create_dir(&paths.home);
    let mut surface = Surface::of_run(paths);
    surface.extend(code, Part::Code);
    let named = options
        .mcp_config
        .iter()
        .filter(|e| !e.to_string_lossy().trim_start().starts_with('{'))
        .map(|e| paths.project_root.join(e));
    let flag_settings = settings
        .flag_settings
        .as_ref()
        .map(|f| f.source.clone())
        .filter(|source| source.is_absolute());
    for file in named.chain(flag_settings) {
        surface.add(&file, Part::Config);
    }
    for file in extensions.files() {
        surface.add_extension(file);
    }
    let user_files = user_instruction_files(paths, project.layer());
    let instructions = crate::agent::instructions::files(&crate::agent::instructions::Sources {
        root: &paths.project_root,
        working_dir: Some(&paths.working_dir),
        user_files: &user_files,
        claude_memory: project.claude().project,
    });
    surface.extend(&instructions, Part::Instructions);
    // `/proc/self/exe` is Ling itself, already a member.
    if let Some(exe) = ling.filter(|exe| !exe.starts_with("/proc")) {
        surface.add(exe, Part::Ling);
    }
    surface
}
