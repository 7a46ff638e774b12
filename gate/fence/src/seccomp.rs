//! The seccomp layer: the network fence that needs nothing but the kernel.
//!
//! - `socket` and `socketpair` only for unix stream or seqpacket sockets
//!   (a datagram one could `sendmsg` to any named socket); `connect` never
//!   (the only sockets left are unix ones, and a unix socket is how
//!   docker.sock, an ssh-agent, nscd, D-Bus and systemd-resolved are
//!   reached); `sendto` never with an address.
//! - no io_uring (its requests would not pass through this filter), no
//!   ptrace or process_vm_*, no mount, namespace, keyring, module or BPF
//!   calls, no `clone` with a namespace flag.
//! - no TIOCSTI or TIOCLINUX ioctl, with which a command could type into
//!   the terminal of the shell that started it.
//! - `clone3` answers ENOSYS (its flags sit in memory the filter cannot
//!   read; libc then falls back to `clone`, which it can), and so does any
//!   x32 system call on x86_64 (same architecture tag, other numbers).
//! - another architecture's system calls kill the process.
//!
//! The program is written out here rather than generated: a generic
//! compiler's program for these rules is about 480 instructions, and the
//! kernel's work on installing it (checking, translating, and working out
//! which calls it always allows) grows with its length, to a quarter of a
//! millisecond per run. This one is about 60. A test runs both on every
//! system call and the argument values the rules name, and requires the
//! same answer.

#[cfg(not(target_endian = "little"))]
compile_error!("the seccomp program reads the low half of an argument at its first word");

use libc::{
    BPF_ABS, BPF_ALU, BPF_AND, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W,
    SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS,
};

