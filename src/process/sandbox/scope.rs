//! What a run's sandbox protects and hides, found in Ling: the read-only paths (the project's
//! `.git` and `.ling`, nested repositories present at start, home's dot-entries when the project
//! is home), the default list of credential stores no command may read, the devices of `/dev`
//! a command may use, and the Landlock grants that go around all of these where no mount
//! namespace can cover them.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::config::SandboxSettings;

/// What the default `sandbox.denyRead` hides, relative to the home directory: credential stores
/// and keys a command has no business reading (`docs/tools.md` lists them with the rest).
pub const DEFAULT_DENY_READ: [&str; 34] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/rclone",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".config/github-copilot",
];

/// System files no command may read (root could).
const SYSTEM_DENY_READ: [&str; 2] = ["/etc/shadow", "/etc/gshadow"];

/// The directory whose private host keys (`ssh_host_*_key`) are hidden too.
const SSH_HOST_KEYS: &str = "/etc/ssh";

/// Devices of `/dev` every sandboxed command may read and write (the rest of `/dev`, the
/// user's terminals among them, it cannot open at all).
pub const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// How deep below the project root nested repositories are looked for, and how many
/// directories the walk visits at most.
pub const NESTED_DEPTH: usize = 4;
pub const NESTED_DIRS: usize = 10_000;

/// The paths a run's sandbox protects and hides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope {
    /// The project root (canonical).
    pub root: PathBuf,
    /// Read-only beneath the writable roots (canonical, existing).
    pub protect: Vec<PathBuf>,
    /// Unreadable (existing ones; canonical).
    pub hide: Vec<PathBuf>,
    /// Whether the project root is the home directory.
    pub root_is_home: bool,
    /// The home directory (canonical), when it is the project root or lies beneath a writable
    /// root: its dot-entries are then read-only, and no new entry can be made directly in it.
    pub home: Option<PathBuf>,
}

/// What a writable root holds that code outside the sandbox reads or runs: git's (its hooks and
/// config run at the user's next `git`), Ling's and Claude Code's config.
const MARKERS: [&str; 3] = [".git", ".ling", ".claude"];

impl Scope {
    /// Finds them for a run in `root` whose sandbox may also write `writable` (settings
    /// `sandbox.writableRoots` and `--add-dir`; the temp dir counts for home): in the root and
    /// each writable root, their `.git`, `.ling` and `.claude` and the repositories nested in
    /// them; home's dot-entries when home lies beneath one of them; `read_only` (the run's
    /// `trust::surface`) and `hidden` (the `denyRead` list).
    pub fn find(
        root: &Path,
        writable: &[PathBuf],
        home: Option<&Path>,
        read_only: &[PathBuf],
        hidden: &[PathBuf],
    ) -> Self {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut protect = Vec::new();
        let mut add = |path: &Path| {
            // A symlink protects itself (the Landlock grants go around it) and where it points.
            let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
            if is_link && !protect.iter().any(|p: &PathBuf| p == path) {
                protect.push(path.to_path_buf());
            }
            if let Ok(real) = path.canonicalize()
                && !protect.contains(&real)
            {
                protect.push(real);
            }
        };
        let mut areas = vec![root.clone()];
        for dir in writable {
            let dir = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            if !areas.iter().any(|a| dir.starts_with(a)) {
                areas.push(dir);
            }
        }
        for area in areas.iter().filter(|a| a.as_path() != Path::new("/")) {
            for name in MARKERS {
                add(&area.join(name));
            }
            for repo in nested_repositories(area) {
                add(&repo);
            }
        }
        let home = home.and_then(|h| h.canonicalize().ok());
        let root_is_home = home.as_deref() == Some(root.as_path());
        let temp = std::env::temp_dir().canonicalize().ok();
        let exposed = home.filter(|h| {
            let beneath = |a: &PathBuf| h.starts_with(a);
            (root_is_home || areas.iter().filter(|a| **a != Path::new("/")).any(beneath))
                || temp.as_ref().is_some_and(beneath)
        });
        if let Some(home) = &exposed {
            for entry in std::fs::read_dir(home).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with('.') {
                    add(&entry.path());
                }
            }
        }
        for path in read_only {
            add(path);
        }
        let mut hide = Vec::new();
        for path in hidden {
            if std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            let real = path.canonicalize().unwrap_or_else(|_| path.clone());
            if !hide.contains(&real) {
                hide.push(real);
            }
        }
        Self {
            root,
            protect,
            hide,
            root_is_home,
            home: exposed,
        }
    }

    /// Whether the project root is `/`, which is never writable as a whole.
    pub fn root_is_system(&self) -> bool {
        self.root == Path::new("/")
    }
}

