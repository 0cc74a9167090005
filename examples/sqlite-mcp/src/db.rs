//! The read-only database: opening a file so that SQLite itself refuses every write (read-only open,
//! `query_only`, defensive mode, the authorizer of `authorizer.rs`, and `sqlite3_stmt_readonly` on
//! every statement), running one user statement with bound parameters, a row limit, a size limit
//! on the rows returned and a time limit, under SQLite's own length limit (`SQLITE_LIMIT_LENGTH`)
//! and hard heap limit (so one recursive query cannot take gigabytes), and the schema
//! introspection the tools and resources are built on.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::AuthContext;
use rusqlite::limits::Limit;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Batch, Connection, ErrorCode, InterruptHandle, OpenFlags};
use serde_json::{Value, json};

use crate::authorizer::{Denial, authorize};

/// Blobs up to this size are sent as base64; larger ones as a placeholder naming their size, so a
/// stray `SELECT` of an image column cannot flood the client.
const MAX_INLINE_BLOB: usize = 4096;
/// The default of `--max-result-bytes`: rows past this much JSON are cut (1 MiB).
pub const DEFAULT_MAX_RESULT_BYTES: u64 = 1 << 20;
/// The default of `--heap-limit-mib`: SQLite's hard heap limit.
pub const DEFAULT_HEAP_LIMIT_MIB: u64 = 256;
/// The longest string or blob SQLite may build (`SQLITE_LIMIT_LENGTH`, 8 MiB), so a runaway
/// `group_concat` or `printf` fails at once rather than growing to the heap limit.
pub const MAX_VALUE_BYTES: i32 = 8 << 20;

/// The bounds of every query.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A statement running longer is interrupted.
    pub timeout: Duration,
    /// Rows are cut once their JSON reaches this many bytes.
    pub max_result_bytes: usize,
    /// SQLite's hard heap limit (`PRAGMA hard_heap_limit`).
    pub heap_limit_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database file {path} does not exist; pass the path of an existing SQLite file")]
    Missing { path: PathBuf },
    #[error("cannot open {path} as a SQLite database: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("{path} already exists; pass --force to replace it")]
    Exists { path: PathBuf },
    #[error("cannot create the demo database at {path}: {reason}")]
    Create { path: PathBuf, reason: String },
    #[error("the query is empty; pass exactly one SQL statement")]
    Empty,
    #[error(
        "only one SQL statement is allowed per query; remove everything after the first statement"
    )]
    MultipleStatements,
    #[error("refused: this server is read-only; {0}")]
    Refused(String),
    #[error("the query was interrupted after the {0} ms time limit; narrow it or add a LIMIT")]
    Timeout(u64),
    #[error("the query was cancelled by the client")]
    Cancelled,
    #[error(
        "the query needed more memory than this server's {0} MiB limit (--heap-limit-mib); \
         narrow it (fewer rows, no huge sort or recursion) or add a LIMIT"
    )]
    OutOfMemory(u64),
    #[error(
        "a value grew over SQLite's {} MiB length limit; build smaller strings or blobs",
        MAX_VALUE_BYTES >> 20
    )]
    TooBig,
    #[error(
        "the first row alone is {size} bytes of JSON, over this server's {limit}-byte result \
         limit (--max-result-bytes); select fewer or shorter columns (e.g. substr(col, 1, 1000))"
    )]
    RowTooLarge { size: usize, limit: usize },
    #[error("parameter {index}: {reason}")]
    Param { index: usize, reason: String },
    #[error(
        "the statement has {expected} parameter placeholder(s) but {given} value(s) were given"
    )]
    ParamCount { expected: usize, given: usize },
    #[error("no table or view named \"{name}\"; existing: {existing}")]
    UnknownTable { name: String, existing: String },
    #[error("SQL error: {0}")]
    Sql(String),
    #[error("cannot start the query timer: {0}")]
    Timer(String),
}

/// What a read query returned, in the shape of the `query` tool's structured output.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub truncated: bool,
    /// Set when the rows were cut because they reached this many bytes of JSON.
    pub cut_at_bytes: Option<usize>,
}

/// The read-only connection plus the state the safety layers share.
pub struct Database {
    conn: Connection,
    path: PathBuf,
    limits: Limits,
    /// The most telling action the authorizer denied, so a refusal can say what was refused.
    denied: Arc<Mutex<Option<Denial>>>,
    /// Set by `cancel_current` (from the stdin reader thread) to tell a timeout from a cancel.
    cancelled: Arc<AtomicBool>,
}

/// Lets another thread stop the statement running now (a client's `notifications/cancelled`).
#[derive(Clone)]
pub struct Canceller {
    handle: Arc<InterruptHandle>,
    cancelled: Arc<AtomicBool>,
}

