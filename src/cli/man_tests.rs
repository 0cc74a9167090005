//! The man pages under `docs/man/` are generated from the clap definition (clap_mangen): one
//! for `ling` and one for each subcommand, as `git` has. This test fails when they are not
//! what the current definition gives; `scripts/gen-man.sh` (`LING_UPDATE_MAN=1`) rewrites them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use clap::CommandFactory;

use super::Cli;

/// The sections of `ling.1` that clap does not know: (title, [(term, meaning)]).
const MORE: &[(&str, &[(&str, &str)])] = &[
    (
        "EXIT STATUS",
        &[
            ("0", "The run finished and the model gave its answer."),
            (
                "1",
                "The run failed: an API error after retries, --max-turns reached, a hook stopped it.",
            ),
            (
                "2",
                "A usage or configuration error: a bad flag, an invalid .ling/*.json, no API key.",
            ),
            ("130", "Interrupted by Ctrl-C (SIGINT)."),
            ("143, 129", "Ended by SIGTERM, SIGHUP."),
        ],
    ),
    (
        "ENVIRONMENT",
        &[
            (
                "OPENAI_API_KEY",
                "The API key (settings apiKeyEnv names another variable).",
            ),
            (
                "OPENAI_BASE_URL, LING_BASE_URL",
                "The base URL when --base-url is not given.",
            ),
            ("LING_MODEL", "The model when --model is not given."),
            ("LING_HOME", "Ling's own directory instead of ~/.ling."),
            (
                "LING_LOG",
                "debug, info, warn or error: write ~/.ling/logs/ling.log.",
            ),
        ],
    ),
    (
        "FILES",
        &[
            (
                "~/.ling/settings.json, .ling/settings.json",
                "Settings: model, permissions, limits.",
            ),
            (
                "~/.ling/hooks.json, .ling/hooks.json",
                "Hooks, run around what Ling does.",
            ),
            ("~/.ling/mcp.json, .ling/mcp.json", "MCP servers."),
            (
                "AGENTS.md, LING.md",
                "Project instructions added to the system prompt.",
            ),
            (
                "~/.ling/trust.json",
                "The trusted folders: a project's .ling/ applies only there.",
            ),
        ],
    ),
];

/// `ling.1`'s own sections as roff, to go before VERSION.
fn more_sections() -> String {
    use clap_mangen::roff::{Roff, bold, roman};
    let mut roff = Roff::new();
    for (title, entries) in MORE {
        roff.control("SH", [*title]);
        for (term, meaning) in *entries {
            roff.control("TP", []);
            roff.text([bold(*term)]);
            roff.text([roman(*meaning)]);
        }
    }
    roff.to_roff()
}

/// Every page as (file name, roff text): `ling.1`, `ling-mcp.1`, `ling-mcp-add.1`, ...
fn pages() -> Vec<(String, String)> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, String)>) {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut roff = Vec::new();
        man.render(&mut roff).unwrap();
        let mut page = String::from_utf8(roff).unwrap();
        if out.is_empty() {
            let at = page.find(".SH VERSION").unwrap_or(page.len());
            page.insert_str(at, &more_sections());
        }
        out.push((man.get_filename(), page));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}

#[test]
fn the_man_pages_are_generated_from_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/man");
    let pages = pages();
    if std::env::var_os("LING_UPDATE_MAN").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &pages {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; run scripts/gen-man.sh", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut names: Vec<String> = pages.iter().map(|(name, _)| name.clone()).collect();
    names.sort();
    assert_eq!(
        on_disk, names,
        "docs/man/ has other pages: run scripts/gen-man.sh"
    );
    for (name, text) in &pages {
        let checked_in = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(
            checked_in == *text,
            "docs/man/{name} is not what the command line gives: run scripts/gen-man.sh"
        );
    }
    let ling = &pages[0].1;
    for expected in [
        "ling\\-mcp(1)",
        "\\-\\-permission\\-mode",
        "EXIT STATUS",
        "LING_HOME",
    ] {
        assert!(ling.contains(expected), "ling.1 lacks {expected}");
    }
}
