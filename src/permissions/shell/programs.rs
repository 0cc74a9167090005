//! What Ling knows about particular programs: the global options some of them take before
//! their subcommand (`git -C dir push`), the interpreters a rule cannot see into, and the
//! environment variables that cannot change what a program runs.

use super::words::Word;

/// Programs whose second word is the real command (`git status`, `cargo test`).
pub const TWO_WORD_COMMANDS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "npx", "go", "docker", "podman", "kubectl", "pip",
    "pip3", "uv", "poetry", "make", "just", "rustup", "gh", "apt", "apt-get", "brew", "dotnet",
    "mvn", "gradle",
];

/// Programs that run code given to them as text or in a file: an "always" answer never
/// records a prefix rule for them, since `bash(python*)` would allow any program.
pub fn is_interpreter(program: &str) -> bool {
    const NAMES: &[&str] = &[
        "sh",
        "bash",
        "rbash",
        "dash",
        "ash",
        "zsh",
        "ksh",
        "mksh",
        "yash",
        "posh",
        "fish",
        "csh",
        "tcsh",
        "busybox",
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "ruby",
        "irb",
        "perl",
        "php",
        "lua",
        "luajit",
        "tclsh",
        "wish",
        "Rscript",
        "R",
        "julia",
        "osascript",
        "pwsh",
        "powershell",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "expect",
        "groovy",
        "scala",
        "jshell",
        "ghci",
        "runghc",
        "erl",
        "elixir",
        "iex",
        "swift",
        "dotnet",
        "uvx",
        "npx",
        "pnpx",
        "bunx",
        "env",
        "xargs",
        "find",
        "watch",
        "parallel",
        "ssh",
    ];
    NAMES.contains(&program) || versioned(program, "python") || versioned(program, "pip")
}

/// `python3.12`, `pip3.11`.
fn versioned(program: &str, stem: &str) -> bool {
    program
        .strip_prefix(stem)
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Shells whose `-c` text is bash syntax and so is parsed and checked like the command itself;
/// other shells' `-c` text cannot be checked.
pub fn is_bash_like_shell(program: &str) -> bool {
    matches!(program, "sh" | "bash" | "rbash" | "dash" | "ash")
}

pub fn is_shell(program: &str) -> bool {
    is_bash_like_shell(program)
        || matches!(
            program,
            "zsh" | "ksh" | "mksh" | "yash" | "posh" | "fish" | "csh" | "tcsh"
        )
}

/// Variables whose value cannot make a program run something else: setting them before an
/// allowed command keeps it allowed (`LC_ALL=C git status`). Any other (`GIT_DIR`, `PAGER`,
/// `LD_PRELOAD`, `GIT_CONFIG_*`...) needs a rule that names it.
pub fn is_harmless_env(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LINES",
        "TERM",
        "CI",
        "RUST_BACKTRACE",
        "RUST_LIB_BACKTRACE",
        "RUST_LOG",
        "CARGO_TERM_COLOR",
        "CARGO_TERM_QUIET",
        "CARGO_TERM_VERBOSE",
        "CARGO_INCREMENTAL",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "GIT_TERMINAL_PROMPT",
        "DEBIAN_FRONTEND",
    ];
    NAMES.contains(&name) || name.starts_with("LC_")
}

/// Variables bash itself runs as code or reads commands from.
pub fn is_code_variable(name: &str) -> bool {
    matches!(
        name,
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "PROMPT_COMMAND" | "BASH_ENV" | "ENV"
    ) || name.starts_with("BASH_FUNC_")
}

/// One global option: its spellings, whether it takes a value, and whether skipping it keeps
/// an allow rule meaningful (`git -C dir status` is still `git status`; `git -c
/// core.pager=... status` is not, it can run anything).
struct GlobalOption {
    names: &'static [&'static str],
    value: bool,
    harmless: bool,
}

const fn opt(names: &'static [&'static str], value: bool, harmless: bool) -> GlobalOption {
    GlobalOption {
        names,
        value,
        harmless,
    }
}

const GIT: &[GlobalOption] = &[
    opt(&["-C"], true, true),
    opt(
        &[
            "--no-pager",
            "-P",
            "-p",
            "--paginate",
            "--no-optional-locks",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--no-replace-objects",
            "--bare",
            "--no-advice",
        ],
        false,
        true,
    ),
    opt(
        &[
            "-c",
            "--config-env",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--attr-source",
        ],
        true,
        false,
    ),
    opt(
        &["--exec-path", "--html-path", "--man-path", "--info-path"],
        false,
        false,
    ),
];

const CARGO: &[GlobalOption] = &[
    opt(
        &[
            "-v",
            "-vv",
            "--verbose",
            "-q",
            "--quiet",
            "--frozen",
            "--locked",
            "--offline",
        ],
        false,
        true,
    ),
    opt(&["--color", "-Z", "-C"], true, true),
    opt(&["--config"], true, false),
];

const NPM: &[GlobalOption] = &[
    opt(
        &["--prefix", "-w", "--workspace", "--loglevel", "--color"],
        true,
        true,
    ),
    opt(
        &[
            "-s",
            "--silent",
            "-q",
            "--quiet",
            "-d",
            "--workspaces",
            "--no-color",
            "-g",
            "--global",
        ],
        false,
        true,
    ),
    opt(
        &[
            "--userconfig",
            "--globalconfig",
            "--script-shell",
            "--registry",
        ],
        true,
        false,
    ),
];