/// The `.git` entries (directories, or files of worktrees and submodules) below `root`, at
/// most [`NESTED_DEPTH`] levels down, visiting at most [`NESTED_DIRS`] directories; not inside
/// a `.git` itself, and not following symlinks. A `.git` file also names its real git directory.
fn nested_repositories(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = VecDeque::from([(root.to_path_buf(), 0usize)]);
    let mut visited = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        visited += 1;
        if visited > NESTED_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if name == ".git" {
                if depth > 0 {
                    found.push(entry.path());
                    if kind.is_file()
                        && let Some(gitdir) = gitdir_of(&entry.path())
                    {
                        found.push(gitdir);
                    }
                }
                continue;
            }
            if kind.is_dir() && depth < NESTED_DEPTH {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    found
}

/// The directory a `.git` file (`gitdir: PATH`) points to.
fn gitdir_of(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let target = file.parent()?.join(target);
    target.canonicalize().ok()
}

/// The hidden paths of a run: the defaults (in `home`, `ling_home`'s credentials, the system's
/// password hashes and host keys) and `denyRead`, less `allowRead`.
pub fn hidden(settings: &SandboxSettings, ling_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        out.extend(DEFAULT_DENY_READ.iter().map(|rel| home.join(rel)));
    }
    out.push(ling_home.join("credentials"));
    out.extend(SYSTEM_DENY_READ.iter().map(PathBuf::from));
    for entry in std::fs::read_dir(SSH_HOST_KEYS)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("ssh_host_") && name.ends_with("_key") {
            out.push(entry.path());
        }
    }
    out.retain(|p| !settings.allow_read.contains(p));
    for extra in &settings.deny_read {
        if !out.contains(extra) {
            out.push(extra.clone());
        }
    }
    out
}

/// Whether `path` is a device of `/dev` no sandboxed command may open.
pub fn is_denied_device(path: &Path) -> bool {
    path.starts_with("/dev")
        && !DEVICES.iter().any(|d| path == Path::new(d))
        && !path.starts_with("/dev/shm")
        && !path.starts_with("/dev/fd")
        && path != Path::new("/dev")
}

/// What Ling says at start when the project root is the home directory or `/`.
pub fn root_notice(root: &Path, home: Option<&Path>) -> Option<String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if root == Path::new("/") {
        return Some(
            "the project root is / : sandboxed commands write only in the temp dir and \
             sandbox.writableRoots"
                .into(),
        );
    }
    let home = home?.canonicalize().ok()?;
    (root == home).then(|| {
        format!(
            "the project root is your home directory ({}): sandboxed commands may write in its \
             directories, but its dotfiles and dot-directories stay read-only and nothing new can \
             be made directly in it",
            home.display()
        )
    })
}

/// The Landlock grants for `roots` (each with the rights of the pair) that leave out every
/// path of `holes`: a root with a hole beneath it is replaced by its entries (recursively
/// along the way to the hole), so the root directory itself gets no right (a new entry
/// directly in it cannot be made). Symlinks are left out too: a rule on one would grant where
/// it points.
pub fn grants_around<A: Copy>(roots: &[(PathBuf, A)], holes: &[PathBuf]) -> Vec<(PathBuf, A)> {
    fn around<A: Copy>(dir: &Path, access: A, holes: &[PathBuf], out: &mut Vec<(PathBuf, A)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() || holes.contains(&path) {
                continue;
            }
            if meta.is_dir() && holes.iter().any(|h| h.starts_with(&path)) {
                around(&path, access, holes, out);
            } else {
                out.push((path, access));
            }
        }
    }
    let mut out = Vec::new();
    for (root, access) in roots {
        if holes.iter().any(|h| h.starts_with(root) && h != root) {
            around(root, *access, holes, &mut out);
        } else if !holes.contains(root) {
            out.push((root.clone(), *access));
        }
    }
    out
}

