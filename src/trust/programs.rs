//! What Ling knows of the programs a hook or server starts, for `code`: the interpreters and
//! the options that give them a script, inline code or a file to preload; package runners
//! (`npx`) and project runners (`uv run`); shell scripts by name or `#!` line. The variables
//! that make a program load code are `process::code_vars`'.

use std::ffi::OsStr;
use std::path::Path;

/// The command a project runner runs: `uv run [OPTIONS] CMD...`, `poetry run CMD...`,
/// `pipenv run`, `pdm run`, `hatch run`, `rye run`, `bundle exec`, `conda run [-n ENV]`.
pub(super) fn runner_command<'a>(name: &str, args: &'a [String]) -> Option<&'a [String]> {
    let verb = match name {
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "conda" | "mamba" => "run",
        "bundle" => "exec",
        _ => return None,
    };
    if args.first()? != verb {
        return None;
    }
    // Options of the runner, with a value for the ones that take one.
    const VALUED: &[&str] = &[
        "--with",
        "--python",
        "-p",
        "--project",
        "--directory",
        "--env-file",
        "--group",
        "--extra",
        "--package",
        "-n",
        "--name",
        "--prefix",
        "--index",
        "--from",
    ];
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') {
            break;
        }
        i += if VALUED.contains(&arg.as_str()) { 2 } else { 1 };
    }
    args.get(i..).filter(|rest| !rest.is_empty())
}

/// Whether a file is a shell script: a `.sh` name, or a `#!` line naming a POSIX shell.
pub(super) fn is_shell_script(path: &Path) -> bool {
    if path.extension() == Some(OsStr::new("sh")) {
        return true;
    }
    let Ok(text) = std::fs::read(path) else {
        return false;
    };
    let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
    let Some(line) = first.strip_prefix(b"#!") else {
        return false;
    };
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let program = words.next().unwrap_or_default();
    let program = if program.ends_with("/env") {
        words.find(|w| !w.starts_with('-')).unwrap_or_default()
    } else {
        program
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(
        name,
        "sh" | "bash" | "dash" | "ash" | "ksh" | "zsh" | "mksh"
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interpreter {
    Shell,
    Python,
    Node,
    Deno,
    Bun,
    Ruby,
    Perl,
    Php,
    Lua,
    Plain,
}

impl Interpreter {
    pub(super) fn of(name: &str) -> Option<Self> {
        let python = name
            .strip_prefix("python")
            .is_some_and(|v| v.is_empty() || v.chars().all(|c| c.is_ascii_digit() || c == '.'));
        Some(match name {
            "sh" | "bash" | "dash" | "ash" | "zsh" | "ksh" | "mksh" => Self::Shell,
            _ if python => Self::Python,
            "pypy" | "pypy3" => Self::Python,
            "node" | "nodejs" => Self::Node,
            "deno" => Self::Deno,
            "bun" => Self::Bun,
            "ruby" => Self::Ruby,
            "perl" => Self::Perl,
            "php" => Self::Php,
            "lua" | "luajit" => Self::Lua,
            "tsx" | "ts-node" | "Rscript" | "julia" => Self::Plain,
            _ => return None,
        })
    }

    pub(super) fn inline(self, flag: &str) -> bool {
        match self {
            Self::Shell => flag == "-c",
            Self::Python => flag == "-c",
            Self::Node | Self::Bun | Self::Deno => {
                matches!(flag, "-e" | "--eval" | "-p" | "--print")
            }
            Self::Ruby | Self::Lua => flag == "-e",
            Self::Perl => matches!(flag, "-e" | "-E"),
            Self::Php => flag == "-r",
            Self::Plain => matches!(flag, "-e" | "--eval"),
        }
    }

    pub(super) fn module(self, flag: &str) -> bool {
        self == Self::Python && flag == "-m"
    }

    /// Options whose value is a file of code to load.
    pub(super) fn code_value(self, flag: &str) -> bool {
        match self {
            Self::Node | Self::Bun | Self::Plain => matches!(
                flag,
                "-r" | "--require"
                    | "--import"
                    | "--loader"
                    | "--experimental-loader"
                    | "--preload"
            ),
            Self::Shell => matches!(flag, "--rcfile" | "--init-file"),
            Self::Ruby => flag == "-r",
            Self::Php => flag == "-f",
            _ => false,
        }
    }

    pub(super) fn takes_value(self, flag: &str) -> bool {
        match self {
            Self::Shell => matches!(flag, "-o" | "-O" | "+O" | "+o"),
            Self::Python => matches!(flag, "-W" | "-X" | "-Q"),
            Self::Ruby => matches!(flag, "-I" | "-C"),
            Self::Perl => matches!(flag, "-I" | "-M" | "-m"),
            Self::Lua => flag == "-l",
            Self::Node | Self::Deno | Self::Bun => {
                matches!(flag, "--env-file" | "--inspect-port" | "--title" | "-C")
            }
            _ => false,
        }
    }
}

/// A package runner, and how many of its words come before the package.
#[derive(Debug, Clone, Copy)]
pub(super) struct Launcher {
    pub(super) skip: usize,
}

impl Launcher {
    pub(super) fn of(name: &str, args: &[String]) -> Option<Self> {
        let first = args.first().map(String::as_str);
        match (name, first) {
            ("npx" | "bunx" | "pnpx", _) => Some(Self { skip: 0 }),
            ("npm", Some("exec" | "x")) | ("pnpm" | "yarn", Some("dlx" | "exec")) => {
                Some(Self { skip: 1 })
            }
            _ => None,
        }
    }
}
