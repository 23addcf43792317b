//! The program the namespace's init execs ([`super::namespaces`]): on x86-64 a static ELF of
//! 189 bytes, made once per process in a sealed memfd, that unblocks every signal, names itself
//! `sleep` (the command it stands for: `ps` inside shows the same either way) and calls `pause`
//! forever; elsewhere,
//! or where this kernel refuses to exec a memfd (`vm.memfd_noexec = 2`), the system's `sleep`.
//!
//! Why: the init only has to exist (pid 1 of the namespace, SIGCHLD ignored and SIGKILL as its
//! parent-death signal, both set before `execve` and kept across it) until release kills it.
//! A dynamic `sleep` spends about 0.7 ms of CPU per launch in the loader and libc's start
//! (catatonit and tini, the static inits of podman and docker, exist for the same reason);
//! this program spends none: its only instruction besides the loop is the system call.
//!
//! Invariants: the memfd is close-on-exec and sealed (no write, shrink or grow, seals locked)
//! before its descriptor is published; the init tries it first and falls back to `sleep` if
//! the exec fails, so a refusal costs time, never the sandbox.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// Where the program is loaded (the classic base of static executables, above
/// `vm.mmap_min_addr`).
const BASE: u64 = 0x40_0000;
/// ELF header and one program header.
const EHDR: usize = 64;
const PHDR: usize = 56;

/// The machine code of `rt_sigprocmask(SIG_SETMASK, &empty); prctl(PR_SET_NAME, "sleep");
/// loop { pause() }` and the ELF machine number, for this architecture (checked against the GNU
/// assembler's output). The init is started with every signal blocked and execs with them
/// blocked (no handler of Node to reset before the exec, which resets them itself); the
/// program's first instruction unblocks them, so that signals sent to pid 1 from inside are
/// dropped, as the kernel drops them for a namespace init without handlers, not queued.
fn code() -> Option<(u16, &'static [u8])> {
    if cfg!(target_arch = "x86_64") {
        #[rustfmt::skip]
        const CODE: &[u8] = &[
            0xb8, 14, 0, 0, 0,                // 0x00: mov eax, 14 (SYS_rt_sigprocmask)
            0xbf, 2, 0, 0, 0,                 // 0x05: mov edi, 2 (SIG_SETMASK)
            0x48, 0x8d, 0x35, 0x2c, 0, 0, 0,  // 0x0a: lea rsi, [rip + 0x2c] (the empty set)
            0x31, 0xd2,                       // 0x11: xor edx, edx (no old set)
            0x41, 0xba, 8, 0, 0, 0,           // 0x13: mov r10d, 8 (sigsetsize)
            0x0f, 0x05,                       // 0x19: syscall
            0xbf, 15, 0, 0, 0,                // 0x1b: mov edi, 15 (PR_SET_NAME)
            0x48, 0x8d, 0x35, 0x10, 0, 0, 0,  // 0x20: lea rsi, [rip + 0x10] (the name)
            0xb8, 157, 0, 0, 0,               // 0x27: mov eax, 157 (SYS_prctl)
            0x0f, 0x05,                       // 0x2c: syscall
            0xb8, 34, 0, 0, 0,                // 0x2e: mov eax, 34 (SYS_pause)
            0x0f, 0x05,                       // 0x33: syscall
            0xeb, 0xf7,                       // 0x35: jmp 0x2e
            b's', b'l', b'e', b'e', b'p', 0,  // 0x37: the name
            0, 0, 0, 0, 0, 0, 0, 0,           // 0x3d: the empty signal set
        ];
        Some((62, CODE))
    } else {
        None
    }
}

