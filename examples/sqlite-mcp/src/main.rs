//! `ling-sqlite-mcp`: the example MCP server shipped with Ling. It serves one SQLite database,
//! read-only, over stdio (`ling-sqlite-mcp <database-path>`), and can write a small demo database
//! (`--init-demo <path>`, or `--create-demo-if-missing <database-path>` to write it first when the
//! file is not there, which the repository's own `.ling/mcp.json` uses). It is self-contained: its own JSON-RPC loop, nothing from the `ling`
//! library. This file parses the command line, opens the database before any protocol traffic
//! (so a bad path is a clear error on stderr and a non-zero exit), and hands over to the server.

mod authorizer;
mod db;
mod demo;
mod protocol;
mod resources;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// Serve a SQLite database, read-only, to MCP clients over stdio.
#[derive(Parser)]
#[command(
    name = "ling-sqlite-mcp",
    version,
    after_help = "Examples:\n  ling-sqlite-mcp data/demo.sqlite\n  ling-sqlite-mcp --init-demo data/demo.sqlite\n  ling-sqlite-mcp --create-demo-if-missing data/demo.sqlite"
)]
struct Cli {
    /// The SQLite file to serve (it must exist; it is never modified).
    #[arg(value_name = "DATABASE-PATH")]
    database: Option<PathBuf>,

    /// Create a small demo database at PATH and exit.
    #[arg(long, value_name = "PATH", conflicts_with = "database")]
    init_demo: Option<PathBuf>,

    /// With --init-demo: replace PATH if it already exists.
    #[arg(long, requires = "init_demo")]
    force: bool,

    /// Create the demo database at DATABASE-PATH first when no file is there, then serve it.
    #[arg(long, requires = "database")]
    create_demo_if_missing: bool,

    /// Cut a query's rows once their JSON reaches this many bytes (the result says so).
    #[arg(long, value_name = "N", default_value_t = db::DEFAULT_MAX_RESULT_BYTES,
          value_parser = clap::value_parser!(u64).range(1024..))]
    max_result_bytes: u64,

    /// The most memory SQLite may use, in MiB; a query needing more fails with a clear error.
    #[arg(long, value_name = "N", default_value_t = db::DEFAULT_HEAP_LIMIT_MIB,
          value_parser = clap::value_parser!(u64).range(8..=65536))]
    heap_limit_mib: u64,

    /// Interrupt a query running longer than this many milliseconds.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    query_timeout_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(path) = &cli.init_demo {
        return match demo::create(path, cli.force) {
            Ok(summary) => {
                let rows: Vec<String> = summary
                    .rows
                    .iter()
                    .map(|(table, n)| format!("{table}: {n}"))
                    .collect();
                eprintln!(
                    "ling-sqlite-mcp: created demo database {} ({})",
                    summary.path.display(),
                    rows.join(", ")
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ling-sqlite-mcp: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(path) = cli.database else {
        eprintln!(
            "ling-sqlite-mcp: missing <DATABASE-PATH>\n\
             usage: ling-sqlite-mcp <DATABASE-PATH>  (or --init-demo <PATH>; see --help)"
        );
        return ExitCode::from(2);
    };
    if cli.create_demo_if_missing && !path.exists() {
        match demo::create(&path, false) {
            Ok(summary) => eprintln!(
                "ling-sqlite-mcp: {} was missing; created the demo database there",
                summary.path.display()
            ),
            // Another server started at the same moment may have just written it.
            Err(_) if path.exists() => {}
            Err(e) => {
                eprintln!("ling-sqlite-mcp: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let limits = db::Limits {
        timeout: Duration::from_millis(cli.query_timeout_ms),
        max_result_bytes: usize::try_from(cli.max_result_bytes).unwrap_or(usize::MAX),
        heap_limit_bytes: cli.heap_limit_mib.saturating_mul(1 << 20),
    };
    let database = match db::Database::open(&path, limits) {
        Ok(database) => database,
        Err(e) => {
            eprintln!("ling-sqlite-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "ling-sqlite-mcp {}: serving {} read-only over stdio (query timeout {} ms)",
        env!("CARGO_PKG_VERSION"),
        path.display(),
        cli.query_timeout_ms
    );
    let stdin = std::io::BufReader::new(std::io::stdin());
    protocol::Server::new(database).run(stdin, std::io::stdout().lock());
    ExitCode::SUCCESS
}
