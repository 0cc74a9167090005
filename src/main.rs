use std::process::ExitCode;

fn main() -> ExitCode {
    // Ling starting a child through itself: before clap and the async runtime, so that the
    // detour costs next to nothing. Returns only when the child's program could not be run.
    if let Some(failure) = ling::process::exec::run_if_requested() {
        ling::ui::output::stderr_line(format!("ling: {failure}"));
        return failure.exit_code().into();
    }
    match ling::run() {
        Ok(exit) => exit.into(),
        Err(e) => {
            ling::ui::output::stderr_line(format!("error: {e}"));
            e.exit().into()
        }
    }
}
