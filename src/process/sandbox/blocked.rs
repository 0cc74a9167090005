//! Telling a command the sandbox stopped from one that failed on its own: the failed command's
//! output is searched for the errors the sandbox causes (EACCES, EPERM, EROFS on a path; a
//! refused socket or name lookup), and each path named there is checked against the policy, so
//! that only a path the policy really forbids is reported. A path is resolved through the
//! symlinks that exist (outside the sandbox, as Ling sees them) first, so a write through a
//! link into `.git` is named as the `.git` path it reached; a hidden path or a denied device is
//! a read, unless the line says it was written. The sandbox stops no other read: a refused read
//! of a path it lets be read (`ls: cannot open directory '/root'`, or `cat` of a file Ling
//! cannot read either) is the file's own permissions, never reported as the sandbox's, and
//! never called a write.

use std::path::{Path, PathBuf};

use super::Policy;

/// What the sandbox stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// Writing this path (outside the writable paths, or protected).
    Write(PathBuf),
    /// Reading this path (hidden by `sandbox.denyRead`, or a device such as a terminal).
    Read(PathBuf),
    /// The network (the line of output that says so).
    Network(String),
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Write(path) => write!(f, "writing {}", path.display()),
            Self::Read(path) => write!(f, "reading {}", path.display()),
            Self::Network(line) => write!(f, "the network ({line})"),
        }
    }
}

/// EACCES (Landlock) and EROFS (the read-only binds).
const FILE_ERRORS: [&str; 2] = ["Permission denied", "Read-only file system"];

const NETWORK_ERRORS: [&str; 8] = [
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Failed to connect",
    "Network is unreachable",
    "Permission denied",
    "getaddrinfo",
    "Couldn't connect",
];

/// What in `output` (of a command that failed, run in `cwd` under `policy`) the sandbox
/// stopped, if anything.
pub fn find_blocked(output: &str, policy: &Policy, cwd: &Path) -> Option<Blocked> {
    for line in output.lines() {
        if !FILE_ERRORS.iter().any(|e| line.contains(e)) {
            continue;
        }
        for candidate in path_candidates(line) {
            // bash's `/dev/tcp/HOST/PORT` is a connection, not a file.
            if candidate.starts_with("/dev/tcp/") || candidate.starts_with("/dev/udp/") {
                continue;
            }
            let path = resolve(&normalise(&cwd.join(candidate)));
            if !policy.allows_read(&path) {
                if !says_written(line) {
                    return Some(Blocked::Read(path));
                }
            } else if says_read(line) || unreadable_outside(&path) {
                // A read the sandbox allows failed on the file's own permissions.
                continue;
            }
            if !policy.allows_write(&path) {
                return Some(Blocked::Write(path));
            }
        }
    }
    if !policy.network {
        for line in output.lines() {
            let lower = line.to_ascii_lowercase();
            let networky = [
                "connect", "resolve", "host", "socket", "network", "dns", "name",
            ]
            .iter()
            .any(|w| lower.contains(w));
            if networky && NETWORK_ERRORS.iter().any(|e| line.contains(e)) {
                return Some(Blocked::Network(line.trim().chars().take(200).collect()));
            }
        }
    }
    None
}

