//! The session's background commands: `bash` with `run_in_background` hands its started shell
//! here and returns at once; `bash_output` reads what it printed since the last read and
//! `kill_shell` ends its process group. Each command's output is kept twice: its last bytes in
//! memory (a ring of settings `backgroundOutputBytes`) and the whole of it in a spill file under
//! the session's temp dir, which `read_file` may read. They run under the same supervising
//! trampoline and sandbox as every `bash` command, so they end with Ling, even on SIGKILL; the
//! registry ends them when the session ends. Sub-agents share their parent's registry.

mod ring;
mod tools;
mod watch;

use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use self::ring::Ring;
pub use self::tools::{BashOutput, KillShell};
use super::{ToolContext, ToolError, ToolOutput};

/// The default `backgroundOutputBytes`: what one background command's output may take in memory.
pub const DEFAULT_BUFFER_BYTES: usize = 1 << 20;

/// How long the session's end waits for one background command to be gone.
const END_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// How a background command stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    Running,
    /// Its shell exited with this code.
    Exited(i32),
    /// It was ended by this signal (by name), `kill_shell` or the session's end.
    Killed(String),
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Running => f.write_str("running"),
            Self::Exited(code) => write!(f, "exited {code}"),
            Self::Killed(how) => write!(f, "killed ({how})"),
        }
    }
}

/// One background command as `/tasks` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    pub id: String,
    pub command: String,
    pub state: TaskState,
    /// The last line it printed with something on it.
    pub last_line: String,
    /// Bytes it printed in all.
    pub bytes: u64,
    /// Where its whole output is.
    pub output_file: PathBuf,
}

/// `command` started as any `bash` command (same sandbox, environment and supervisor) and
/// handed to the session's background commands; the result says its id and output file.
pub(super) fn start(command: &str, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let shells = ctx.shells.as_ref().ok_or_else(|| {
        ToolError::failed(
            "background commands are not available here; run it without run_in_background",
        )
    })?;
    // Started first: if the entry cannot be made, the dropped group ends it.
    let started = super::bash_start::start(command, ctx)?;
    let (shell, file) = shells.add(command).map_err(|e| {
        ToolError::failed(format!(
            "cannot make the output file of a background command in the temp dir: {e}"
        ))
    })?;
    let (id, path) = (shell.id.clone(), shell.output_file.clone());
    watch::watch(started, shell, file);
    Ok(ToolOutput::text(format!(
        "Started in the background.\nid: {id}\noutput file: {} (its whole output; read_file \
         reads it)\nRead what it prints with bash_output (id {id}); end it with kill_shell. It \
         ends with the session.",
        path.display()
    )))
}

/// Whether a command that reached its timeout goes on in the background: asked of the user
/// when somebody can be (the REPL), else no.
pub(super) async fn keep_on_timeout(ctx: &ToolContext, command: &str) -> bool {
    match (&ctx.on_timeout, &ctx.shells) {
        (Some(ask), Some(_)) => ask(command.to_string()).await.unwrap_or(false),
        _ => false,
    }
}

/// A foreground command past its timeout, handed to the background commands with what it
/// printed so far: the call's result (an error, since the call did not finish) says its id.
pub(super) fn adopt(
    ctx: &ToolContext,
    command: &str,
    started: crate::tools::bash_start::Started,
    earlier: String,
) -> Result<String, ToolError> {
    let shells = ctx
        .shells
        .as_ref()
        .ok_or_else(|| ToolError::failed("background commands are not available here"))?;
    let (shell, mut file) = shells.add(command).map_err(|e| {
        ToolError::failed(format!(
            "cannot make the output file of a background command in the temp dir: {e}"
        ))
    })?;
    {
        // Already in the call's result: the first read starts after it.
        let mut output = shell.lock();
        output.ring.push(earlier.as_bytes());
        output.read_to = output.ring.total();
    }
    // Best effort: the spill file starts with what the call had kept of the output.
    let _ = std::io::Write::write_all(&mut file, earlier.as_bytes());
    let (id, path) = (shell.id.clone(), shell.output_file.clone());
    watch::watch(started, shell, file);
    Ok(format!(
        "The command reached its timeout and the user moved it to the background instead of \
         killing it.\nid: {id}\noutput file: {} (its whole output; read_file reads it)\n\
         Read what it prints with bash_output (id {id}); end it with kill_shell.\nOutput before \
         the timeout:\n{earlier}",
        path.display()
    ))
}

/// The registry of one session's background commands. Cheap to clone; clones share it.
#[derive(Clone)]
pub struct Shells {
    inner: Arc<Inner>,
}

struct Inner {
    buffer: usize,
    name: String,
    next: AtomicU32,
    /// The spill files' folder, made at the first command.
    dir: Mutex<Option<PathBuf>>,
    shells: Mutex<BTreeMap<u32, Arc<Shell>>>,
}

/// One background command.
pub(super) struct Shell {
    pub id: String,
    pub command: String,
    pub output_file: PathBuf,
    /// Asks its watcher to end its process group.
    pub kill: CancellationToken,
    /// Set by its watcher once it ended and its output was read to the end.
    pub done: CancellationToken,
    pub output: Mutex<Output>,
}