impl Canceller {
    pub fn cancel_current(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.handle.interrupt();
    }
}

/// `file:PATH?immutable=1`, with the path percent-encoded (RFC 3986 unreserved bytes and `/`
/// kept as they are).
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &byte in absolute.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

impl Database {
    /// Opens `path` read-only and proves it is a database by reading its schema, so a wrong path
    /// fails here, before any protocol traffic.
    pub fn open(path: &Path, limits: Limits) -> Result<Self, DbError> {
        if !path.exists() {
            return Err(DbError::Missing {
                path: path.to_path_buf(),
            });
        }
        let open_err = |e: rusqlite::Error| DbError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        // No SQLITE_OPEN_CREATE: the file must exist. The path is made into a `file:` URI here,
        // every byte but the unreserved ones percent-encoded, so the path itself cannot add
        // parameters (`mode=rw`). `immutable=1`: SQLite takes no locks and makes no `-wal`,
        // `-shm` or journal file beside the database, whatever its journal mode.
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let mut conn = Connection::open_with_flags(immutable_uri(path), flags).map_err(open_err)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(open_err)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
            .map_err(open_err)?;
        // Both before the authorizer, which refuses setting pragmas. The heap limit can only be
        // lowered by a later `PRAGMA hard_heap_limit`, never raised.
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            .map_err(open_err)?;
        conn.pragma_update(
            None,
            "hard_heap_limit",
            i64::try_from(limits.heap_limit_bytes).unwrap_or(i64::MAX),
        )
        .map_err(open_err)?;
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(open_err)?;
        let denied = Arc::new(Mutex::new(None));
        let record = Arc::clone(&denied);
        conn.authorizer(Some(move |ctx: AuthContext<'_>| authorize(&ctx, &record)))
            .map_err(open_err)?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            limits,
            denied,
            cancelled: Arc::new(AtomicBool::new(false)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn canceller(&self) -> Canceller {
        Canceller {
            handle: Arc::new(self.conn.get_interrupt_handle()),
            cancelled: Arc::clone(&self.cancelled),
        }
    }

    /// Runs exactly one read-only statement, returning at most `limit` rows.
    pub fn query(&self, sql: &str, params: &[Value], limit: usize) -> Result<QueryResult, DbError> {
        self.guarded(|| {
            let mut batch = Batch::new(&self.conn, sql);
            let mut stmt = match batch.next() {
                Ok(Some(stmt)) => stmt,
                Ok(None) => return Err(DbError::Empty),
                Err(e) => return Err(self.sql_error(e)),
            };
            // The rest may only be whitespace and comments; anything else, even text that does
            // not parse, is a second statement.
            if !matches!(batch.next(), Ok(None)) {
                return Err(DbError::MultipleStatements);
            }
            if !stmt.readonly() {
                return Err(DbError::Refused(
                    "this statement would modify the database".to_string(),
                ));
            }
            let expected = stmt.parameter_count();
            if expected != params.len() {
                return Err(DbError::ParamCount {
                    expected,
                    given: params.len(),
                });
            }
            for (i, param) in params.iter().enumerate() {
                let value = sql_param(param).map_err(|reason| DbError::Param {
                    index: i + 1,
                    reason,
                })?;
                stmt.raw_bind_parameter(i + 1, value)
                    .map_err(|e| self.sql_error(e))?;
            }
            let columns: Vec<String> = stmt.column_names().map(str::to_string).collect();
            let mut rows = stmt.raw_query();
            let mut out = Vec::new();
            let mut truncated = false;
            let mut cut_at_bytes = None;
            let max_bytes = self.limits.max_result_bytes;
            let mut bytes = 0;
            while let Some(row) = rows.next().map_err(|e| self.sql_error(e))? {
                if out.len() == limit {
                    truncated = true;
                    break;
                }
                let mut cells = Vec::with_capacity(columns.len());
                for i in 0..columns.len() {
                    let cell = row.get_ref(i).map_err(|e| self.sql_error(e))?;
                    cells.push(json_cell(cell));
                }
                let size = serde_json::to_string(&cells).map_or(0, |t| t.len() + 1);
                if bytes + size > max_bytes {
                    if out.is_empty() {
                        return Err(DbError::RowTooLarge {
                            size,
                            limit: max_bytes,
                        });
                    }
                    truncated = true;
                    cut_at_bytes = Some(max_bytes);
                    break;
                }
                bytes += size;
                out.push(cells);
            }
            Ok(QueryResult {
                columns,
                rows: out,
                truncated,
                cut_at_bytes,
            })
        })
    }

    /// Every table and view (internal `sqlite_*` tables left out): name, kind, row count.
    /// A view that cannot be counted (it references a missing table) gets a null count.
    pub fn list_tables(&self) -> Result<Vec<Value>, DbError> {
        self.guarded(|| {
            let mut out = Vec::new();
            for (name, kind) in self.table_names()? {
                let count_sql = format!("SELECT count(*) FROM {}", quote_ident(&name));
                let count = self
                    .conn
                    .query_row(&count_sql, [], |r| r.get::<_, i64>(0))
                    .map_err(|e| self.sql_error(e));
                match count {
                    Ok(n) => out.push(json!({"name": name, "type": kind, "row_count": n})),
                    Err(DbError::Timeout(ms)) => return Err(DbError::Timeout(ms)),
                    Err(e) => out.push(json!({
                        "name": name, "type": kind, "row_count": null, "error": e.to_string()
                    })),
                }
            }
            Ok(out)
        })
    }

    /// Columns, foreign keys, indexes and the CREATE statement of one table or view.
    pub fn describe_table(&self, table: &str) -> Result<Value, DbError> {
        self.guarded(|| {
            let (name, kind, sql) = self.find_table(table)?;
            let columns = self.rows_as_objects(
                "SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)",
                &name,
                |r| {
                    Ok(json!({
                        "name": r.get::<_, String>(1)?,
                        "type": r.get::<_, String>(2)?,
                        "not_null": r.get::<_, bool>(3)?,
                        "default": r.get::<_, Option<String>>(4)?,
                        "primary_key": r.get::<_, i64>(5)? > 0,
                        "primary_key_position": r.get::<_, i64>(5)?,
                    }))
                },
            )?;
            let foreign_keys = self.rows_as_objects(
                "SELECT id, seq, \"table\", \"from\", \"to\", on_update, on_delete \
                 FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
                &name,
                |r| {
                    Ok(json!({
                        "id": r.get::<_, i64>(0)?,
                        "column": r.get::<_, String>(3)?,
                        "references_table": r.get::<_, String>(2)?,
                        "references_column": r.get::<_, Option<String>>(4)?,
                        "on_update": r.get::<_, String>(5)?,
                        "on_delete": r.get::<_, String>(6)?,
                    }))
                },
            )?;
            let mut indexes = self.rows_as_objects(
                "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) ORDER BY name",
                &name,
                |r| {
                    Ok(json!({
                        "name": r.get::<_, String>(0)?,
                        "unique": r.get::<_, bool>(1)?,
                        "origin": r.get::<_, String>(2)?,
                        "partial": r.get::<_, bool>(3)?,
                    }))
                },
            )?;
            for index in &mut indexes {
                let index_name = index["name"].as_str().unwrap_or_default().to_string();
                let cols = self.rows_as_objects(
                    "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
                    &index_name,
                    |r| Ok(json!(r.get::<_, Option<String>>(0)?)),
                )?;
                index["columns"] = Value::Array(cols);
            }
            Ok(json!({
                "name": name,
                "type": kind,
                "sql": sql,
                "columns": columns,
                "foreign_keys": foreign_keys,
                "indexes": indexes,
            }))
        })
    }

    /// The CREATE statements of a table's (or view's) own indexes and triggers, for the schema
    /// resource; auto-indexes (from UNIQUE / PRIMARY KEY) have none and are left out.
    pub fn dependent_sql(&self, table: &str) -> Result<Vec<String>, DbError> {
        self.guarded(|| {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT sql FROM sqlite_schema WHERE tbl_name = ?1 \
                     AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name",
                )
                .map_err(|e| self.sql_error(e))?;
            let rows = stmt
                .query_map([table], |r| r.get::<_, String>(0))
                .map_err(|e| self.sql_error(e))?;
            rows.map(|r| r.map_err(|e| self.sql_error(e))).collect()
        })
    }

    /// Names and kinds (`table` / `view`) of every user table and view, by name.
    pub fn table_names(&self) -> Result<Vec<(String, String)>, DbError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') \
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql_error(e))?;
        rows.map(|r| r.map_err(|e| self.sql_error(e))).collect()
    }

    /// Resolves a table or view name as SQLite does (case-insensitively), giving its real name,
    /// kind and CREATE statement; an unknown name lists the existing ones.
    pub fn find_table(&self, table: &str) -> Result<(String, String, String), DbError> {
        let found = self.conn.query_row(
            "SELECT name, type, coalesce(sql, '') FROM sqlite_schema \
             WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
            [table],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        );
        match found {
            Ok(t) => Ok(t),
            Err(rusqlite::Error::QueryReturnedNoRows) => {
                let names: Vec<String> = self.table_names()?.into_iter().map(|(n, _)| n).collect();
                Err(DbError::UnknownTable {
                    name: table.to_string(),
                    existing: if names.is_empty() {
                        "(none)".to_string()
                    } else {
                        names.join(", ")
                    },
                })
            }
            Err(e) => Err(self.sql_error(e)),
        }
    }

    fn rows_as_objects(
        &self,
        sql: &str,
        arg: &str,
        map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Value>,
    ) -> Result<Vec<Value>, DbError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sql_error(e))?;
        let rows = stmt.query_map([arg], map).map_err(|e| self.sql_error(e))?;
        rows.map(|r| r.map_err(|e| self.sql_error(e))).collect()
    }

