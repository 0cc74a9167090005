//! The three tools: `list_tables`, `describe_table` and `query`, their `tools/list` entries
//! (input and output schemas, read-only annotations) and `tools/call`. Problems the model can fix
//! (bad arguments, SQL errors, refused writes, timeouts) come back as `isError` results naming the
//! problem; only an unknown tool or a malformed call is a JSON-RPC error.

use std::time::Instant;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::db::{Database, DbError, QueryResult};
use crate::protocol::{Level, LogEvent, RpcError};

pub const DEFAULT_LIMIT: usize = 500;
pub const MAX_LIMIT: usize = 10_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribeArgs {
    table: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    sql: String,
    #[serde(default)]
    params: Vec<Value>,
    limit: Option<u64>,
}

/// The `tools` array of `tools/list`.
pub fn definitions() -> Value {
    json!([
        {
            "name": "list_tables",
            "title": "List tables",
            "description": "List every table and view in the database with its row count.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": annotations("List tables"),
        },
        {
            "name": "describe_table",
            "title": "Describe a table",
            "description": "Show a table's or view's columns (type, NOT NULL, default, primary \
                key), foreign keys, indexes and CREATE statement.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "table": {"type": "string", "description": "Table or view name."}
                },
                "required": ["table"],
                "additionalProperties": false,
            },
            "annotations": annotations("Describe a table"),
        },
        {
            "name": "query",
            "title": "Run a read-only SQL query",
            "description": format!(
                "Run exactly one read-only SQL statement (SELECT, WITH ... SELECT, EXPLAIN, \
                 schema pragmas) and return its rows. Bind values with \"?\" placeholders and \
                 params instead of quoting them into the SQL. At most limit rows are returned \
                 (default {DEFAULT_LIMIT}, max {MAX_LIMIT}) and at most about 1 MiB of them; truncated says \
                 whether more existed (and note why, when they were cut for size). \
                 Blobs come back as \"base64:...\" strings. Writes are refused."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "sql": {"type": "string", "description": "One SQL statement."},
                    "params": {
                        "type": "array",
                        "description": "Values for the ? placeholders, in order.",
                        "items": scalar_schema(),
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "description": format!("Maximum rows to return (default {DEFAULT_LIMIT})."),
                    },
                },
                "required": ["sql"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "columns": {"type": "array", "items": {"type": "string"}},
                    "rows": {
                        "type": "array",
                        "items": {"type": "array", "items": scalar_schema()},
                    },
                    "row_count": {"type": "integer", "minimum": 0},
                    "truncated": {"type": "boolean"},
                    "note": {
                        "type": "string",
                        "description": "Why the rows were cut, when they were cut for size.",
                    },
                },
                "required": ["columns", "rows", "row_count", "truncated"],
            },
            "annotations": annotations("Run a read-only SQL query"),
        },
    ])
}

/// A JSON scalar, as `anyOf` single types: a `type` array is legal JSON Schema but some model
/// APIs (Gemini's OpenAPI subset) accept only one type per schema; the Inspector warns about it.
fn scalar_schema() -> Value {
    json!({"anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
    ]})
}

/// Every tool only reads a local file: the same answer each time, nothing outside touched.
fn annotations(title: &str) -> Value {
    json!({
        "title": title,
        "readOnlyHint": true,
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
    })
}

/// `tools/call`: runs the named tool; `logs` collects what to tell the client's log.
pub fn call(
    db: &Database,
    params: &Map<String, Value>,
    logs: &mut Vec<LogEvent>,
) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs \"name\" (a string)"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(RpcError::invalid_params("\"arguments\" must be an object")),
    };
    let started = Instant::now();
    let outcome = match name {
        "list_tables" => args::<NoArgs>(name, arguments).map(|_| list_tables(db)),
        "describe_table" => {
            args::<DescribeArgs>(name, arguments).map(|a| describe_table(db, &a.table))
        }
        "query" => args::<QueryArgs>(name, arguments).map(|a| query(db, &a)),
        other => {
            return Err(RpcError::invalid_params(format!(
                "unknown tool \"{other}\"; this server has list_tables, describe_table, query"
            )));
        }
    };
    let result = outcome.unwrap_or_else(|message| Ok(error_result(&message)));
    let elapsed = started.elapsed().as_millis();
    Ok(match result {
        Ok(ok) => {
            logs.push(LogEvent {
                level: Level::Debug,
                message: format!("{name} finished in {elapsed} ms"),
            });
            ok
        }
        Err(e) => {
            let level = match e {
                DbError::Refused(_) | DbError::Timeout(_) => Level::Warning,
                _ => Level::Info,
            };
            logs.push(LogEvent {
                level,
                message: format!("{name} failed after {elapsed} ms: {e}"),
            });
            error_result(&e.to_string())
        }
    })
}

/// Typed arguments; a mismatch is a message for the model (an `isError` result), not a protocol
/// error, so it can correct the call.
fn args<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

fn list_tables(db: &Database) -> Result<Value, DbError> {
    let tables = db.list_tables()?;
    Ok(text_result(&json!({"tables": tables})))
}

fn describe_table(db: &Database, table: &str) -> Result<Value, DbError> {
    let description = db.describe_table(table)?;
    Ok(text_result(&description))
}

fn query(db: &Database, args: &QueryArgs) -> Result<Value, DbError> {
    let limit = match args.limit {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => n as usize,
        Some(n) => {
            return Ok(error_result(&format!(
                "limit must be between 1 and {MAX_LIMIT}; got {n}"
            )));
        }
    };
    let QueryResult {
        columns,
        rows,
        truncated,
        cut_at_bytes,
    } = db.query(&args.sql, &args.params, limit)?;
    let mut structured = json!({
        "columns": columns,
        "row_count": rows.len(),
        "truncated": truncated,
        "rows": rows,
    });
    if let Some(bytes) = cut_at_bytes {
        structured["note"] = json!(format!(
            "rows cut after {}: the result reached this server's {bytes}-byte size limit; \
             select fewer columns, aggregate, or page with LIMIT/OFFSET",
            rows_len(&structured)
        ));
    }
    let mut result = text_result(&structured);
    result["structuredContent"] = structured;
    Ok(result)
}

fn rows_len(structured: &Value) -> u64 {
    structured["row_count"].as_u64().unwrap_or(0)
}

/// A successful result whose one text block is the JSON of `value`.
fn text_result(value: &Value) -> Value {
    json!({
        "content": [{"type": "text", "text": value.to_string()}],
        "isError": false,
    })
}

fn error_result(message: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": message}],
        "isError": true,
    })
}
