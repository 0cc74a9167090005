//! `ling-exec`: the trampoline of `src/process/exec/` on its own, installed beside `ling`.
//! It does what `ling __ling-exec` does (the same arguments, after the same marker), but it is
//! a small binary that starts in a fraction of the time the whole `ling` takes, which every
//! `bash` tool command pays.

use std::process::ExitCode;

fn main() -> ExitCode {
    let failure = ling::process::exec::run_if_requested().unwrap_or_else(|| {
        ling::process::exec::ExecError::Usage(format!(
            "is the first argument `{}` needs",
            ling::process::exec::MARKER
        ))
    });
    // Only std here: printing through the UI module would link far more than this needs.
    eprintln!("ling: {failure}");
    failure.exit_code().into()
}
