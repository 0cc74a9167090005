//! Wrappers that change who or where a command runs (`sudo`, `doas`, `su`, `chroot`,
//! `nsenter`, `unshare`, `pkexec`, `sg`): an allow rule must name them, and without a command
//! they start a shell reading standard input, which cannot be known.

use super::getopt::{EMPTY, Spec, getopt, operands_known};
use super::unknown::Unknown;
use super::{Inner, Wrapped, assignment_name, script_of};
use crate::permissions::shell::words::Word;

pub(super) fn sudo(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "CDghpRrtTUu",
        flag: "AbBEeHiKklNnPSsVv",
        long_value: "close-from chdir group host prompt chroot role type command-timeout other-user user",
        long_flag: "askpass background bell preserve-env edit set-home login remove-timestamp reset-timestamp list no-update non-interactive preserve-groups stdin shell validate version help",
        ..EMPTY
    };
    let parsed = getopt("sudo", words, 1, &SPEC)?;
    if ["e", "edit", "l", "list", "V", "version", "help"]
        .iter()
        .any(|o| parsed.has(o))
    {
        return Ok(Wrapped::nothing(false));
    }
    let mut start = parsed.next;
    while words.get(start).and_then(assignment_name).is_some() {
        start += 1;
    }
    let shell = ["s", "i", "shell", "login"].iter().any(|o| parsed.has(o));
    if start >= words.len() && shell {
        return Err(Unknown::Shell { shell: "sudo" });
    }
    Ok(Wrapped {
        inner: (start < words.len())
            .then(|| Inner {
                start,
                assignments: words[parsed.next..start].to_vec(),
                words: words[start..].to_vec(),
            })
            .into_iter()
            .collect(),
        ..Wrapped::nothing(false)
    })
}

pub(super) fn doas(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "uC",
        flag: "nsL",
        ..EMPTY
    };
    let parsed = getopt("doas", words, 1, &SPEC)?;
    if parsed.has("C") || parsed.has("L") {
        return Ok(Wrapped::nothing(false));
    }
    if parsed.has("s") || parsed.next >= words.len() {
        return Err(Unknown::Shell { shell: "doas -s" });
    }
    Ok(Wrapped::runs(parsed.next, words, false))
}

/// `su [options] [USER [ARGS]]` runs `-c TEXT` with the user's shell; without `-c` a shell
/// reading standard input. `runuser -u USER CMD...` runs the command directly.
pub(super) fn su(program: &str, words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "cgGswu",
        flag: "lmpPf",
        long_value: "command session-command group supp-group shell whitelist-environment user",
        long_flag: "login preserve-environment pty fast",
        ..EMPTY
    };
    let mut parsed = getopt(program, words, 1, &SPEC)?;
    if program == "runuser" && (parsed.has("u") || parsed.has("user")) {
        return Ok(Wrapped::runs(parsed.next, words, false));
    }
    // `-` (a login shell) and the user name may come before more options
    // (`su - root -c 'cmd'`).
    let mut i = parsed.next;
    if words.get(i).and_then(Word::lit) == Some("-") {
        i += 1;
    }
    if i < words.len() {
        let after = getopt(program, words, i + 1, &SPEC)?;
        parsed.options.extend(after.options);
    }
    let text = ["c", "command", "session-command"]
        .iter()
        .find_map(|o| parsed.value(o).cloned());
    match text {
        Some(text) => Ok(script_of(program, std::slice::from_ref(&text), false)),
        None => Err(Unknown::NoText(program.to_string())),
    }
}

pub(super) fn sg(words: &[Word]) -> Result<Wrapped, Unknown> {
    // `sg GROUP [-c] TEXT`
    let mut i = 2;
    if words.get(i).and_then(Word::lit) == Some("-c") {
        i += 1;
    }
    if words.len() <= i {
        return Err(Unknown::SgShell);
    }
    Ok(script_of("sg", &words[i..], false))
}

/// Wrappers that change who or where a command runs: options, `operands` of their own, then
/// the command; without one they start a shell reading standard input.
pub(super) fn privileged(
    program: &str,
    words: &[Word],
    spec: &Spec,
    operands: usize,
) -> Result<Wrapped, Unknown> {
    let parsed = getopt(program, words, 1, spec)?;
    let start = parsed.next + operands;
    operands_known(program, words, parsed.next, start)?;
    if start >= words.len() {
        return Err(Unknown::NoCommand(program.to_string()));
    }
    Ok(Wrapped::runs(start, words, false))
}

pub(super) const PKEXEC: Spec = Spec {
    long_value: "user",
    long_flag: "disable-internal-agent keep-cwd",
    ..EMPTY
};
pub(super) const CHROOT: Spec = Spec {
    long_value: "userspec groups",
    long_flag: "skip-chdir",
    ..EMPTY
};
pub(super) const NSENTER: Spec = Spec {
    value: "tSGW",
    flag: "aFZce",
    optional: "muinpUCTrw",
    long_value: "target setuid setgid wdns",
    long_flag: "all mount uts ipc net pid user cgroup time root wd no-fork preserve-credentials follow-context env keep-caps user-parent join-cgroup",
    ..EMPTY
};
pub(super) const UNSHARE: Spec = Spec {
    value: "RwSGl",
    flag: "frcV",
    optional: "muinpUCT",
    long_value: "root wd setuid setgid propagation setgroups map-user map-group map-users map-groups load-interp",
    long_flag: "mount uts ipc net pid user cgroup time mount-proc map-auto fork kill-child map-root-user map-current-user keep-caps monotonic boottime",
    ..EMPTY
};
