use std::process::ExitCode;

fn main() -> ExitCode {
    match ling::run() {
        Ok(exit) => exit.into(),
        Err(e) => {
            ling::ui::output::stderr_line(format!("error: {e}"));
            e.exit().into()
        }
    }
}
