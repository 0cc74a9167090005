//! The prompt of `ling -p`: the argument, piped stdin, or both.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use super::CliError;

/// How long a prompt given as an argument waits for piped stdin to say something before the
/// pipe is ignored (a parent that leaves stdin open but never writes must not hang the run).
const STDIN_WAIT: Duration = Duration::from_secs(1);

/// The prompt of a one-shot run: the argument, with piped stdin appended as context; or stdin
/// alone when there is no argument.
pub fn read_prompt(arg: Option<&str>) -> Result<String, CliError> {
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() || (arg.is_some() && !has_input(&stdin)) {
        String::new()
    } else {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::Usage(format!("cannot read stdin: {e}")))?;
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let prompt = match (arg, piped.trim().is_empty()) {
        (Some(arg), true) => arg.to_string(),
        (Some(arg), false) => format!("{arg}\n\n<stdin>\n{}\n</stdin>", piped.trim_end()),
        (None, false) => piped.trim_end().to_string(),
        (None, true) => {
            return Err(CliError::Usage(
                "no prompt: give one as an argument (ling -p \"PROMPT\") or pipe it on stdin"
                    .into(),
            ));
        }
    };
    if prompt.trim().is_empty() {
        return Err(CliError::Usage("the prompt is empty".into()));
    }
    Ok(prompt)
}

/// Whether stdin has something to read (data or end of file) within [`STDIN_WAIT`]. A file
/// always has; a pipe whose writer says nothing in that time is left alone.
fn has_input(stdin: &std::io::Stdin) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let wait = PollTimeout::try_from(STDIN_WAIT).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, wait) {
        Ok(ready) => ready > 0,
        // Not pollable (unusual for a file): reading is the only way to know.
        Err(_) => true,
    }
}
