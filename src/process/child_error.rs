//! Why [`ChildEnv`](super::ChildEnv) could not make the command of a child: the error of its
//! `command`, `tied_command`, `sandboxed_command` and `session_command`, each message saying
//! what to change.

use crate::config::code_check::CodeChanged;

/// A child Ling was asked to start cannot be started as asked.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// A sandbox was asked for, and only the trampoline can apply one.
    #[error(
        "the shell sandbox needs Ling's trampoline (`ling __ling-exec`), which this process \
         cannot start; use --sandbox off"
    )]
    NoTrampoline,
    /// A file the settings' `env` makes every program load is not what it was trusted as.
    #[error(transparent)]
    CodeChanged(#[from] CodeChanged),
    /// The program is not on a `PATH` folder a sandboxed command cannot write.
    #[error("cannot run `{program}`: {source}")]
    NotFound {
        program: String,
        source: std::io::Error,
    },
    /// The pipe the trampoline reports what the shell left running on.
    #[error("cannot make the report pipe: {0}")]
    ReportPipe(std::io::Error),
}
