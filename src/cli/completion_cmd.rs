//! `ling completion SHELL`: the shell completion script, generated from the clap definition
//! (clap_complete), so it always knows every subcommand and flag of this build.

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, Exit};
use crate::ui::output::stdout_data;

pub fn run(shell: Shell) -> Exit {
    stdout_data(&script(shell));
    Exit::Success
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ling", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use clap::Parser;

    use super::*;
    use crate::cli::Command as Subcommand;

    /// Every subcommand and long flag of `cmd` and below.
    fn names(cmd: &clap::Command, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                out.push(format!("--{long}"));
            }
        }
        for sub in cmd.get_subcommands() {
            out.push(sub.get_name().to_string());
            names(sub, out);
        }
    }

    #[test]
    fn the_command_line_names_a_shell() {
        for (word, shell) in [
            ("bash", Shell::Bash),
            ("zsh", Shell::Zsh),
            ("fish", Shell::Fish),
        ] {
            let cli = Cli::try_parse_from(["ling", "completion", word]).unwrap();
            assert!(matches!(cli.command, Some(Subcommand::Completion { shell: s }) if s == shell));
        }
        let error = Cli::try_parse_from(["ling", "completion", "tcsh"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(Cli::try_parse_from(["ling", "completion"]).is_err());
    }

    #[test]
    fn every_script_knows_every_subcommand_and_flag() {
        let mut all = Vec::new();
        names(&Cli::command(), &mut all);
        for expected in [
            "mcp",
            "hooks",
            "trust",
            "completion",
            "--permission-mode",
            "--strict-mcp-config",
        ] {
            assert!(
                all.iter().any(|n| n == expected),
                "{expected} not in {all:?}"
            );
        }
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let script = script(shell);
            for name in &all {
                // fish names a long flag `-l print`.
                let spelled = match (shell, name.strip_prefix("--")) {
                    (Shell::Fish, Some(long)) => format!("-l {long}"),
                    _ => name.clone(),
                };
                assert!(script.contains(&spelled), "{shell}: no {spelled}");
            }
        }
    }

    /// bash sources the script without a word on stderr, and then completes `ling mc` to
    /// `mcp` and `ling mcp add --tr` to `--transport`, as it would at a prompt.
    #[test]
    fn bash_completes_with_the_bash_script() {
        const COMPLETE: &str = r#"source /dev/stdin && complete -p ling
            for line in "ling mc" "ling mcp add --tr"; do
                read -ra COMP_WORDS <<< "$line"
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMPREPLY=()
                _ling ling "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                echo "${COMPREPLY[*]}"
            done"#;
        let mut bash = Command::new("bash")
            .args(["--norc", "-c", COMPLETE])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        bash.stdin
            .take()
            .unwrap()
            .write_all(script(Shell::Bash).as_bytes())
            .unwrap();
        let out = bash.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "{stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 3, "{stdout}");
        assert!(lines[0].contains("-F _ling"), "{stdout}");
        assert_eq!(lines[1..], ["mcp", "--transport"]);
    }
}
