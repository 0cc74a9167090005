fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(ling::run() as u8)
}
