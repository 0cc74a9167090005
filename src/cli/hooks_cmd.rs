//! `ling hooks list [--json]` and `ling hooks run EVENT [--tool NAME] [--input JSON]`: the loaded
//! hooks, and a dry run of one made-up event without any model.

use std::path::PathBuf;

use super::{CliError, Exit, HooksCommand};
use crate::config::hooks::HooksConfig;
use crate::config::{Paths, PermissionMode, Settings, SettingsOverrides};
use crate::hooks::{HookContext, HookEngine, made_up_input, render_listing, render_outcome};
use crate::setup::{children, project_root};
use crate::trust::ProjectConfig;
use crate::ui::output::{stderr_line, stdout, stdout_json};

pub async fn run(command: HooksCommand, cwd: Option<PathBuf>) -> Result<Exit, CliError> {
    let paths = Paths::new(project_root(cwd.as_ref())?);
    let project = ProjectConfig::read(&paths)?;
    let settings = Settings::load(&paths, project.layer(), &SettingsOverrides::default())?;
    let mut config = HooksConfig::load(&paths, project.layer(), settings.hook_layers())?;
    // As in a run: a hook whose files are not the ones trusted does not run.
    let guarded = crate::trust::guard::attach(
        &project,
        &mut config,
        &mut [],
        &settings.sandbox.writable_roots,
        &settings.env,
    );
    let (engine, warnings) = HookEngine::from_config(config)?;
    crate::agent::check_hook_conditions(&engine, &paths)?;
    let engine = engine
        .with_child_env(children(&settings).with_outside(guarded.outside))
        .with_conditions(crate::agent::RuleConditions::new(&paths));
    for warning in warnings {
        stderr_line(format!("warning: {warning}"));
    }
    // The same rule as a run: an untrusted project's hooks are not loaded, and this says so.
    let untrusted: Vec<String> = project
        .untrusted_hooks(&paths)
        .into_iter()
        .map(|(file, n)| format!("{file} ({n} hook{})", if n == 1 { "" } else { "s" }))
        .collect();
    let skipped = (!untrusted.is_empty()).then(|| {
        format!(
            "{} not loaded: this project is not trusted; run `ling trust` to use {}",
            untrusted.join(", "),
            if untrusted.len() == 1 { "it" } else { "them" }
        )
    });
    match command {
        HooksCommand::List { json } => {
            let listing = engine.list();
            if listing.is_empty() && !json {
                let why = if settings.hooks_disabled {
                    "hooks are disabled (--no-hooks, or disableAllHooks in ~/.ling/settings.json)"
                } else if settings.project_hooks_disabled {
                    "no user hooks in ~/.ling/hooks.json; project hooks are disabled \
                     (disableAllHooks in .ling/settings.json)"
                } else {
                    "no hooks configured in ~/.ling/hooks.json or .ling/hooks.json"
                };
                stdout(format!("{why}\n"));
            } else {
                listing_out(&ensure_newline(render_listing(&listing, json)), json);
            }
            match (skipped, json) {
                (Some(note), false) => stdout(format!("{note}\n")),
                (Some(note), true) => stderr_line(&note),
                (None, _) => {}
            }
            Ok(Exit::Success)
        }
        HooksCommand::Run {
            event,
            tool,
            input,
            json,
        } => {
            let input = match input {
                Some(text) => Some(
                    serde_json::from_str(&text)
                        .map_err(|e| CliError::Usage(format!("--input is not valid JSON: {e}")))?,
                ),
                None => None,
            };
            let input = made_up_input(&event, tool.as_deref(), input)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            if let Some(note) = skipped {
                stderr_line(&note);
            }
            let session_id = format!("hooks-run-{}", uuid::Uuid::new_v4());
            let ctx = HookContext {
                agent: None,
                transcript_path: paths.sessions_dir().join(format!("{session_id}.jsonl")),
                session_id,
                cwd: paths.project_root.clone(),
                permission_mode: PermissionMode::Default.hook_name().to_string(),
            };
            let mut outcome = engine.run(&input, &ctx).await;
            engine.wait_async(std::time::Duration::from_secs(2)).await;
            // A dry run is for seeing what the hooks do: async handlers' errors included.
            outcome.notices.extend(engine.take_async_notices());
            listing_out(&ensure_newline(render_outcome(&outcome, json)), json);
            Ok(Exit::Success)
        }
    }
}

/// JSON as serde_json wrote it (C1 and bidi characters escaped too, to a terminal); text always
/// neutralised: hook commands and their messages come from configuration files and scripts.
fn listing_out(text: &str, json: bool) {
    if json {
        stdout_json(text);
    } else {
        stdout(text);
    }
}

fn ensure_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