const PNPM_YARN: &[GlobalOption] = &[
    opt(
        &["-C", "--dir", "--cwd", "--filter", "-F", "--loglevel"],
        true,
        true,
    ),
    opt(
        &[
            "-s",
            "--silent",
            "-r",
            "--recursive",
            "-w",
            "--workspace-root",
        ],
        false,
        true,
    ),
];

const DOCKER: &[GlobalOption] = &[
    opt(&["-l", "--log-level"], true, true),
    opt(&["-D", "--debug", "--tls", "--tlsverify"], false, true),
    opt(
        &[
            "-H",
            "--host",
            "-c",
            "--context",
            "--config",
            "--tlscacert",
            "--tlscert",
            "--tlskey",
        ],
        true,
        false,
    ),
];

const KUBECTL: &[GlobalOption] = &[
    opt(
        &["-n", "--namespace", "--context", "--cluster", "-v", "--v"],
        true,
        true,
    ),
    opt(
        &[
            "--kubeconfig",
            "--user",
            "-s",
            "--server",
            "--token",
            "--as",
            "--as-group",
            "--certificate-authority",
            "--client-certificate",
            "--client-key",
        ],
        true,
        false,
    ),
    opt(&["--insecure-skip-tls-verify"], false, false),
];

const GO: &[GlobalOption] = &[opt(&["-C"], true, true)];

fn global_options(program: &str) -> Option<&'static [GlobalOption]> {
    Some(match program {
        "git" => GIT,
        "cargo" => CARGO,
        "npm" => NPM,
        "pnpm" | "yarn" => PNPM_YARN,
        "docker" | "podman" => DOCKER,
        "kubectl" => KUBECTL,
        "go" => GO,
        _ => return None,
    })
}

/// `words` (program first, as its basename) without the program's global options before the
/// subcommand: `git -C . push` is `git push`. With `harmless_only`, skipping stops at an
/// option that changes what the program may run. An option Ling does not know, or a word only
/// known at run time, leaves a dynamic word in its place, so nothing can match past it
/// without saying the result is unknown. `None` when nothing was skipped.
pub fn skip_global_options(words: &[Word], harmless_only: bool) -> Option<Vec<Word>> {
    let program = words.first()?.lit()?;
    let options = global_options(program)?;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(text) = word.lit() else {
            break;
        };
        if program == "cargo" && text.starts_with('+') && i == 1 {
            i += 1;
            continue;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        if text == "--" {
            i += 1;
            break;
        }
        let Some((found, attached)) = find_option(options, text) else {
            // Not an option Ling knows: where the subcommand starts is unknown.
            if harmless_only {
                break;
            }
            let mut out = vec![words[0].clone(), Word::dynamic(text, true)];
            out.extend_from_slice(&words[i + 1..]);
            return Some(out);
        };
        if harmless_only && !found.harmless {
            break;
        }
        i += if found.value && !attached { 2 } else { 1 };
    }
    if i == 1 {
        return None;
    }
    let mut out = vec![words[0].clone()];
    out.extend_from_slice(words.get(i..).unwrap_or_default());
    Some(out)
}

/// The option `text` is, and whether its value is attached (`--git-dir=x`, `-Cdir`).
fn find_option<'a>(options: &'a [GlobalOption], text: &str) -> Option<(&'a GlobalOption, bool)> {
    for option in options {
        for name in option.names {
            if text == *name {
                return Some((option, false));
            }
            let Some(rest) = text.strip_prefix(name) else {
                continue;
            };
            if name.starts_with("--") && rest.starts_with('=') {
                return Some((option, true));
            }
            if !name.starts_with("--") && name.len() == 2 && option.value && !rest.is_empty() {
                return Some((option, true));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split(' ').map(Word::literal).collect()
    }

    fn texts(words: Option<Vec<Word>>) -> Option<String> {
        words.map(|w| super::super::words::render_words(&w))
    }

    #[test]
    fn global_options_are_skipped_before_the_subcommand() {
        let all = |t: &str| texts(skip_global_options(&words(t), false));
        let harmless = |t: &str| texts(skip_global_options(&words(t), true));
        assert_eq!(all("git -C . push").as_deref(), Some("git push"));
        assert_eq!(all("git -c k=v push").as_deref(), Some("git push"));
        assert_eq!(
            all("git --git-dir=x --no-pager push").as_deref(),
            Some("git push")
        );
        assert_eq!(all("git -Csub push").as_deref(), Some("git push"));
        assert_eq!(all("cargo +nightly test").as_deref(), Some("cargo test"));
        assert_eq!(all("npm --prefix web test").as_deref(), Some("npm test"));
        assert_eq!(all("git push"), None);
        assert_eq!(all("ls -la"), None);
        assert_eq!(all("git --weird push").as_deref(), Some("git --weird push"));
        assert!(skip_global_options(&words("git --weird push"), false).unwrap()[1].dynamic);
        assert_eq!(harmless("git -C sub status").as_deref(), Some("git status"));
        assert_eq!(harmless("git -c core.pager=x status"), None);
        assert_eq!(
            harmless("git -C a -c x=y status").as_deref(),
            Some("git -c x=y status")
        );
    }

    #[test]
    fn interpreters_and_env_names() {
        assert!(is_interpreter("python3.12") && is_interpreter("node") && is_interpreter("sh"));
        assert!(!is_interpreter("ls") && !is_interpreter("python-config"));
        assert!(is_harmless_env("LC_ALL") && !is_harmless_env("GIT_DIR"));
        assert!(is_code_variable("PS4") && is_code_variable("BASH_FUNC_ls%%"));
    }
}
