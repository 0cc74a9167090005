//! Resources: each table's and view's schema at `sqlite:///<table>/schema` (the table name
//! percent-encoded), as text: the CREATE statement, its indexes and triggers, and a column summary.
//! `resources/list`, `resources/read` (unknown URI → -32002) and the one URI template.

use serde_json::{Map, Value, json};

use crate::db::{Database, DbError};
use crate::protocol::{INTERNAL_ERROR, RESOURCE_NOT_FOUND, RpcError};

const PREFIX: &str = "sqlite:///";
const SUFFIX: &str = "/schema";
const MIME: &str = "text/plain";

pub fn templates() -> Value {
    json!([{
        "uriTemplate": "sqlite:///{table}/schema",
        "name": "table-schema",
        "title": "Table schema",
        "description": "The CREATE statement, indexes and columns of one table or view.",
        "mimeType": MIME,
    }])
}

/// `resources/list`: one schema resource per table and view.
pub fn list(db: &Database) -> Result<Value, RpcError> {
    let tables = db.table_names().map_err(internal)?;
    let resources: Vec<Value> = tables
        .into_iter()
        .map(|(name, kind)| {
            json!({
                "uri": schema_uri(&name),
                "name": format!("{name} schema"),
                "description": format!("Schema of the {kind} {name}"),
                "mimeType": MIME,
            })
        })
        .collect();
    Ok(json!({"resources": resources}))
}

/// `resources/read`: the schema text of the table the URI names.
pub fn read(db: &Database, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("resources/read needs \"uri\" (a string)"))?;
    let not_found = || RpcError {
        code: RESOURCE_NOT_FOUND,
        message: format!("resource not found: {uri}"),
        data: Some(json!({"uri": uri})),
    };
    let table = table_of(uri).ok_or_else(not_found)?;
    let (name, kind, sql) = match db.find_table(&table) {
        Ok(found) => found,
        Err(DbError::UnknownTable { .. }) => return Err(not_found()),
        Err(e) => return Err(internal(e)),
    };
    let description = db.describe_table(&name).map_err(internal)?;
    let dependents = db.dependent_sql(&name).map_err(internal)?;
    let mut text = format!("-- {kind} {name}\n{sql};\n");
    for statement in dependents {
        text.push_str(&statement);
        text.push_str(";\n");
    }
    text.push_str("\n-- columns\n");
    for col in description["columns"].as_array().into_iter().flatten() {
        text.push_str(&column_line(col));
    }
    for fk in description["foreign_keys"].as_array().into_iter().flatten() {
        text.push_str(&format!(
            "-- foreign key: {} -> {}({})\n",
            fk["column"].as_str().unwrap_or_default(),
            fk["references_table"].as_str().unwrap_or_default(),
            fk["references_column"].as_str().unwrap_or("primary key"),
        ));
    }
    Ok(json!({"contents": [{"uri": uri, "mimeType": MIME, "text": text}]}))
}

/// `--   name TYPE NOT NULL DEFAULT x PRIMARY KEY` for one column of `describe_table`.
fn column_line(col: &Value) -> String {
    let mut line = format!(
        "--   {} {}",
        col["name"].as_str().unwrap_or_default(),
        col["type"]
            .as_str()
            .filter(|t| !t.is_empty())
            .unwrap_or("(no type)")
    );
    if col["not_null"].as_bool() == Some(true) {
        line.push_str(" NOT NULL");
    }
    if let Some(default) = col["default"].as_str() {
        line.push_str(&format!(" DEFAULT {default}"));
    }
    if col["primary_key"].as_bool() == Some(true) {
        line.push_str(" PRIMARY KEY");
    }
    line.push('\n');
    line
}

pub fn schema_uri(table: &str) -> String {
    format!("{PREFIX}{}{SUFFIX}", percent_encode(table))
}

/// The table a schema URI names, or None when the URI is not one of ours.
fn table_of(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if encoded.is_empty() || encoded.contains('/') {
        return None;
    }
    percent_decode(encoded)
}

/// Percent-encodes everything but RFC 3986 unreserved characters, so any table name (spaces,
/// slashes, quotes, non-ASCII) makes one path segment.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn internal(e: DbError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_any_table_name() {
        for name in ["orders", "order items", "a/b", "naïve\"q", "100%"] {
            let uri = schema_uri(name);
            assert_eq!(table_of(&uri).as_deref(), Some(name), "{uri}");
        }
        assert_eq!(schema_uri("order items"), "sqlite:///order%20items/schema");
        assert_eq!(table_of("sqlite:///orders/columns"), None);
        assert_eq!(table_of("sqlite:///%zz/schema"), None);
        assert_eq!(table_of("file:///orders/schema"), None);
    }
}
