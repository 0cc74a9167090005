//! The seccomp filter of a sandboxed command: what Landlock does not see. Refused with `EACCES`
//! (a program reports "Permission denied", which Ling reads as the sandbox's):
//!
//! - in every mode: `io_uring` (its operations pass seccomp by), the `TIOCSTI` and `TIOCLINUX`
//!   ioctls on any descriptor (typing into a terminal), the kernel keyring (`add_key`, `keyctl`,
//!   `request_key`: the user's session keys), and every x32 system call (a second syscall table
//!   this filter would not match);
//! - without `sandbox.allowUnixSockets`: `socket(AF_UNIX)` (a pathname socket is not a file to
//!   Landlock before ABI 9, so any service listening on one would be reachable; `socketpair`
//!   still works);
//! - with the network off: `socket` of every family but Unix and netlink's route family
//!   (interface listings; changing routes needs capabilities no command has), and TCP Fast
//!   Open, which sends data without `connect`: `MSG_FASTOPEN` on `sendto`/`sendmsg`/`sendmmsg`
//!   and `setsockopt(TCP_FASTOPEN_CONNECT)`.

use std::collections::BTreeMap;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::error::EnforceError;

/// `TIOCLINUX` (not in every libc).
const TIOCLINUX: u64 = 0x541C;
/// `TCP_FASTOPEN_CONNECT` (Linux 4.11).
const TCP_FASTOPEN_CONNECT: u64 = 30;
/// `NETLINK_ROUTE`.
const NETLINK_ROUTE: u64 = 0;
/// The bit x32 system call numbers carry on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// The filter for a command with the network `network` and Unix sockets allowed or not.
pub(super) fn program(network: bool, unix_sockets: bool) -> Result<BpfProgram, BackendError> {
    let rule = SeccompRule::new;
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_add_key,
        libc::SYS_keyctl,
        libc::SYS_request_key,
    ] {
        map.insert(nr, Vec::new());
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
    let unix = libc::AF_UNIX as u64;
    let mut socket = Vec::new();
    if !network {
        // Every family but Unix and netlink...
        socket.push(rule(vec![
            cond(0, SeccompCmpOp::Ne, unix)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_NETLINK as u64)?,
        ])?);
        // ...and of netlink only the route family.
        socket.push(rule(vec![
            cond(0, SeccompCmpOp::Eq, libc::AF_NETLINK as u64)?,
            cond(2, SeccompCmpOp::Ne, NETLINK_ROUTE)?,
        ])?);
        let fast_open = libc::MSG_FASTOPEN as u64;
        let with_fast_open = |arg| cond(arg, SeccompCmpOp::MaskedEq(fast_open), fast_open);
        map.insert(libc::SYS_sendto, vec![rule(vec![with_fast_open(3)?])?]);
        map.insert(libc::SYS_sendmsg, vec![rule(vec![with_fast_open(2)?])?]);
        map.insert(libc::SYS_sendmmsg, vec![rule(vec![with_fast_open(3)?])?]);
        map.insert(
            libc::SYS_setsockopt,
            vec![rule(vec![
                cond(1, SeccompCmpOp::Eq, libc::IPPROTO_TCP as u64)?,
                cond(2, SeccompCmpOp::Eq, TCP_FASTOPEN_CONNECT)?,
            ])?],
        );
    }
    if !unix_sockets {
        socket.push(rule(vec![cond(0, SeccompCmpOp::Eq, unix)?])?);
    }
    if !socket.is_empty() {
        map.insert(libc::SYS_socket, socket);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )?;
    let mut program: BpfProgram = filter.try_into()?;
    if arch == TargetArch::x86_64 {
        refuse_x32(&mut program);
    }
    Ok(program)
}

/// Inserts, right after the architecture check the program opens with, a refusal of every
/// system call number with the x32 bit. Jumps in BPF are relative and only go forward, and the
/// check's own jump lands on the first instruction after it, so nothing else moves.
fn refuse_x32(program: &mut BpfProgram) {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const BPF_JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
    let errno = libc::SECCOMP_RET_ERRNO | (libc::EACCES as u32);
    // The architecture check is: load arch, jump if equal over the next, kill.
    let at = 3.min(program.len());
    let insert = [
        // seccomp_data.nr is at offset 0.
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
    ];
    program.splice(at..at, insert);
}

/// Installs the filter on the calling thread (what it starts inherits it).
pub(super) fn apply(network: bool, unix_sockets: bool) -> Result<(), EnforceError> {
    let program = program(network, unix_sockets)?;
    Ok(seccompiler::apply_filter(&program)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x32_refusal_follows_the_architecture_check() {
        let strict = program(false, false).unwrap();
        // Load arch, compare, kill; then the x32 check; then the original body loads nr.
        assert_eq!(strict[3].code, 0x20);
        assert_eq!(strict[4].k, X32_SYSCALL_BIT);
        assert_eq!(strict[5].code, 0x06);
        assert_eq!(strict[6].code, 0x20);
        assert!(program(true, true).unwrap().len() < strict.len());
    }
}
