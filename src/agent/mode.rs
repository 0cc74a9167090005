//! The permission mode of a running agent, held with its rules in one [`ModeHandle`] that other
//! tasks may change (the SDK's `set_permission_mode`, ACP's `session/set_mode`). A sub-agent's
//! handle follows its parent's: every time the child's permissions are read, its mode is the
//! stricter of the parent's mode of the moment and the one its definition asks for, so a mode
//! change of the session judges the next call of a sub-agent already running too.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::config::PermissionMode;
use crate::permissions::Permissions;

/// An agent's permissions (its mode and rules), shared with another task.
#[derive(Clone)]
pub struct ModeHandle {
    permissions: Arc<Mutex<Permissions>>,
    /// A sub-agent's: whose mode it follows.
    follows: Option<Arc<Follow>>,
}

/// The parent a sub-agent's mode follows, and the mode its definition asks for.
struct Follow {
    parent: ModeHandle,
    asked: Option<PermissionMode>,
}

impl ModeHandle {
    pub(super) fn new(permissions: Permissions) -> Self {
        Self {
            permissions: Arc::new(Mutex::new(permissions)),
            follows: None,
        }
    }

    /// This handle, made to follow `parent`'s mode (never looser than it, nor than `asked`).
    pub(super) fn following(mut self, parent: ModeHandle, asked: Option<PermissionMode>) -> Self {
        self.follows = Some(Arc::new(Follow { parent, asked }));
        self
    }

    pub fn get(&self) -> PermissionMode {
        self.lock().mode()
    }

    /// Takes effect at the next tool call. A sub-agent's mode is its parent's: set that one.
    pub fn set(&self, mode: PermissionMode) {
        self.lock().set_mode(mode);
    }

    /// The permissions, with a sub-agent's mode brought up to its parent's first.
    pub(super) fn lock(&self) -> MutexGuard<'_, Permissions> {
        // Read before taking this lock: the parent's is never held with a child's.
        let followed = self.follows.as_ref().map(|f| {
            let parent = f.parent.get();
            f.asked.map_or(parent, |asked| stricter(parent, asked))
        });
        // A panic while holding the lock cannot leave the rules half-changed; keep using them.
        let mut permissions = self
            .permissions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(mode) = followed {
            permissions.set_mode(mode);
        }
        permissions
    }
}

/// The stricter of two permission modes (plan, then default, accept-edits, bypass: their
/// latitude in [`crate::config::MODES`]).
pub(super) fn stricter(a: PermissionMode, b: PermissionMode) -> PermissionMode {
    if a.meaning().latitude <= b.meaning().latitude {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Paths;

    #[test]
    fn a_child_never_gets_a_looser_mode() {
        use PermissionMode::*;
        assert_eq!(stricter(Default, Bypass), Default);
        assert_eq!(stricter(AcceptEdits, Plan), Plan);
        assert_eq!(stricter(Plan, Bypass), Plan);
    }

    #[test]
    fn a_child_follows_its_parent_s_mode_as_it_changes() {
        let root = tempfile::tempdir().unwrap();
        let paths = Paths::new(root.path().to_path_buf());
        let permissions = Permissions::new(PermissionMode::Bypass, &[], &[], &paths).unwrap();
        let parent = ModeHandle::new(permissions.clone());
        let child = ModeHandle::new(permissions.clone()).following(parent.clone(), None);
        let asked = ModeHandle::new(permissions)
            .following(parent.clone(), Some(PermissionMode::AcceptEdits));
        assert_eq!(child.get(), PermissionMode::Bypass);
        assert_eq!(asked.get(), PermissionMode::AcceptEdits);
        parent.set(PermissionMode::Plan);
        assert_eq!(child.get(), PermissionMode::Plan);
        assert_eq!(asked.get(), PermissionMode::Plan);
        // Its own setting does not outlast the next read.
        child.set(PermissionMode::Bypass);
        assert_eq!(child.get(), PermissionMode::Plan);
    }
}
