//! `-w/--worktree [NAME]` around a run: the worktree made before the session starts (by a
//! WorktreeCreate hook that prints its path, else by git), the run's paths moved into it with
//! the main project's trust, and at the end what changed and where, the worktree removed when
//! clean and the REPL's (WorktreeRemove hooks told), else kept.

use super::CliError;
use crate::config::hooks::HooksConfig;
use crate::config::{Paths, Settings};
use crate::hooks::{HookContext, HookEngine, HookInput};
use crate::process::worktree::{Worktree, dir_setting, new_name};
use crate::session::RunOptions;
use crate::trust::{ProjectConfig, TrustStatus};
use crate::ui::output::stderr_line;

/// The worktree of a run, and what its end needs.
pub(super) struct RunWorktree {
    worktree: Worktree,
    /// Removed at the end when clean (the REPL's; a `-p` run keeps it).
    may_remove: bool,
    hooks: Option<(HookEngine, HookContext)>,
}

/// The user's and the project's WorktreeCreate/WorktreeRemove hooks (the project's only when
/// it is trusted, as in a run); `None` when there are none.
fn worktree_hooks(
    paths: &Paths,
    project: &ProjectConfig,
    options: &RunOptions,
) -> Option<(HookEngine, HookContext)> {
    let settings = Settings::load(paths, project.layer(), &options.overrides).ok()?;
    let config = HooksConfig::load(paths, project.layer(), settings.hook_layers()).ok()?;
    let (engine, _) = HookEngine::from_config(config).ok()?;
    let engine = engine.with_child_env(crate::setup::children(&settings));
    let wanted = engine.has_handlers(crate::config::hooks::HookEventName::WorktreeCreate, None)
        || engine.has_handlers(crate::config::hooks::HookEventName::WorktreeRemove, None);
    let ctx = HookContext {
        session_id: String::new(),
        transcript_path: Default::default(),
        cwd: paths.project_root.clone(),
        permission_mode: crate::config::PermissionMode::Default
            .hook_name()
            .to_string(),
        agent: None,
    };
    wanted.then_some((engine, ctx))
}

/// Makes (or enters again) the worktree `-w` names (`""`: a new name) and says where; the
/// run's paths in it, its project trusted when the main project is.
pub(super) async fn enter(
    name: &str,
    paths: &Paths,
    project: &ProjectConfig,
    options: &RunOptions,
    may_remove: bool,
) -> Result<(Paths, RunWorktree), CliError> {
    let name = if name.trim().is_empty() {
        new_name()
    } else {
        name.trim().to_string()
    };
    let hooks = worktree_hooks(paths, project, options);
    let mut made_by_hook = None;
    if let Some((engine, ctx)) = &hooks {
        let input = HookInput::WorktreeCreate { name: name.clone() };
        let outcome = engine.run(&input, ctx).await;
        if outcome.is_blocked() {
            return Err(CliError::Usage(format!(
                "a WorktreeCreate hook refused the worktree {name}: {}",
                outcome.reason.unwrap_or_default()
            )));
        }
        made_by_hook = outcome.additional_context.last().cloned();
    }
    let worktree = match made_by_hook {
        Some(path) => Worktree::by_hook(&paths.project_root, &name, &path),
        None => {
            let dir = dir_setting(paths, project.layer(), &options.overrides);
            Worktree::create(&paths.project_root, &name, dir.as_deref())?
        }
    };
    let inside = paths
        .working_dir
        .strip_prefix(&worktree.repo)
        .ok()
        .map(|rel| worktree.path.join(rel))
        .filter(|dir| dir.is_dir())
        .unwrap_or_else(|| worktree.path.clone());
    let mut moved = Paths::with_home(worktree.path.clone(), paths.home.clone())
        .in_working_dir(inside)
        .with_add_dirs(paths.add_dirs.clone());
    moved.user_config = paths.user_config;
    let mut config = ProjectConfig::read(&moved)?;
    if project.status() == TrustStatus::Trusted && config.status() != TrustStatus::Trusted {
        config.trust()?;
    }
    stderr_line(format!(
        "ling: working in worktree {} at {} (branch {})",
        worktree.name,
        worktree.path.display(),
        worktree.branch
    ));
    let run = RunWorktree {
        worktree,
        may_remove,
        hooks,
    };
    Ok((moved, run))
}

impl RunWorktree {
    /// Says what changed and where; removes the worktree when clean and allowed, telling the
    /// WorktreeRemove hooks.
    pub(super) async fn end(self) {
        let finish = self.worktree.finish(self.may_remove);
        if finish.removed
            && let Some((engine, ctx)) = &self.hooks
        {
            let input = HookInput::WorktreeRemove {
                worktree_path: self.worktree.path.clone(),
            };
            engine.run(&input, ctx).await;
        }
        for line in finish.lines {
            stderr_line(format!("ling: {line}"));
        }
    }
}