/// A static little-endian ELF64 executable whose one read+execute segment is the file itself,
/// entered right after the headers.
fn elf(machine: u16, code: &[u8]) -> Vec<u8> {
    let size = (EHDR + PHDR + code.len()) as u64;
    let mut b = Vec::with_capacity(size as usize);
    // e_ident: magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, System V ABI, padding.
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&2u16.to_le_bytes()); // e_type: ET_EXEC
    b.extend_from_slice(&machine.to_le_bytes()); // e_machine
    b.extend_from_slice(&1u32.to_le_bytes()); // e_version
    b.extend_from_slice(&(BASE + (EHDR + PHDR) as u64).to_le_bytes()); // e_entry
    b.extend_from_slice(&(EHDR as u64).to_le_bytes()); // e_phoff
    b.extend_from_slice(&0u64.to_le_bytes()); // e_shoff: no sections
    b.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    b.extend_from_slice(&(EHDR as u16).to_le_bytes()); // e_ehsize
    b.extend_from_slice(&(PHDR as u16).to_le_bytes()); // e_phentsize
    b.extend_from_slice(&1u16.to_le_bytes()); // e_phnum
    b.extend_from_slice(&[0; 6]); // e_shentsize, e_shnum, e_shstrndx
    b.extend_from_slice(&1u32.to_le_bytes()); // p_type: PT_LOAD
    b.extend_from_slice(&5u32.to_le_bytes()); // p_flags: PF_R | PF_X
    b.extend_from_slice(&0u64.to_le_bytes()); // p_offset
    b.extend_from_slice(&BASE.to_le_bytes()); // p_vaddr
    b.extend_from_slice(&BASE.to_le_bytes()); // p_paddr
    b.extend_from_slice(&size.to_le_bytes()); // p_filesz
    b.extend_from_slice(&size.to_le_bytes()); // p_memsz
    b.extend_from_slice(&0x1000u64.to_le_bytes()); // p_align
    b.extend_from_slice(code);
    debug_assert_eq!(b.len() as u64, size);
    b
}

/// `MFD_EXEC` (Linux 6.3): ask for an executable memfd where `vm.memfd_noexec` would default
/// to a non-executable one.
const MFD_EXEC: libc::c_uint = 0x10;

/// A sealed, close-on-exec memfd holding `bytes`.
fn sealed_memfd(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: a NUL-terminated name; the descriptor is owned at once.
    let mut fd = unsafe { libc::memfd_create(c"acp-terminal-init".as_ptr(), flags | MFD_EXEC) };
    if fd < 0 {
        // Before 6.3 the flag is unknown (EINVAL), and every memfd is executable anyway.
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(c"acp-terminal-init".as_ptr(), flags) };
    }
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just created, owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    std::io::Write::write_all(&mut file, bytes)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on our own descriptor.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file.into())
}

/// The init program's descriptor (made once per process), or -1: use `sleep`.
pub fn program_fd() -> RawFd {
    static FD: OnceLock<Option<OwnedFd>> = OnceLock::new();
    FD.get_or_init(|| {
        let (machine, code) = code()?;
        sealed_memfd(&elf(machine, code)).ok()
    })
    .as_ref()
    .map_or(-1, |fd| fd.as_raw_fd())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headers_describe_one_segment_holding_the_whole_file() {
        let b = elf(62, &[0xcc; 9]);
        assert_eq!(b.len(), EHDR + PHDR + 9);
        assert_eq!(&b[..4], b"\x7fELF");
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        assert_eq!(u64_at(24), BASE + 120, "entry right after the headers");
        assert_eq!(u64_at(32), 64, "program headers after the ELF header");
        assert_eq!(u64_at(EHDR + 32), b.len() as u64, "p_filesz");
        assert_eq!(u64_at(EHDR + 40), b.len() as u64, "p_memsz");
    }

    /// The program runs, unblocks the signals it was started with blocked, names itself `sleep`,
    /// stays (it is still there after 50 ms) and dies of SIGKILL, as the namespace's init must.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_program_waits_until_it_is_killed() {
        let fd = program_fd();
        assert!(fd >= 0, "a sealed executable memfd");
        // SAFETY: the child only makes system calls before execveat or _exit.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                // Started as the init is: every signal blocked.
                let mut all: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
                let argv = [c"init".as_ptr(), std::ptr::null()];
                let envp = [std::ptr::null::<libc::c_char>()];
                libc::syscall(
                    libc::SYS_execveat,
                    fd,
                    c"".as_ptr(),
                    argv.as_ptr(),
                    envp.as_ptr(),
                    libc::AT_EMPTY_PATH,
                );
                libc::_exit(99);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            let mut wstatus = 0;
            let running = libc::waitpid(pid, &mut wstatus, libc::WNOHANG) == 0;
            let killed = libc::kill(pid, libc::SIGKILL);
            assert_eq!(comm, "sleep\n");
            assert!(
                status.contains("\nSigBlk:\t0000000000000000\n"),
                "the program unblocks every signal: {status}"
            );
            assert!(running, "still running");
            let mut status = 0;
            assert_eq!(killed, 0);
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);
        }
    }
}
