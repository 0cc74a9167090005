//! `ling mcp import --from SOURCE [--scope user|project] [--force] [--dry-run]`: the servers
//! `config::mcp_import` finds in another tool's config files, shown one by one as the trust
//! question would show them (folder, environment with the variables that load code flagged,
//! the files they run) and added to Ling's `mcp.json`; a name that is already there is kept
//! unless `--force`. Servers from the project's own files (`.cursor/mcp.json`, `.mcp.json`,
//! `.vscode/mcp.json`) are repository content: importing them never grants trust, and they are
//! not copied into the user's own `~/.ling/mcp.json`, which applies everywhere without trust.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{CliError, Exit, McpContext, ScopeArg, scope_of};
use crate::config::Paths;
use crate::config::mcp::{RawServer, add_server_entries, server_names};
use crate::config::mcp_import::{ImportSource, Imported as ImportedSource, ToolDirs, read_source};
use crate::mcp::commands::{Scope, scope_file};
use crate::trust::code::Areas;
use crate::trust::listing::server_runs;
use crate::ui::output::{stdout, stdout_json};
use crate::ui::style::Style;
use crate::ui::term::Term;
use crate::ui::trust::{quoted, render_runs_of, shown};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The tool whose config files to read
    #[arg(long, value_enum)]
    from: ImportFrom,
    #[arg(long, value_enum, default_value_t = ScopeArg::Project)]
    scope: ScopeArg,
    /// Replace servers of the same name (default: keep them and skip the imported one)
    #[arg(long)]
    force: bool,
    /// Print the resulting file; write nothing
    #[arg(long)]
    dry_run: bool,
}

/// `ling mcp import --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFrom {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Codex,
}

pub(super) fn run_import(cx: &McpContext, args: &ImportArgs) -> Result<Exit, CliError> {
    let imported = import(&cx.paths, args)?;
    // Servers from the project's own files are the repository's, not the user's word: the
    // project is then asked about like any changed config.
    if !args.dry_run && !imported.from_project {
        cx.keep_trust()?;
    }
    Ok(Exit::Success)
}

/// What an import did that matters to trust.
struct Imported {
    /// A server came from one of the project's own files: the project's config now holds
    /// repository content, so its trust must not be kept on the user's behalf.
    from_project: bool,
}

fn import(paths: &Paths, options: &ImportArgs) -> Result<Imported, CliError> {
    let source = source_of(options.from);
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "HOME is not set, so {}'s config files cannot be found; set HOME",
                source.label()
            ))
        })?;
    let dirs = ToolDirs::from_env(home);
    let imported = read_source(source, &dirs, &paths.project_root)?;
    if imported.read.is_empty() {
        let looked: Vec<String> = imported
            .looked_in
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Err(CliError::Usage(format!(
            "no {} config file found; looked for {}",
            source.label(),
            looked.join(", ")
        )));
    }
    let scope = scope_of(options.scope);
    let file = scope_file(paths, scope);
    let existing = server_names(&file)?;
    let to_user = matches!(scope, Scope::User);
    let (text, entries, from_project) =
        report(&imported, &existing, options.force, &file, paths, to_user);
    let owner_only = file.starts_with(&paths.home);
    let result = add_server_entries(&file, &entries, owner_only, !options.dry_run)?;
    stdout(text);
    if options.dry_run {
        stdout(format!(
            "--dry-run: nothing written; {} would be:\n",
            file.display()
        ));
        let mut json = serde_json::to_string_pretty(&result).unwrap_or_default();
        json.push('\n');
        stdout_json(&json);
    } else {
        stdout(format!(
            "Imported {} server{} into {}\n",
            entries.len(),
            if entries.len() == 1 { "" } else { "s" },
            file.display()
        ));
        if from_project {
            stdout(
                "Some came from the project's own files: the project's config changed, so it \
                 is not trusted until you review it (`ling trust`).\n",
            );
        }
    }
    Ok(Imported { from_project })
}

fn source_of(from: ImportFrom) -> ImportSource {
    match from {
        ImportFrom::ClaudeDesktop => ImportSource::ClaudeDesktop,
        ImportFrom::ClaudeCode => ImportSource::ClaudeCode,
        ImportFrom::Cursor => ImportSource::Cursor,
        ImportFrom::Vscode => ImportSource::VsCode,
        ImportFrom::Codex => ImportSource::Codex,
    }
}

/// One line per server (what it runs, where it came from, what was skipped and why) with what
/// it runs beneath it, the entries to add, and whether one came from the project's own files.
fn report(
    imported: &ImportedSource,
    existing: &[String],
    force: bool,
    file: &Path,
    paths: &Paths,
    to_user: bool,
) -> (Term, Vec<(String, RawServer)>, bool) {
    let mut text = Term::new();
    let mut entries = Vec::new();
    let mut from_project = false;
    let style = Style::for_stdout();
    let areas = Areas::new(&paths.project_root, &[]);
    for found in &imported.found {
        let from = paths.display(&found.from);
        let ours = found.from.starts_with(&paths.project_root);
        if ours && to_user {
            text += format!(
                "  ! {}: not imported from {from}: it is the project's own file, and ~/.ling/mcp.json \
                 applies everywhere without trust; import it with --scope project, where it runs \
                 once you trust the project\n",
                found.name
            );
            continue;
        }
        let exists = existing.contains(&found.name);
        if exists && !force {
            text += format!(
                "  = {}: already in {}, skipped (--force replaces it)\n",
                shown(&found.name),
                file.display()
            );
            continue;
        }
        let verb = if exists { "~" } else { "+" };
        text += format!(
            "  {verb} {} ({}) from {from}\n",
            shown(&found.name),
            describe(&found.server)
        );
        if let Some(runs) = server_runs(&found.server, &areas) {
            text += render_runs_of(&runs, "      ", style);
        }
        for note in &found.notes {
            text += format!("      note: {note}\n");
        }
        from_project |= ours;
        entries.push((found.name.clone(), found.server.clone()));
    }
    for rejected in &imported.rejected {
        text += format!(
            "  ! {}: not imported from {}: {}\n",
            shown(&rejected.name),
            paths.display(&rejected.from),
            rejected.reason
        );
    }
    if imported.found.is_empty() && imported.rejected.is_empty() {
        let read: Vec<String> = imported
            .read
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        text += format!("no MCP servers in {}\n", read.join(", "));
    }
    (text, entries, from_project)
}

fn describe(server: &RawServer) -> String {
    match (&server.command, &server.url) {
        (Some(command), _) => {
            let words: Vec<String> = std::iter::once(command)
                .chain(server.args.iter().flatten())
                .map(|w| quoted(w))
                .collect();
            format!("stdio: {}", words.join(" "))
        }
        (None, Some(url)) => format!(
            "{}: {}",
            server.kind.as_deref().unwrap_or("http"),
            crate::redact::url(url)
        ),
        (None, None) => "no command or url".into(),
    }
}
