//! Commands that do what another does, for deny rules: `find -delete` removes like `rm -rf`,
//! `git send-pack` pushes like `git push`, `git -c alias.x=push x` is `git push`; and a `git`
//! subcommand that may be an alias from a config file, which counts as unknown.

use super::effects::short_cluster;
use super::words::Word;

/// Git's own commands (which an alias cannot shadow); any other `git NAME` may be an alias
/// from a config file or a `git-NAME` program, so what it runs is unknown.
pub fn is_git_builtin(name: &str) -> bool {
    GIT_BUILTINS.contains(&name)
}

/// The commands of [`is_git_builtin`]: git's own, as `git help -a` lists them.
const GIT_BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "gitk",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "scalar",
    "send-email",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// The commands `words` (program first, by its basename; `assignments` set for it) is
/// equivalent to, for deny rules: `find -delete` is `rm -rf PATHS`, `unlink F` and `shred -u
/// F` are `rm F`, `git-push` is `git push`, `git send-pack` and `git http-push` are `git push`,
/// an alias given by `-c alias.X=V` or `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` is what it
/// stands for (a `!` alias is shell text, returned apart), and a `git` subcommand that may be
/// an alias of a config file is unknown (a dynamic word in its place).
pub fn equivalents(assignments: &[Word], words: &[Word]) -> (Vec<Vec<Word>>, Vec<String>) {
    let mut forms = Vec::new();
    let mut scripts = Vec::new();
    let Some(program) = words.first().and_then(Word::lit) else {
        return (forms, scripts);
    };
    let rest = |from: usize| words.get(from..).unwrap_or_default().to_vec();
    match program {
        "find" if words.iter().any(|w| w.lit() == Some("-delete")) => {
            let mut rm = vec![Word::literal("rm"), Word::literal("-rf")];
            rm.extend(
                words[1..]
                    .iter()
                    .take_while(|w| w.lit().is_none_or(|t| !t.starts_with('-')))
                    .cloned(),
            );
            forms.push(rm);
        }
        "unlink" => forms.push([vec![Word::literal("rm")], rest(1)].concat()),
        "shred"
            if words.iter().any(|w| {
                w.lit()
                    .is_some_and(|t| t == "--remove" || short_cluster(t, "u"))
            }) =>
        {
            forms.push([vec![Word::literal("rm")], rest(1)].concat())
        }
        name if name.starts_with("git-") && name.len() > 4 => {
            forms.push(
                [
                    vec![Word::literal("git"), Word::literal(&name[4..])],
                    rest(1),
                ]
                .concat(),
            );
        }
        "git" => git_equivalents(assignments, words, &mut forms, &mut scripts),
        _ => {}
    }
    // What a form stands for may itself be a `git` form with more to see (`git-send-pack`).
    let more: Vec<Vec<Word>> = forms
        .iter()
        .filter(|f| f.first().and_then(Word::lit) == Some("git") && f.as_slice() != words)
        .flat_map(|f| {
            let mut inner = Vec::new();
            git_equivalents(&[], f, &mut inner, &mut scripts);
            inner
        })
        .collect();
    forms.extend(more);
    (forms, scripts)
}

fn git_equivalents(
    assignments: &[Word],
    words: &[Word],
    forms: &mut Vec<Vec<Word>>,
    scripts: &mut Vec<String>,
) {
    // Aliases from `-c alias.X=V` among the global options, and from the environment.
    let mut aliases: Vec<(String, String)> = Vec::new();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(text) = word.lit() else { break };
        if text == "-c" {
            if let Some(Some(config)) = words.get(i + 1).map(Word::lit) {
                aliases.extend(alias_of(config));
            }
            i += 2;
            continue;
        }
        if let Some(config) = text.strip_prefix("-c").filter(|c| !c.is_empty()) {
            aliases.extend(alias_of(config));
        }
        if !text.starts_with('-') {
            break;
        }
        i += 1;
    }
    let env: Vec<(&str, &str)> = assignments
        .iter()
        .filter_map(|a| a.text.split_once('='))
        .collect();
    for (name, key) in &env {
        if let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_")
            && let Some(alias) = key.strip_prefix("alias.")
            && let Some((_, value)) = env
                .iter()
                .find(|(v, _)| v.strip_prefix("GIT_CONFIG_VALUE_") == Some(n))
        {
            aliases.push((alias.to_string(), value.to_string()));
        }
    }
    let unknown_alias = env
        .iter()
        .any(|(name, _)| *name == "GIT_CONFIG_PARAMETERS" || *name == "GIT_CONFIG");
    let Some(form) = super::skip_global_options(words, false).or_else(|| Some(words.to_vec()))
    else {
        return;
    };
    let Some(sub) = form.get(1) else { return };
    let after = form.get(2..).unwrap_or_default();
    let Some(name) = sub.lit() else { return };
    if let Some((_, value)) = aliases.iter().rev().find(|(a, _)| a == name) {
        match value.strip_prefix('!') {
            Some(text) => {
                let mut text = text.to_string();
                for word in after {
                    text.push(' ');
                    text.push_str(&word.render());
                }
                scripts.push(text);
            }
            None => {
                let mut expanded = vec![Word::literal("git")];
                expanded.extend(value.split_whitespace().map(Word::literal));
                expanded.extend(after.iter().cloned());
                forms.push(expanded);
            }
        }
        return;
    }
    match name {
        "send-pack" | "http-push" => forms.push(
            [
                vec![Word::literal("git"), Word::literal("push")],
                after.to_vec(),
            ]
            .concat(),
        ),
        _ if unknown_alias || (!is_git_builtin(name) && !name.starts_with('-')) => {
            // An alias of a config file, or a `git-NAME` program: unknown.
            forms.push(
                [
                    vec![Word::literal("git"), Word::dynamic(name, true)],
                    after.to_vec(),
                ]
                .concat(),
            );
        }
        _ => {}
    }
}

/// `alias.NAME=VALUE` → (NAME, VALUE).
fn alias_of(config: &str) -> Option<(String, String)> {
    let (key, value) = config.split_once('=')?;
    let name = key.strip_prefix("alias.")?;
    Some((name.to_string(), value.to_string()))
}