/// The words of `line` that look like paths: the one just before `: ERROR` (`sh: 1: x:
/// Permission denied`), quoted ones (`'x'`, `"x"`, `` `x' ``) and those containing a `/`,
/// each cut at a `:`.
fn path_candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for error in FILE_ERRORS {
        if let Some(before) = line.find(&format!(": {error}")).map(|i| &line[..i]) {
            let last = before.rsplit(": ").next().unwrap_or(before).trim();
            if !last.is_empty() && !last.contains(char::is_whitespace) {
                out.push(last.to_string());
            }
        }
    }
    for quote in ['\'', '"', '`', '\u{2018}'] {
        let mut rest = line;
        while let Some(start) = rest.find(quote) {
            let after = &rest[start + quote.len_utf8()..];
            let Some(end) = after.find(['\'', '"', '\u{2019}']) else {
                break;
            };
            let inner = &after[..end];
            if !inner.is_empty() && !inner.contains(' ') {
                out.push(inner.to_string());
            }
            // The closing quote may be more than one byte (`’`).
            let closing = after[end..].chars().next().map_or(1, char::len_utf8);
            rest = &after[end + closing..];
        }
    }
    for word in line.split_whitespace() {
        let word = word.trim_matches(|c: char| "'\"`:,;()[]{}\u{2018}\u{2019}".contains(c));
        let word = word.split(':').next().unwrap_or(word);
        if word.contains('/') && !out.iter().any(|o| o == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// Whether an error line names a write (`touch`, `mkdir`, a redirection's "cannot create").
fn says_written(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "cannot touch",
        "cannot create",
        "cannot remove",
        "cannot move",
        "for writing",
        "read-only file system",
        "mkdir",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Whether an error line names a read (`head: cannot open 'x' for reading`, `ls: cannot open
/// directory`, `sed: can't read`).
fn says_read(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "for reading",
        "can't read",
        "cannot read",
        "could not read",
        "unable to read",
        "cannot open directory",
        "cannot access",
        "cannot stat",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Whether `path` exists and Ling itself, outside the sandbox, may not read it: the command's
/// refusal then came from the file's permissions (`cat /root/x` as a user), not the sandbox.
fn unreadable_outside(path: &Path) -> bool {
    matches!(
        nix::unistd::access(path, nix::unistd::AccessFlags::R_OK),
        Err(nix::errno::Errno::EACCES)
    )
}

/// `path` with the symlinks of its longest existing ancestor resolved (the rest may not exist).
fn resolve(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.file_name().map(ToOwned::to_owned), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                at = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `a/./b/../c` → `a/c`, without touching the filesystem (the path may not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxMode;

    fn policy(network: bool) -> Policy {
        Policy {
            mode: SandboxMode::WorkspaceWrite,
            network,
            write: vec![PathBuf::from("/p"), PathBuf::from("/tmp")],
            protect: vec![PathBuf::from("/p/.git")],
            closed: Vec::new(),
            hide: vec![PathBuf::from("/h/.ssh")],
            unix_sockets: Vec::new(),
            join: None,
        }
    }

    #[test]
    fn a_refused_path_outside_is_named_one_inside_is_not() {
        let cwd = Path::new("/p");
        let out = "touch: cannot touch '/etc/x': Permission denied\nExit code: 1";
        assert_eq!(
            find_blocked(out, &policy(false), cwd),
            Some(Blocked::Write("/etc/x".into()))
        );
        let out = "bash: .git/hooks/x: Read-only file system";
        assert_eq!(
            find_blocked(out, &policy(false), cwd),
            Some(Blocked::Write("/p/.git/hooks/x".into()))
        );
        let out = "touch: cannot touch 'src/x': Permission denied";
        assert_eq!(find_blocked(out, &policy(true), cwd), None);
        // GNU's curly quotes.
        let out = "mkdir: cannot create directory \u{2018}/etc/x\u{2019}: Permission denied";
        assert_eq!(
            find_blocked(out, &policy(true), cwd),
            Some(Blocked::Write("/etc/x".into()))
        );
        let out = "cat: /h/.ssh/id_rsa: Permission denied";
        assert_eq!(
            find_blocked(out, &policy(true), cwd),
            Some(Blocked::Read("/h/.ssh/id_rsa".into()))
        );
        let out = "touch: cannot touch '/h/.ssh/x': Permission denied";
        assert_eq!(
            find_blocked(out, &policy(true), cwd),
            Some(Blocked::Write("/h/.ssh/x".into()))
        );
        let out = "bash: line 1: notes.txt: Permission denied";
        let mut read_only = policy(true);
        read_only.write.clear();
        assert_eq!(
            find_blocked(out, &read_only, cwd),
            Some(Blocked::Write("/p/notes.txt".into()))
        );
        let out = "bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied";
        assert!(matches!(
            find_blocked(out, &policy(false), cwd),
            Some(Blocked::Network(_))
        ));
        assert_eq!(
            find_blocked("error: no such file", &policy(false), cwd),
            None
        );
    }

    #[test]
    fn a_read_the_sandbox_allows_is_never_called_a_write() {
        let cwd = Path::new("/p");
        // Reads that failed on the files' own permissions: not the sandbox's doing.
        for out in [
            "ls: cannot open directory '/etc/x': Permission denied",
            "head: cannot open '/etc/x' for reading: Permission denied",
            "sed: can't read /etc/x: Permission denied",
            "cp: cannot stat '/etc/x': Permission denied",
            "ls: cannot access '/etc/x': Permission denied",
        ] {
            assert_eq!(find_blocked(out, &policy(true), cwd), None, "{out}");
        }
        // The same words of a hidden path: a read, said so.
        let out = "ls: cannot open directory '/h/.ssh': Permission denied";
        assert_eq!(
            find_blocked(out, &policy(true), cwd),
            Some(Blocked::Read("/h/.ssh".into()))
        );
        // A line naming no verb, of a file Ling cannot read either: its own permissions.
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "x").unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o000))
            .unwrap();
        let out = format!("cat: {}: Permission denied", secret.display());
        let unreadable = std::fs::read(&secret).is_err();
        let mut outside_writable = policy(true);
        outside_writable.write = vec![PathBuf::from("/p")];
        assert_eq!(
            find_blocked(&out, &outside_writable, cwd),
            // Root reads it anyway: then the sandbox is what refused, and it is not writable.
            (!unreadable).then(|| Blocked::Write(resolve(&secret)))
        );
    }

    #[test]
    fn network_errors_count_only_with_the_network_off() {
        let out = "curl: (6) Could not resolve host: example.com";
        let cwd = Path::new("/p");
        assert!(matches!(
            find_blocked(out, &policy(false), cwd),
            Some(Blocked::Network(_))
        ));
        assert_eq!(find_blocked(out, &policy(true), cwd), None);
    }
}