/// After a command: a note on a `.git` that did not exist at start and now does directly in
/// the project root (`existed`: whether it did), naming what in it would run code at the
/// user's next `git` there.
pub fn created_git_note(root: &Path, existed: bool) -> Option<String> {
    let git = root.join(".git");
    if existed || std::fs::symlink_metadata(&git).is_err() {
        return None;
    }
    let mut runs = Vec::new();
    let config = std::fs::read_to_string(git.join("config")).unwrap_or_default();
    for line in config.lines() {
        let key = line
            .trim()
            .split('=')
            .next()
            .unwrap_or("")
            .trim()
            .to_lowercase();
        if [
            "fsmonitor",
            "hookspath",
            "sshcommand",
            "pager",
            "editor",
            "askpass",
            "external",
            "textconv",
            "clean",
            "smudge",
            "process",
            "helper",
            "program",
            "path",
        ]
        .contains(&key.as_str())
        {
            runs.push(line.trim().to_string());
        }
    }
    for hook in std::fs::read_dir(git.join("hooks"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = hook.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".sample") {
            runs.push(format!("hooks/{name}"));
        }
    }
    let what = if runs.is_empty() {
        "nothing in it runs code yet".to_string()
    } else {
        format!("it would run: {}", runs.join(", "))
    };
    Some(format!(
        "(this command created .git in the project root; git reads its config and hooks at your \
         next git command here, outside the sandbox; {what})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_repositories_are_found_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            ".git",
            "a/.git",
            "a/b/c/d/.git",
            "a/b/c/d/e/.git",
            "x/.git/y/.git",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("w/.git"), "").ok();
        std::fs::create_dir_all(root.join("w")).unwrap();
        std::fs::write(root.join("w/.git"), "gitdir: ../real\n").unwrap();
        let mut got = nested_repositories(&root);
        got.sort();
        assert_eq!(
            got,
            [
                root.join("a/.git"),
                root.join("a/b/c/d/.git"),
                root.join("real"),
                root.join("w/.git"),
                root.join("x/.git"),
            ]
        );
    }

    #[test]
    fn home_as_the_root_protects_its_dot_entries_and_hides_still_apply() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::fs::create_dir(home.join(".ssh")).unwrap();
        std::fs::write(home.join("notes"), "").unwrap();
        let hidden = [home.join(".ssh"), home.join(".aws")];
        let scope = Scope::find(&home, &[], Some(&home), &[], &hidden);
        assert!(scope.protect.contains(&home.join(".bashrc")));
        assert!(!scope.protect.contains(&home.join("notes")));
        assert_eq!(scope.hide, [home.join(".ssh")]);
        assert!(
            root_notice(&home, Some(&home))
                .unwrap()
                .contains("home directory")
        );
        assert!(
            root_notice(Path::new("/"), None)
                .unwrap()
                .contains("root is /")
        );
        assert_eq!(root_notice(&home.join("x"), Some(&home)), None);
    }

    #[test]
    fn grants_go_around_holes_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [".git/hooks", "src", "deep/.ling"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        let holes = [root.join(".git"), root.join("deep/.ling")];
        let mut got = grants_around(&[(root.clone(), 1), (PathBuf::from("/x"), 2)], &holes);
        got.sort();
        assert_eq!(
            got,
            [
                (root.join("Cargo.toml"), 1),
                (root.join("src"), 1),
                (PathBuf::from("/x"), 2)
            ]
        );
    }

    #[test]
    fn the_default_hidden_list_lifts_allowed_and_adds_denied() {
        let settings = SandboxSettings {
            allow_read: vec![PathBuf::from("/h/.kube")],
            deny_read: vec![PathBuf::from("/h/secret")],
            ..SandboxSettings::default()
        };
        let got = hidden(&settings, Path::new("/l"), Some(Path::new("/h")));
        assert!(got.contains(&PathBuf::from("/h/.ssh")));
        assert!(got.contains(&PathBuf::from("/l/credentials")));
        assert!(got.contains(&PathBuf::from("/etc/shadow")));
        assert!(got.contains(&PathBuf::from("/h/secret")));
        assert!(!got.contains(&PathBuf::from("/h/.kube")));
        assert!(is_denied_device(Path::new("/dev/pts/3")));
        assert!(is_denied_device(Path::new("/dev/tty")));
        assert!(!is_denied_device(Path::new("/dev/null")));
        assert!(!is_denied_device(Path::new("/dev/shm/x")));
    }

    #[test]
    fn a_created_git_is_noted_with_what_it_would_run() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(created_git_note(dir.path(), false), None);
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tfsmonitor = evil\n\tbare = false\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".git/hooks/post-checkout"), "").unwrap();
        let note = created_git_note(dir.path(), false).unwrap();
        assert!(note.contains("fsmonitor = evil"), "{note}");
        assert!(note.contains("hooks/post-checkout"), "{note}");
        assert_eq!(created_git_note(dir.path(), true), None);
    }
}
