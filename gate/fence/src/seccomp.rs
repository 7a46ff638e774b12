//! The seccomp layer: the network fence that needs nothing but the kernel.
//!
//! - `socket` and `socketpair` only for unix stream or seqpacket sockets
//!   (a datagram one could `sendmsg` to any named socket); `connect` never (the only sockets left are unix ones,
//!   and a unix socket is how docker.sock, an ssh-agent, nscd, D-Bus and
//!   systemd-resolved are reached); `sendto` never with an address.
//! - no io_uring (its requests would not pass through this filter), no
//!   ptrace or process_vm_*, no mount, namespace, keyring, module or BPF
//!   calls, no `clone` with a namespace flag.
//! - no TIOCSTI or TIOCLINUX ioctl, with which a command could type into
//!   the terminal of the shell that started it.
//! - `clone3` answers ENOSYS (its flags sit in memory the filter cannot
//!   read; libc then falls back to `clone`, which it can), and so does any
//!   x32 system call on x86_64 (same architecture tag, other numbers).
//! - another architecture's system calls kill the process.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule,
};

fn arch() -> seccompiler::TargetArch {
    if cfg!(target_arch = "aarch64") {
        seccompiler::TargetArch::aarch64
    } else {
        seccompiler::TargetArch::x86_64
    }
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Cond {
    Cond::new(arg, len, op, value).expect("a valid seccomp condition")
}

fn rule(conds: Vec<Cond>) -> SeccompRule {
    SeccompRule::new(conds).expect("a valid seccomp rule")
}

/// The filter whose matches fail with EPERM.
fn denials() -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let unix = libc::AF_UNIX as u64;
    // socket(domain, type, protocol)
    let mut socket = vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)])];
    for t in 0..16u64 {
        if t == libc::SOCK_STREAM as u64 || t == libc::SOCK_SEQPACKET as u64 {
            continue;
        }
        socket.push(rule(vec![
            cond(0, Len::Dword, Op::Eq, unix),
            cond(1, Len::Dword, Op::MaskedEq(0xf), t),
        ]));
    }
    rules.insert(libc::SYS_socket, socket.clone());
    // The same for a pair: a datagram end would send to any named socket
    // with sendmsg, whose address sits in memory this filter cannot read.
    rules.insert(libc::SYS_socketpair, socket);
    rules.insert(
        libc::SYS_sendto,
        vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)])],
    );
    const TIOCSTI: u64 = 0x5412;
    const TIOCLINUX: u64 = 0x541C;
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCSTI)]),
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCLINUX)]),
        ],
    );
    let namespaces = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
    ];
    rules.insert(
        libc::SYS_clone,
        namespaces
            .iter()
            .map(|&f| rule(vec![cond(0, Len::Qword, Op::MaskedEq(f as u64), f as u64)]))
            .collect(),
    );
    for nr in [
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
    ] {
        rules.insert(nr, vec![]);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch(),
    )
    .map_err(|e| format!("cannot build the seccomp filter ({e})"))?;
    filter
        .try_into()
        .map_err(|e| format!("cannot compile the seccomp filter ({e})"))
}

/// A hand-written filter: `clone3` and x32 calls answer ENOSYS.
fn enosys() -> BpfProgram {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    use seccompiler::sock_filter;
    let stmt = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    const NR: u32 = 0; // offsetof(struct seccomp_data, nr)
    const X32_BIT: u32 = 0x4000_0000;
    let errno = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, NR),
        jump(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 2, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_clone3 as u32, 1, 0),
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW),
        stmt(BPF_RET | BPF_K, errno),
    ]
}

/// Installs both filters on the calling thread (no-new-privileges must be
/// set). Everything it execs inherits them, for good.
pub fn install() -> Result<(), String> {
    let main = denials()?;
    seccompiler::apply_filter(&main)
        .map_err(|e| format!("cannot install the seccomp filter ({e})"))?;
    seccompiler::apply_filter(&enosys())
        .map_err(|e| format!("cannot install the seccomp filter for clone3 ({e})"))?;
    Ok(())
}