/// What a command printed and how it stands, shared by its watcher and the readers.
pub(super) struct Output {
    pub ring: Ring,
    /// Bytes of the stream `bash_output` has returned (or filtered away).
    pub read_to: u64,
    pub state: TaskState,
}

impl Shell {
    pub(super) fn lock(&self) -> MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn info(&self) -> TaskInfo {
        let output = self.lock();
        TaskInfo {
            id: self.id.clone(),
            command: self.command.clone(),
            state: output.state.clone(),
            last_line: output.ring.last_line(),
            bytes: output.ring.total(),
            output_file: self.output_file.clone(),
        }
    }
}

impl Default for Shells {
    fn default() -> Self {
        Self::new(DEFAULT_BUFFER_BYTES, "")
    }
}

impl Shells {
    /// A registry whose commands keep `buffer` bytes of output in memory each; its spill files
    /// go in `$TMPDIR/ling-bg-NAME/` (with a random suffix when that is taken).
    pub fn new(buffer: usize, name: &str) -> Self {
        Self {
            inner: Arc::new(Inner {
                buffer,
                name: name.to_string(),
                next: AtomicU32::new(1),
                dir: Mutex::default(),
                shells: Mutex::default(),
            }),
        }
    }

    fn shells(&self) -> MutexGuard<'_, BTreeMap<u32, Arc<Shell>>> {
        self.inner
            .shells
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The background commands, oldest first.
    pub fn list(&self) -> Vec<TaskInfo> {
        self.shells().values().map(|s| s.info()).collect()
    }

    /// How many are still running.
    pub fn running(&self) -> usize {
        self.list()
            .iter()
            .filter(|t| t.state == TaskState::Running)
            .count()
    }

    /// Whether `path` is one of the spill files (which `read_file` may read outside the root).
    pub fn holds_file(&self, path: &Path) -> bool {
        self.shells().values().any(|s| s.output_file == path)
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<Shell>> {
        let number = id.trim().strip_prefix("bash_")?.parse().ok()?;
        self.shells().get(&number).cloned()
    }

    /// Ids of the commands, for a message naming what exists.
    pub(super) fn ids(&self) -> Vec<String> {
        self.shells().values().map(|s| s.id.clone()).collect()
    }

    /// A new entry for `command`, its spill file created: the watcher fills it.
    pub(super) fn add(&self, command: &str) -> std::io::Result<(Arc<Shell>, std::fs::File)> {
        let number = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("bash_{number}");
        let dir = self.dir()?;
        let output_file = dir.join(format!("{id}.log"));
        // Created new, never opened through what is there: the folder is in the temp dir, which
        // sandboxed commands may write, and a link planted under this name must not have Ling
        // (outside the sandbox) write a command's output into the file it points at.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&output_file)?;
        let shell = Arc::new(Shell {
            id,
            command: command.to_string(),
            output_file,
            kill: CancellationToken::new(),
            done: CancellationToken::new(),
            output: Mutex::new(Output {
                ring: Ring::new(self.inner.buffer),
                read_to: 0,
                state: TaskState::Running,
            }),
        });
        self.shells().insert(number, shell.clone());
        Ok((shell, file))
    }

    /// The spill folder, made (private to the user) at the first call.
    fn dir(&self) -> std::io::Result<PathBuf> {
        let mut dir = self
            .inner
            .dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(dir) = dir.as_ref() {
            return Ok(dir.clone());
        }
        let temp = std::env::temp_dir();
        let mut made = temp.join(format!("ling-bg-{}", self.inner.name));
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700).recursive(false);
        // Taken (the same session resumed twice at once): a name of its own.
        while let Err(e) = builder.create(&made) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(e);
            }
            made = temp.join(format!(
                "ling-bg-{}-{:08x}",
                self.inner.name,
                fastrand::u32(..)
            ));
        }
        // The temp dir may be reached through a link (`/tmp` on some systems): the canonical
        // path is what `read_file` resolves the model's path to.
        let made = std::fs::canonicalize(&made)?;
        *dir = Some(made.clone());
        Ok(made)
    }

    /// Ends every command still running and waits until each has ended (the session's end).
    pub async fn end_all(&self) {
        let shells: Vec<Arc<Shell>> = self.shells().values().cloned().collect();
        for shell in &shells {
            shell.kill.cancel();
        }
        for shell in shells {
            // Each ends within its group's grace; never hang the session's end on one.
            let _ = tokio::time::timeout(END_WAIT, shell.done.cancelled()).await;
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Each watcher holds its group, which ends it when the task is dropped; the spill
        // files go with the session.
        let dir = self.dir.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(dir) = dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod spill_tests {
    use super::*;

    /// A link planted where the next spill file goes (a sandboxed command can write the temp
    /// dir) makes the command fail to start; the file it points at is left as it was.
    #[test]
    fn a_planted_link_is_never_written_through() {
        let shells = Shells::new(1024, &format!("spill-test-{}", std::process::id()));
        let (first, _) = shells.add("true").unwrap();
        let dir = first.output_file.parent().unwrap().to_path_buf();
        let target = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(target.path(), "mine\n").unwrap();
        std::os::unix::fs::symlink(target.path(), dir.join("bash_2.log")).unwrap();
        assert!(shells.add("echo pwned").is_err());
        assert_eq!(std::fs::read_to_string(target.path()).unwrap(), "mine\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