    /// Runs `work` under the time limit: a timer thread interrupts the connection when it expires.
    fn guarded<T>(&self, work: impl FnOnce() -> Result<T, DbError>) -> Result<T, DbError> {
        if let Ok(mut denied) = self.denied.lock() {
            *denied = None;
        }
        self.cancelled.store(false, Ordering::SeqCst);
        let timer = Timer::start(self.conn.get_interrupt_handle(), self.limits.timeout)?;
        let result = work();
        let fired = timer.stop();
        match result {
            Err(DbError::Sql(_)) if fired => Err(DbError::Timeout(millis(self.limits.timeout))),
            Err(DbError::Sql(_)) if self.cancelled.load(Ordering::SeqCst) => {
                Err(DbError::Cancelled)
            }
            other => other,
        }
    }

    /// Turns a SQLite error into ours: an authorizer refusal names the refused action.
    /// Any failure after the authorizer denied something is that refusal (a denied function
    /// surfaces as a plain SQL error, not as SQLITE_AUTH).
    fn sql_error(&self, e: rusqlite::Error) -> DbError {
        if let Some(denial) = self.denied.lock().ok().and_then(|d| d.clone()) {
            return DbError::Refused(denial.reason);
        }
        if e.sqlite_error_code() == Some(ErrorCode::AuthorizationForStatementDenied) {
            return DbError::Refused("the statement is not authorized".to_string());
        }
        match e.sqlite_error_code() {
            Some(ErrorCode::ReadOnly) => DbError::Refused(e.to_string()),
            Some(ErrorCode::OutOfMemory) => {
                DbError::OutOfMemory(self.limits.heap_limit_bytes >> 20)
            }
            Some(ErrorCode::TooBig) => DbError::TooBig,
            _ => DbError::Sql(e.to_string()),
        }
    }
}

