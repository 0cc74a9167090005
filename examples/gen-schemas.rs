//! Writes the JSON Schemas of `settings.json`, `hooks.json` and `mcp.json`, generated from the
//! config types (`ling::config::schema`), into a folder: `gen-schemas [DIR]` (default
//! `docs/schemas`). `scripts/gen-schemas.sh` runs it; a test (`tests/schemas.rs`) fails when
//! the checked-in files differ from what it would write.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "docs/schemas".into()),
    );
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("gen-schemas: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for schema in ling::config::schema::file_schemas() {
        let path = dir.join(&schema.schema_file);
        if let Err(e) = std::fs::write(&path, schema.text()) {
            eprintln!("gen-schemas: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} ({})", path.display(), schema.config_file);
    }
    ExitCode::SUCCESS
}
