//! [`Unknown`]: why what a wrapper runs cannot be known from the command's text. The reason
//! becomes one of the analysis's opaque reasons, so the command needs an allow rule of its own.

/// Why the command a wrapper runs is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unknown {
    #[error(
        "`{program}` is given `{word}`, an option Ling does not know, so what it runs is unknown"
    )]
    Option { program: String, word: String },
    #[error(
        "`{program}` is given `{word}`, only known when the command runs, where its options or \
         the command it runs are"
    )]
    DynamicOption { program: String, word: String },
    #[error(
        "`{program}` is given `{word}`, which may expand to several words, so where the command \
         it runs starts is unknown"
    )]
    SplitOperand { program: String, word: String },
    /// `sudo -s`, `doas -s`: `shell` is how the command starts it.
    #[error("`{shell}` starts a shell that reads its commands from standard input")]
    Shell { shell: &'static str },
    /// `su` or `runuser` without `-c`.
    #[error("`{0}` without `-c` starts a shell that reads its commands from standard input")]
    NoText(String),
    /// `chroot`, `nsenter`, `unshare`, `pkexec` without a command.
    #[error("`{0}` without a command starts a shell that reads its commands from standard input")]
    NoCommand(String),
    #[error("`sg` without a command starts a shell that reads standard input")]
    SgShell,
    #[error("`env -S` splits `{0}`, only known when the command runs")]
    EnvSplitDynamic(String),
    #[error("`env -S` is nested too deeply to follow")]
    EnvSplitNested,
    #[error("`env -S` is given text with an unterminated quote")]
    EnvSplitQuote,
    #[error(
        "`script` without -c runs an interactive shell whose commands are only known when it runs"
    )]
    InteractiveScript,
}