/// Interrupts a connection when its duration expires, unless stopped first. Stopping joins the
/// thread, so an interrupt can never land on the next statement.
struct Timer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    fired: Arc<AtomicBool>,
}

impl Timer {
    fn start(handle: InterruptHandle, after: Duration) -> Result<Self, DbError> {
        let (stop, wait) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&fired);
        let thread = std::thread::Builder::new()
            .name("query-timer".to_string())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(after) {
                    flag.store(true, Ordering::SeqCst);
                    handle.interrupt();
                }
            })
            .map_err(|e| DbError::Timer(e.to_string()))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
            fired,
        })
    }

    /// Stops the timer and says whether it had fired.
    fn stop(mut self) -> bool {
        self.halt();
        self.fired.load(Ordering::SeqCst)
    }

    fn halt(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The receiver may be gone already when the timer fired; either way it ends.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.halt();
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A JSON scalar as a SQLite value: booleans become 0/1, as SQLite stores them.
fn sql_param(value: &Value) -> Result<SqlValue, String> {
    match value {
        Value::Null => Ok(SqlValue::Null),
        Value::Bool(b) => Ok(SqlValue::Integer(i64::from(*b))),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(SqlValue::Integer(i))
            } else if let Some(f) = n.as_f64() {
                Ok(SqlValue::Real(f))
            } else {
                Err(format!("the number {n} does not fit a 64-bit integer or float"))
            }
        }
        Value::String(s) => Ok(SqlValue::Text(s.clone())),
        Value::Array(_) | Value::Object(_) => Err(
            "only JSON scalars (string, number, boolean, null) can be bound; got an array or object"
                .to_string(),
        ),
    }
}

/// A SQLite value as JSON: NULL → null, blobs as `base64:<data>` (or a size placeholder when large),
/// infinite reals (which JSON cannot carry) as the strings "Infinity" / "-Infinity".
fn json_cell(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or_else(
            || json!(if f > 0.0 { "Infinity" } else { "-Infinity" }),
            Value::Number,
        ),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) if b.len() <= MAX_INLINE_BLOB => {
            Value::String(format!("base64:{}", base64(b)))
        }
        ValueRef::Blob(b) => Value::String(format!("<blob: {} bytes>", b.len())),
    }
}

/// Standard base64 with padding (RFC 4648); small enough not to need a dependency.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A name as a double-quoted SQL identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
