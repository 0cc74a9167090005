//! The SQLite authorizer of the read-only connection: it allows reading, selecting, recursive
//! CTEs, schema-reporting pragmas and reading a setting, and denies everything else at prepare
//! time (writes, DDL, ATTACH/DETACH, transactions, setting pragmas, `load_extension`), recording
//! why, so the refusal the model reads names what was refused.

use std::sync::Mutex;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// Pragmas that only report on the schema; their argument is a table or index name.
const SCHEMA_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
];

/// Pragmas that are settings: reading them (no value) is allowed, setting them is not.
/// `journal_mode` is not among them: even asked, it opens the write-ahead log of a WAL database.
const SETTING_PRAGMAS: &[&str] = &[
    "application_id",
    "auto_vacuum",
    "cache_size",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "encoding",
    "foreign_keys",
    "freelist_count",
    "function_list",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "schema_version",
    "user_version",
];

/// The authorizer: reading and selecting is allowed, so are schema-reporting pragmas and reading a
/// setting; everything else (writes, DDL, ATTACH, transactions, setting pragmas, load_extension)
/// is denied at prepare time, and recorded so the refusal can name it.
pub fn authorize(ctx: &AuthContext<'_>, denied: &Mutex<Option<Denial>>) -> Authorization {
    let refusal = match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => None,
        AuthAction::Function { function_name } => {
            if function_name.eq_ignore_ascii_case("load_extension") {
                Some("load_extension() is disabled".to_string())
            } else {
                None
            }
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let name = pragma_name.to_ascii_lowercase();
            if SCHEMA_PRAGMAS.contains(&name.as_str())
                || (pragma_value.is_none() && SETTING_PRAGMAS.contains(&name.as_str()))
            {
                None
            } else if pragma_value.is_some() {
                Some(format!("setting PRAGMA {pragma_name} is not allowed"))
            } else {
                Some(format!("PRAGMA {pragma_name} is not allowed"))
            }
        }
        AuthAction::Attach { filename } => Some(format!("ATTACH of \"{filename}\" is not allowed")),
        AuthAction::Detach { .. } => Some("DETACH is not allowed".to_string()),
        AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => {
            Some("transaction control is not allowed".to_string())
        }
        AuthAction::Insert { table_name } => {
            Some(format!("INSERT into {table_name} is not allowed"))
        }
        AuthAction::Update { table_name, .. } => {
            Some(format!("UPDATE of {table_name} is not allowed"))
        }
        AuthAction::Delete { table_name } => {
            Some(format!("DELETE from {table_name} is not allowed"))
        }
        ref other => Some(format!("{} is not allowed", action_name(other))),
    };
    match refusal {
        None => Authorization::Allow,
        Some(reason) => {
            // DDL first asks to write the schema table, and SQLite may stop there; when it does
            // go on to ask for the DDL itself (ANALYZE), that says more and wins.
            let schema_write = matches!(
                ctx.action,
                AuthAction::Insert { table_name } | AuthAction::Delete { table_name }
                    | AuthAction::Update { table_name, .. } if is_schema_table(table_name)
            );
            let denial = if schema_write {
                Denial {
                    reason: "changing the schema (CREATE, DROP, ALTER, ...) is not allowed"
                        .to_string(),
                    specific: false,
                }
            } else {
                Denial {
                    reason,
                    specific: true,
                }
            };
            if let Ok(mut d) = denied.lock()
                && d.as_ref()
                    .is_none_or(|old| !old.specific && denial.specific)
            {
                *d = Some(denial);
            }
            Authorization::Deny
        }
    }
}

/// Why the authorizer refused a statement.
#[derive(Debug, Clone)]
pub struct Denial {
    pub reason: String,
    /// False for the schema-table writes that precede a more specific DDL refusal.
    specific: bool,
}

fn is_schema_table(name: &str) -> bool {
    [
        "sqlite_master",
        "sqlite_temp_master",
        "sqlite_schema",
        "sqlite_temp_schema",
    ]
    .iter()
    .any(|t| name.eq_ignore_ascii_case(t))
}

/// A short name for the actions that are refused without a custom message (DDL and friends).
fn action_name(action: &AuthAction<'_>) -> String {
    let debug = format!("{action:?}");
    let variant = debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or("this statement");
    let mut words = String::new();
    for (i, ch) in variant.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            words.push(' ');
        }
        words.push(ch.to_ascii_uppercase());
    }
    words
}
