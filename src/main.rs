use std::process::ExitCode;

fn main() -> ExitCode {
    // Ling starting a child through itself: before clap and the async runtime, so that the
    // detour costs next to nothing. Returns only when the child's program could not be run.
    if let Some(failure) = ling::process::exec::run_if_requested() {
        ling::ui::output::stderr_line(format!("ling: {failure}"));
        return failure.exit_code().into();
    }
    // Ling reading a fetched PDF in a child of its own (src/tools/pdf_text.rs): its answer is
    // all it writes.
    if let Some(answer) = ling::tools::pdf_text::answer_if_requested() {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        return match stdout.write_all(&answer).and_then(|()| stdout.flush()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    match ling::run() {
        Ok(exit) => exit.into(),
        Err(e) => {
            ling::ui::output::stderr_line(format!("error: {e}"));
            e.exit().into()
        }
    }
}
