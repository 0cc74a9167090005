//! Which paths changed since the last look, without looking at every path: an inotify watch
//! on every recorded folder (Linux). The kernel queues an event for each change made through
//! any path or mount namespace (a sandboxed command's bind mounts included), so a look costs
//! one read of the queue plus a `lstat` per changed path. When the queue overflowed, a watch
//! could not be added (the `fs.inotify.max_user_watches` limit) or there is no inotify, the
//! answer is "everything", and the caller walks the folders instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What changed since the last [`Watcher::drain`].
#[derive(Debug)]
pub enum Dirty {
    /// These paths (each created, removed, written, renamed or chmodded).
    Paths(BTreeSet<PathBuf>),
    /// Unknown: look at everything.
    Everything,
}

#[cfg(target_os = "linux")]
pub use linux::Watcher;

#[cfg(not(target_os = "linux"))]
pub use other::Watcher;

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;

    use nix::errno::Errno;
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

    use super::*;

    pub struct Watcher {
        inotify: Option<Inotify>,
        dirs: HashMap<WatchDescriptor, PathBuf>,
        by_path: HashMap<PathBuf, WatchDescriptor>,
        /// Events were lost (the queue overflowed): the next drain says `Everything`.
        lost: bool,
        /// A watch was refused (the watch limit): every drain says `Everything`.
        refused: bool,
    }

    fn mask() -> AddWatchFlags {
        AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_ATTRIB
            | AddWatchFlags::IN_CLOSE_WRITE
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_ONLYDIR
            | AddWatchFlags::IN_DONT_FOLLOW
    }

    impl Watcher {
        pub fn new() -> Self {
            // `LING_CHECKPOINTS_NO_INOTIFY=1`: the walk every look falls back to, on purpose
            // (its tests and benchmark).
            let inotify = if std::env::var_os("LING_CHECKPOINTS_NO_INOTIFY").is_some() {
                None
            } else {
                Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()
            };
            Self {
                inotify,
                dirs: HashMap::new(),
                by_path: HashMap::new(),
                lost: false,
                refused: false,
            }
        }

        /// Whether changes are seen without a walk.
        pub fn works(&self) -> bool {
            self.inotify.is_some() && !self.refused
        }

        /// Watches the folder `dir` (again: the kernel gives the same descriptor for the same
        /// folder, which then answers to its new path).
        pub fn watch(&mut self, dir: &Path) {
            let Some(inotify) = &self.inotify else { return };
            match inotify.add_watch(dir, mask()) {
                Ok(wd) => {
                    self.dirs.insert(wd, dir.to_path_buf());
                    self.by_path.insert(dir.to_path_buf(), wd);
                }
                // Gone already, or a symlink now: its parent's event covers it.
                Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP | Errno::EACCES) => {}
                Err(_) => self.refused = true,
            }
        }

        /// The folder `dir` is no longer recorded: its watch goes, unless the folder now
        /// answers to another recorded path.
        pub fn forget(&mut self, dir: &Path) {
            let Some(wd) = self.by_path.remove(dir) else {
                return;
            };
            if self.dirs.get(&wd).is_some_and(|p| p == dir) {
                self.dirs.remove(&wd);
                if let Some(inotify) = &self.inotify {
                    let _ = inotify.rm_watch(wd);
                }
            }
        }

        /// The changes queued since the last drain.
        pub fn drain(&mut self) -> Dirty {
            let Some(inotify) = &self.inotify else {
                return Dirty::Everything;
            };
            let mut paths = BTreeSet::new();
            loop {
                let events = match inotify.read_events() {
                    Ok(events) => events,
                    Err(Errno::EAGAIN) => break,
                    Err(Errno::EINTR) => continue,
                    Err(_) => {
                        self.lost = true;
                        break;
                    }
                };
                if events.is_empty() {
                    break;
                }
                for event in events {
                    if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                        self.lost = true;
                        continue;
                    }
                    if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                        if let Some(path) = self.dirs.remove(&event.wd) {
                            self.by_path.remove(&path);
                            paths.insert(path);
                        }
                        continue;
                    }
                    let Some(dir) = self.dirs.get(&event.wd) else {
                        continue;
                    };
                    paths.insert(match event.name {
                        Some(name) => dir.join(name),
                        None => dir.clone(),
                    });
                }
            }
            if std::mem::take(&mut self.lost) || self.refused {
                return Dirty::Everything;
            }
            Dirty::Paths(paths)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use super::*;

    /// Without inotify every look is a walk.
    pub struct Watcher;

    impl Watcher {
        pub fn new() -> Self {
            Self
        }
        pub fn works(&self) -> bool {
            false
        }
        pub fn watch(&mut self, _dir: &Path) {}
        pub fn forget(&mut self, _dir: &Path) {}
        pub fn drain(&mut self) -> Dirty {
            Dirty::Everything
        }
    }
}
