//! `ling mcp import --from SOURCE [--scope user|project] [--force] [--dry-run]`: the servers
//! `config::mcp_import` finds in another tool's config files, shown one by one and added to
//! Ling's `mcp.json`; a name that is already there is kept unless `--force`.

use std::path::{Path, PathBuf};

use super::CliError;
use super::args::ImportFrom;
use crate::config::Paths;
use crate::config::mcp::{RawServer, add_server_entries, server_names};
use crate::config::mcp_import::{ImportSource, Imported, ToolDirs, read_source};
use crate::mcp::commands::{Scope, scope_file};
use crate::ui::output::{stdout, stdout_json};

pub struct ImportOptions {
    pub from: ImportFrom,
    pub scope: Scope,
    pub force: bool,
    pub dry_run: bool,
}

pub fn run(paths: &Paths, options: ImportOptions) -> Result<(), CliError> {
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
    let file = scope_file(paths, options.scope);
    let existing = server_names(&file)?;
    let (text, entries) = report(&imported, &existing, options.force, &file, paths);
    let owner_only = file.starts_with(&paths.home);
    let result = add_server_entries(&file, &entries, owner_only, !options.dry_run)?;
    stdout(&text);
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
    }
    Ok(())
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

/// One line per server (what it runs, where it came from, what was skipped and why) and the
/// entries to add.
fn report(
    imported: &Imported,
    existing: &[String],
    force: bool,
    file: &Path,
    paths: &Paths,
) -> (String, Vec<(String, RawServer)>) {
    let mut text = String::new();
    let mut entries = Vec::new();
    for found in &imported.found {
        let from = paths.display(&found.from);
        let exists = existing.contains(&found.name);
        if exists && !force {
            text.push_str(&format!(
                "  = {}: already in {}, skipped (--force replaces it)\n",
                found.name,
                file.display()
            ));
            continue;
        }
        let verb = if exists { "~" } else { "+" };
        text.push_str(&format!(
            "  {verb} {} ({}) from {from}\n",
            found.name,
            describe(&found.server)
        ));
        for note in &found.notes {
            text.push_str(&format!("      note: {note}\n"));
        }
        entries.push((found.name.clone(), found.server.clone()));
    }
    for rejected in &imported.rejected {
        text.push_str(&format!(
            "  ! {}: not imported from {}: {}\n",
            rejected.name,
            paths.display(&rejected.from),
            rejected.reason
        ));
    }
    if imported.found.is_empty() && imported.rejected.is_empty() {
        let read: Vec<String> = imported
            .read
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        text.push_str(&format!("no MCP servers in {}\n", read.join(", ")));
    }
    (text, entries)
}

fn describe(server: &RawServer) -> String {
    match (&server.command, &server.url) {
        (Some(command), _) => {
            let mut words = vec![command.clone()];
            words.extend(server.args.iter().flatten().cloned());
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
