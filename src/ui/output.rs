//! Plain writes to stdout and stderr for commands that are not the REPL (`ling mcp list`,
//! `ling hooks run`...). A closed stdout pipe ends the program quietly (`ling ... | head -1`).

use std::io::Write;

/// Writes text to stdout as it is (add the newline yourself). A broken pipe exits quietly.
pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        exit_on_broken_pipe(&e);
    }
}

pub fn stdout_line(text: &str) {
    stdout(&format!("{text}\n"));
}

/// Writes one line to stderr; errors writing to stderr are ignored (nowhere left to report them).
pub fn stderr_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

pub fn exit_on_broken_pipe(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}
