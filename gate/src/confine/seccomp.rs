//! The system-call filter, installed in the command's process just before
//! it execs (inherited by every child, never lifted).
//!
//! Sockets: `socket()` only for AF_UNIX stream or seqpacket sockets,
//! `socketpair()` only AF_UNIX, `connect()` never (with only unix sockets
//! creatable, connect is how docker.sock, ssh-agent, D-Bus or a resolver
//! socket would be reached), `sendto()` never with a destination address.
//! io_uring is denied whole (its requests would pass the filter unseen). So
//! are the calls that change mounts or namespaces, read or write other
//! processes, load kernel code or programs, or use the kernel keyring; and
//! TIOCSTI/TIOCLINUX, with which a command could type into the caller's
//! terminal. `clone()` with a namespace flag is denied; `clone3()` (whose
//! flags sit behind a pointer the filter cannot read) answers ENOSYS, so
//! the C library falls back to `clone()`. Other architectures' calling
//! conventions are refused: a foreign audit architecture kills the process
//! and x32 calls on x86_64 fail.

use std::collections::BTreeMap;

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};

/// Denied outright (EPERM).
const DENIED: &[libc::c_long] = &[
    libc::SYS_connect,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_userfaultfd,
];

/// Every CLONE_NEW* flag `clone()` accepts.
const CLONE_NAMESPACES: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

fn arch() -> Result<TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("no seccomp filter for {}", std::env::consts::ARCH))
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, String> {
    Cond::new(arg, len, op, value).map_err(|e| e.to_string())
}

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, String> {
    SeccompRule::new(conds).map_err(|e| e.to_string())
}

/// The programs, in the order they are installed. Built before any fork.
// `c_long` is i64 here, i32 on 32-bit targets: the casts are not idle.
#[allow(clippy::unnecessary_cast)]
pub fn programs() -> Result<Vec<BpfProgram>, String> {
    let mut deny: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in DENIED {
        deny.insert(nr as i64, vec![]);
    }
    let unix = libc::AF_UNIX as u64;
    // socket(domain, type, proto): denied unless AF_UNIX and the type (with
    // SOCK_NONBLOCK and SOCK_CLOEXEC allowed on top) is stream or seqpacket.
    let mut type_rule = Vec::new();
    for base in [libc::SOCK_STREAM, libc::SOCK_SEQPACKET] {
        for extra in [
            0,
            libc::SOCK_NONBLOCK,
            libc::SOCK_CLOEXEC,
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        ] {
            type_rule.push(cond(1, Len::Dword, Op::Ne, (base | extra) as u64)?);
        }
    }
    deny.insert(
        libc::SYS_socket as i64,
        vec![
            rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?,
            rule(type_rule)?,
        ],
    );
    deny.insert(
        libc::SYS_socketpair as i64,
        vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?],
    );
    // sendto(fd, buf, len, flags, dest_addr, addrlen): no destination.
    deny.insert(
        libc::SYS_sendto as i64,
        vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)?])?],
    );
    let mut clone_rules = Vec::new();
    for &flag in CLONE_NAMESPACES {
        let f = flag as u32 as u64;
        clone_rules.push(rule(vec![cond(0, Len::Qword, Op::MaskedEq(f), f)?])?);
    }
    deny.insert(libc::SYS_clone as i64, clone_rules);
    deny.insert(
        libc::SYS_ioctl as i64,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCLINUX)?])?,
        ],
    );
    let arch = arch()?;
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let main = SeccompFilter::new(deny, SeccompAction::Allow, eperm, arch)
        .and_then(BpfProgram::try_from)
        .map_err(|e| format!("cannot build the seccomp filter: {e}"))?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3 as i64, vec![]);
    let clone3 = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| format!("cannot build the seccomp filter: {e}"))?;
    let mut out = vec![main, clone3];
    if let Some(x32) = x32_guard() {
        out.push(x32);
    }
    Ok(out)
}

/// On x86_64, x32 system calls carry the x86_64 audit architecture with
/// bit 30 set in the number; the filters above would not see them as the
/// calls they are. They are refused.
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Option<BpfProgram> {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    Some(vec![
        ins(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW), // other filters judge it
        ins(LD_W_ABS, 0, 0, 0),                    // seccomp_data.nr
        ins(JGE_K, 0, 1, 0x4000_0000),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ])
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_guard() -> Option<BpfProgram> {
    None
}

/// Installs the programs in the calling thread (no-new-privileges must be
/// set already).
pub fn install(programs: &[BpfProgram]) -> Result<(), String> {
    for p in programs {
        seccompiler::apply_filter(p)
            .map_err(|e| format!("cannot install the seccomp filter: {e}"))?;
    }
    Ok(())
}
