//! The [`Holder`]: one child per run, started with the first sandboxed command, that keeps a
//! user and mount namespace in which the protected paths are read-only binds and the hidden
//! ones covered (`mounts.rs`), for sandboxed commands to join. Making those
//! namespaces per command costs little, but tearing a mount namespace down when its last process
//! exits waits for the kernel (RCU), which the command's exit, and so Ling, waits for: a few
//! milliseconds per command. Joined, the namespace outlives the command and the cost is gone.
//!
//! The holder is the trampoline with `--hold`: tied to Ling like every child (parent-death
//! signal), it says `ready` on stdout and waits for its stdin, which Ling holds, to close.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};

use super::error::EnforceError;

/// A running holder; killed when dropped.
#[derive(Debug)]
pub struct Holder {
    child: Child,
    protect: Vec<PathBuf>,
    hide: Vec<PathBuf>,
}

impl Holder {
    /// Starts `exe __ling-exec --parent PID --hold --protect P... --hide P... --` and waits for
    /// its `ready` (or its failure: it exits, saying why).
    pub fn start(
        exe: &std::path::Path,
        protect: &[PathBuf],
        hide: &[PathBuf],
    ) -> Result<Self, EnforceError> {
        let mut cmd = std::process::Command::new(exe);
        cmd.arg(super::super::exec::MARKER)
            .arg("--parent")
            .arg(std::process::id().to_string())
            .arg("--hold");
        for path in protect {
            cmd.arg("--protect").arg(path);
        }
        for path in hide {
            cmd.arg("--hide").arg(path);
        }
        // The trampoline never starts with what the loader would load into it.
        for (name, _) in std::env::vars_os() {
            if super::super::code_vars::read_at_start(&name.to_string_lossy()) {
                cmd.env_remove(name);
            }
        }
        cmd.arg("--")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|source| EnforceError::HolderSpawn {
            exe: exe.to_path_buf(),
            source,
        })?;
        let mut line = String::new();
        let read = child
            .stdout
            .take()
            .map(|out| BufReader::new(out).read_line(&mut line));
        if !matches!(read, Some(Ok(_))) || line.trim() != "ready" {
            let _ = child.kill();
            let mut why = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut why);
            }
            let _ = child.wait();
            return Err(EnforceError::HolderFailed(why.trim().to_string()));
        }
        // Nothing more comes on stderr once it is ready.
        drop(child.stderr.take());
        Ok(Self {
            child,
            protect: protect.to_vec(),
            hide: hide.to_vec(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether its namespace keeps `protect` read-only and `hide` covered.
    pub fn serves(&self, protect: &[PathBuf], hide: &[PathBuf]) -> bool {
        self.protect == protect && self.hide == hide
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