/// `struct seccomp_data`: where the filter reads what it decides on.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low half of argument `n` (little-endian).
const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}
const fn arg_high(n: u32) -> u32 {
    arg_low(n) + 4
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 243 | 0x8000_0000 | 0x4000_0000;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!(
    "the seccomp program knows the architecture tags of x86_64, aarch64 and riscv64 only"
);

/// x32 system calls are x86_64's numbers with this bit set.
const X32_BIT: u32 = 0x4000_0000;

const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// Every namespace flag `clone` can carry.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The same, as one mask.
const NAMESPACES: u32 = {
    let mut mask = 0;
    let mut i = 0;
    while i < NAMESPACE_FLAGS.len() {
        mask |= NAMESPACE_FLAGS[i] as u32;
        i += 1;
    }
    mask
};

/// The calls refused whatever their arguments.
const REFUSED: &[libc::c_long] = &[
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

/// Where a jump goes: the next instruction, or a labelled one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    L(Label),
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Label {
    Allow,
    Refuse,
    NoSuchCall,
    Kill,
    Socket,
    SendTo,
    Ioctl,
    Clone,
}

enum Op {
    Load(u32),
    And(u32),
    Jump(u16, u32, To, To),
    Return(u32),
    Here(Label),
}

use To::{Next, L};

fn jeq(k: u32, yes: To, no: To) -> Op {
    Op::Jump((BPF_JMP | BPF_JEQ | BPF_K) as u16, k, yes, no)
}

fn nr(call: libc::c_long) -> u32 {
    u32::try_from(call).expect("a system call number fits 32 bits")
}

/// The program, with its jumps by label.
fn program() -> Vec<Op> {
    let refuse = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let mut p = vec![
        Op::Load(ARCH),
        jeq(AUDIT_ARCH, Next, L(Label::Kill)),
        Op::Load(NR),
        Op::Jump(
            (BPF_JMP | BPF_JGE | BPF_K) as u16,
            X32_BIT,
            L(Label::NoSuchCall),
            Next,
        ),
        jeq(nr(libc::SYS_clone3), L(Label::NoSuchCall), Next),
    ];
    p.extend(REFUSED.iter().map(|&c| jeq(nr(c), L(Label::Refuse), Next)));
    for (call, block) in [
        (libc::SYS_socket, Label::Socket),
        (libc::SYS_socketpair, Label::Socket),
        (libc::SYS_sendto, Label::SendTo),
        (libc::SYS_ioctl, Label::Ioctl),
        (libc::SYS_clone, Label::Clone),
    ] {
        p.push(jeq(nr(call), L(block), Next));
    }
    p.extend([
        // Any other call.
        Op::Return(SECCOMP_RET_ALLOW),
        // socket(domain, type, protocol), socketpair(domain, type, ...):
        // a unix stream or seqpacket socket only (the type's low four bits;
        // the rest are flags).
        Op::Here(Label::Socket),
        Op::Load(arg_low(0)),
        jeq(libc::AF_UNIX as u32, Next, L(Label::Refuse)),
        Op::Load(arg_low(1)),
        Op::And(0xf),
        jeq(libc::SOCK_STREAM as u32, L(Label::Allow), Next),
        jeq(
            libc::SOCK_SEQPACKET as u32,
            L(Label::Allow),
            L(Label::Refuse),
        ),
        // sendto(fd, buf, len, flags, addr, addrlen): no address.
        Op::Here(Label::SendTo),
        Op::Load(arg_low(4)),
        jeq(0, Next, L(Label::Refuse)),
        Op::Load(arg_high(4)),
        jeq(0, L(Label::Allow), L(Label::Refuse)),
        // ioctl(fd, request, ...): the request is an int.
        Op::Here(Label::Ioctl),
        Op::Load(arg_low(1)),
        jeq(TIOCSTI, L(Label::Refuse), Next),
        jeq(TIOCLINUX, L(Label::Refuse), L(Label::Allow)),
        // clone(flags, ...): no namespace flag (all in the low half).
        Op::Here(Label::Clone),
        Op::Load(arg_low(0)),
        Op::Jump(
            (BPF_JMP | BPF_JSET | BPF_K) as u16,
            NAMESPACES,
            L(Label::Refuse),
            L(Label::Allow),
        ),
        // Jumps only go forward: the answers come last.
        Op::Here(Label::Allow),
        Op::Return(SECCOMP_RET_ALLOW),
        Op::Here(Label::Refuse),
        Op::Return(refuse),
        Op::Here(Label::NoSuchCall),
        Op::Return(SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        Op::Here(Label::Kill),
        Op::Return(SECCOMP_RET_KILL_PROCESS),
    ]);
    p
}

/// The program with its labels turned into the kernel's relative jumps.
fn assemble() -> Vec<libc::sock_filter> {
    let ops = program();
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in &ops {
        match op {
            Op::Here(l) => {
                at.insert(*l, n);
            }
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for op in &ops {
        let here = out.len();
        let offset = |to: &To| -> u8 {
            match to {
                Next => 0,
                L(l) => {
                    let target = at[l];
                    u8::try_from(target - here - 1).expect("a jump within 255 instructions")
                }
            }
        };
        let insn = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        match op {
            Op::Here(_) => continue,
            Op::Load(off) => out.push(insn(BPF_LD | BPF_W | BPF_ABS, *off)),
            Op::And(k) => out.push(insn(BPF_ALU | BPF_AND | BPF_K, *k)),
            Op::Return(k) => out.push(insn(BPF_RET | BPF_K, *k)),
            Op::Jump(code, k, yes, no) => out.push(libc::sock_filter {
                code: *code,
                jt: offset(yes),
                jf: offset(no),
                k: *k,
            }),
        }
    }
    out
}

/// Installs the filter on the calling thread (no-new-privileges must be
/// set). Everything it execs inherits it, for good.
pub fn install() -> Result<(), String> {
    let program = assemble();
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).expect("a short program"),
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points at `program`, alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &prog as *const libc::sock_fprog,
        )
    };
    if r != 0 {
        return Err(format!(
            "cannot install the seccomp filter ({})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
        SeccompCondition as Cond, SeccompFilter, SeccompRule,
    };

    /// The same rules as a generic compiler (seccompiler) writes them:
    /// the reference the program above is held to.
    fn reference() -> Vec<BpfProgram> {
        let cond = |arg: u8, len: Len, op: Op, value: u64| Cond::new(arg, len, op, value).unwrap();
        let rule = |conds: Vec<Cond>| SeccompRule::new(conds).unwrap();
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        let unix = libc::AF_UNIX as u64;
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
        rules.insert(libc::SYS_socketpair, socket);
        rules.insert(
            libc::SYS_sendto,
            vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)])],
        );
        rules.insert(
            libc::SYS_ioctl,
            vec![
                rule(vec![cond(1, Len::Dword, Op::Eq, TIOCSTI as u64)]),
                rule(vec![cond(1, Len::Dword, Op::Eq, TIOCLINUX as u64)]),
            ],
        );
        rules.insert(
            libc::SYS_clone,
            NAMESPACE_FLAGS
                .iter()
                .map(|&f| rule(vec![cond(0, Len::Qword, Op::MaskedEq(f as u64), f as u64)]))
                .collect(),
        );
        for &nr in REFUSED {
            rules.insert(nr, vec![]);
        }
        let arch = if cfg!(target_arch = "aarch64") {
            seccompiler::TargetArch::aarch64
        } else if cfg!(target_arch = "riscv64") {
            seccompiler::TargetArch::riscv64
        } else {
            seccompiler::TargetArch::x86_64
        };
        let main: BpfProgram = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .unwrap()
        .try_into()
        .unwrap();
        // clone3 and x32 calls: ENOSYS, as a second filter.
        let s = |code: u32, k: u32| seccompiler::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let j = |code: u32, k: u32, jt: u8, jf: u8| seccompiler::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        let enosys = vec![
            s(BPF_LD | BPF_W | BPF_ABS, NR),
            j(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 2, 0),
            j(BPF_JMP | BPF_JEQ | BPF_K, nr(libc::SYS_clone3), 1, 0),
            s(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            s(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        ];
        // The kernel runs the newest filter first.
        vec![enosys, main]
    }

    /// `struct seccomp_data` as bytes.
    fn data(arch: u32, nr: u32, args: [u64; 6]) -> Vec<u8> {
        let mut d = Vec::with_capacity(64);
        d.extend_from_slice(&nr.to_le_bytes());
        d.extend_from_slice(&arch.to_le_bytes());
        d.extend_from_slice(&0u64.to_le_bytes()); // instruction pointer
        for a in args {
            d.extend_from_slice(&a.to_le_bytes());
        }
        d
    }

    /// What a classic BPF program returns for `data`, as the kernel runs
    /// it (only the instructions these programs use; any other fails).
    fn run(program: &[(u16, u8, u8, u32)], data: &[u8]) -> u32 {
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let (code, jt, jf, k) = program[pc];
            let code = u32::from(code);
            pc += 1;
            let jump = |taken: bool| usize::from(if taken { jt } else { jf });
            match code {
                c if c == BPF_LD | BPF_W | BPF_ABS => {
                    let at = k as usize;
                    a = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                }
                c if c == BPF_ALU | BPF_AND | BPF_K => a &= k,
                c if c == BPF_JMP | libc::BPF_JA => pc += k as usize,
                c if c == BPF_JMP | BPF_JEQ | BPF_K => pc += jump(a == k),
                c if c == BPF_JMP | BPF_JGE | BPF_K => pc += jump(a >= k),
                c if c == BPF_JMP | libc::BPF_JGT | BPF_K => pc += jump(a > k),
                c if c == BPF_JMP | BPF_JSET | BPF_K => pc += jump(a & k != 0),
                c if c == BPF_RET | BPF_K => return k,
                c => panic!("instruction {c:#x} not known to this test"),
            }
        }
    }

    /// Of several filters' answers, the one the kernel acts on: the most
    /// restrictive action (compared as signed), the newest on a tie.
    fn combined(answers: impl Iterator<Item = u32>) -> u32 {
        let action = |r: u32| (r & libc::SECCOMP_RET_ACTION_FULL) as i32;
        answers.fold(SECCOMP_RET_ALLOW, |best, r| {
            if action(r) < action(best) {
                r
            } else {
                best
            }
        })
    }

    #[test]
    fn the_program_answers_as_the_generic_compilers_does_for_every_call() {
        let ours: Vec<_> = assemble()
            .iter()
            .map(|i| (i.code, i.jt, i.jf, i.k))
            .collect();
        let theirs: Vec<Vec<_>> = reference()
            .iter()
            .map(|p| p.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect())
            .collect();
        assert!(
            ours.len() * 4 < theirs[1].len(),
            "{} instructions against {}",
            ours.len(),
            theirs[1].len()
        );
        let mut values: Vec<u64> = vec![0, 1, 2, 3, 5, 10, 16, 0xf, 0x10, 0x11, 0x12];
        values.extend((0..16).map(|t| 1u64 << 32 | t));
        values.extend(
            [
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::SOCK_RAW,
            ]
            .map(|t| t as u64),
        );
        values.extend([TIOCSTI, TIOCLINUX, TIOCSTI + 1, 0x5401].map(u64::from));
        values.extend([1u64 << 32 | u64::from(TIOCSTI), u64::from(TIOCSTI) << 32]);
        let clone_flags = NAMESPACE_FLAGS.into_iter().chain([
            libc::CLONE_VM | libc::CLONE_FS | libc::CLONE_FILES | libc::SIGCHLD,
            libc::CLONE_THREAD | libc::CLONE_SIGHAND | libc::CLONE_VM,
            libc::CLONE_NEWUSER | libc::CLONE_VM,
        ]);
        values.extend(clone_flags.map(|f| f as u32 as u64));
        values.extend([u64::MAX, 1 << 32, 0xffff_ffff]);
        let other_arch = 0x4000_0003; // i386
        let calls: Vec<u32> = (0..600)
            .chain((0..600).map(|n| X32_BIT | n))
            .chain([X32_BIT - 1, u32::MAX])
            .collect();
        let conditional = [
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_sendto,
            libc::SYS_ioctl,
            libc::SYS_clone,
        ]
        .map(nr);
        let mut seen = BTreeMap::new();
        for arch in [AUDIT_ARCH, other_arch] {
            for &call in &calls {
                // Every pairing of the named values for the calls whose
                // arguments count; a few for the rest.
                let sets: Vec<[u64; 6]> = if conditional.contains(&call) && arch == AUDIT_ARCH {
                    let mut s = Vec::new();
                    for &a0 in &values {
                        for &a1 in &values {
                            for a4 in [0, 1, 1 << 32, u64::MAX] {
                                s.push([a0, a1, 0, 0, a4, 0]);
                            }
                        }
                    }
                    s
                } else {
                    vec![[0; 6], [2, 2, 0, 0, 1, 0], [u64::MAX; 6]]
                };
                for args in sets {
                    let d = data(arch, call, args);
                    let want = combined(theirs.iter().map(|p| run(p, &d)));
                    let got = run(&ours, &d);
                    assert_eq!(
                        got, want,
                        "call {call:#x} on arch {arch:#x} with {args:x?}: {got:#x}, the reference {want:#x}"
                    );
                    *seen.entry(got).or_insert(0usize) += 1;
                }
            }
        }
        // The comparison saw every answer, each many times.
        let eperm = SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        for answer in [SECCOMP_RET_ALLOW, eperm, enosys, SECCOMP_RET_KILL_PROCESS] {
            assert!(seen.get(&answer).is_some_and(|&n| n > 500), "{seen:x?}");
        }
    }
}
