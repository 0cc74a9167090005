//! What Ling and the trampoline agree on: the [`MARKER`] that starts it, the `--` that ends its
//! options, the variables Ling hands over for the program only ([`PASS_PREFIX`]), and how the
//! trampoline fails ([`ExecError`], with the exit codes of `env` and `timeout`).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;

/// The hidden first argument of the trampoline. No prompt or subcommand looks like it, and
/// `main` takes it before clap sees anything.
pub const MARKER: &str = "__ling-exec";

/// Ends the options; what follows is the program and its arguments, passed on untouched.
pub(super) const END_OF_OPTIONS: &str = "--";

/// The prefix under which Ling hands the trampoline the variables the dynamic loader would act
/// on (`LING_EXEC_PASS_LD_PRELOAD=./x.so`): inert for the trampoline, which sets them under
/// their own names for the program only ([`crate::process::ChildEnv::spawn`]).
pub const PASS_PREFIX: &str = "LING_EXEC_PASS_";

/// Why the trampoline did not become the program. The exit codes follow `env` and `timeout`:
/// 125 the trampoline itself failed, 126 the program could not be run, 127 it was not found.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{MARKER} {0}; this entry point is Ling's own way of starting programs, not a command")]
    Usage(String),
    #[error("{0}")]
    Setup(String),
    #[error("cannot set up the shell sandbox ({0}); run with --sandbox off to go without it")]
    Sandbox(#[from] crate::process::sandbox::EnforceError),
    #[error("Ling (pid {parent}) exited before `{program}` could start; not starting it")]
    ParentGone { parent: u32, program: String },
    #[error("cannot run `{program}`: {source}")]
    Exec { program: String, source: io::Error },
}

impl ExecError {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::Setup(_) | Self::Sandbox(_) | Self::ParentGone { .. } => 125,
            Self::Exec { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            Self::Exec { .. } => 126,
        }
    }
}

/// The variables handed over for the program ([`PASS_PREFIX`]), under their own names. An
/// error when the trampoline itself was started with one of the variables the loader acts on:
/// then it has loaded what they name, which Ling never lets happen.
pub(super) fn passed(
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, ExecError> {
    let mut env = Vec::new();
    for (name, value) in vars {
        if let Some(own) = name.as_bytes().strip_prefix(PASS_PREFIX.as_bytes()) {
            env.push((OsStr::from_bytes(own).to_os_string(), value));
        } else if crate::process::code_vars::read_at_start(&name.to_string_lossy()) {
            return Err(ExecError::Usage(format!(
                "was started with {} set, which only the program it starts may get",
                name.to_string_lossy()
            )));
        }
    }
    Ok(env)
}

/// Sets the handed-over variables for the program under their own names, and not under the
/// prefix.
pub(crate) fn set_passed(cmd: &mut std::process::Command, env: &[(OsString, OsString)]) {
    for (name, value) in env {
        let mut passed = OsString::from(PASS_PREFIX);
        passed.push(name);
        cmd.env_remove(passed).env(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_variables_come_only_handed_over() {
        let vars = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect::<Vec<_>>()
                .into_iter()
        };
        let env = passed(vars(&[
            ("PATH", "/usr/bin"),
            ("LING_EXEC_PASS_LD_PRELOAD", "./x.so"),
        ]))
        .unwrap();
        assert_eq!(env, [("LD_PRELOAD".into(), "./x.so".into())]);
        let err = passed(vars(&[("LD_PRELOAD", "./x.so")])).unwrap_err();
        assert!(
            err.to_string().contains("started with LD_PRELOAD set"),
            "{err}"
        );
        let mut cmd = std::process::Command::new("true");
        set_passed(&mut cmd, &env);
        let set: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            set,
            [
                (OsStr::new("LD_PRELOAD"), Some(OsStr::new("./x.so"))),
                (OsStr::new("LING_EXEC_PASS_LD_PRELOAD"), None)
            ]
        );
    }

    #[test]
    fn exit_codes_follow_env() {
        let exec = |kind| ExecError::Exec {
            program: "x".into(),
            source: io::Error::from(kind),
        };
        assert_eq!(exec(io::ErrorKind::NotFound).exit_code(), 127);
        assert_eq!(exec(io::ErrorKind::PermissionDenied).exit_code(), 126);
        assert_eq!(ExecError::Usage("x".into()).exit_code(), 125);
    }
}
