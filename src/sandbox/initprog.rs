//! The program the PID namespace's init runs: a 7-instruction static ELF that names itself and
//! waits forever (`pause` in a loop), kept in a sealed memfd and started with `execveat(fd, "",
//! AT_EMPTY_PATH)`.
//!
//! Why not `sleep`: a dynamic program's start (the dynamic loader, its relocations and its CPU
//! feature probe, whose `cpuid` instructions trap to the hypervisor in a VM) cost as much CPU
//! as the command itself (`perf record` of `bench/limits.js`: 23% of the samples of sandboxed
//! creates were `sleep` starting). This program has nothing to load, link or initialise.
//!
//! Why not no `exec` at all: the init is a `CLONE_VM` child of Node's launcher thread; without
//! an `exec` it would keep sharing Node's memory, so `/proc/1/cmdline` inside the namespace
//! would show Node's command line.
//!
//! Only where the machine code is written here (x86_64) and the kernel lets a memfd be
//! executed (`vm.memfd_noexec`); elsewhere, or if the `execveat` fails, the init runs `sleep`
//! as before.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The init's `argv[0]` (its `/proc/<pid>/cmdline`) when it runs this program; its `comm`
/// (what `ps -o comm` shows) is the first 15 bytes.
pub const NAME: &str = "acp-terminal-init";

/// The sealed memfd holding the program (close-on-exec), or `None` where there is none.
pub fn fd() -> Option<RawFd> {
    static FD: OnceLock<Option<OwnedFd>> = OnceLock::new();
    FD.get_or_init(|| create(&elf()?).ok())
        .as_ref()
        .map(|f| f.as_raw_fd())
}

/// Load address of the single segment.
#[cfg(target_arch = "x86_64")]
const BASE: u64 = 0x40_0000;

/// `prctl(PR_SET_NAME, "acp-terminal-init")` (so that `ps` shows that name, truncated to 15
/// bytes, rather than the memfd's), then `1: pause(); jmp 1b`. With no signal handler (the
/// init ignores SIGCHLD and handles nothing), `pause` never returns; SIGKILL ends it.
#[cfg(target_arch = "x86_64")]
const CODE: &[u8] = &[
    0xbf, 0x0f, 0x00, 0x00, 0x00, // mov edi, 15 (PR_SET_NAME)
    0x48, 0x8d, 0x35, 0x10, 0x00, 0x00, 0x00, // lea rsi, [rip + 16] (the name below)
    0xb8, 0x9d, 0x00, 0x00, 0x00, // mov eax, 157 (prctl)
    0x0f, 0x05, // syscall
    0xb8, 0x22, 0x00, 0x00, 0x00, // 1: mov eax, 34 (pause)
    0x0f, 0x05, // syscall
    0xeb, 0xf7, // jmp 1b
    b'a', b'c', b'p', b'-', b't', b'e', b'r', b'm', b'i', b'n', b'a', b'l', b'-', b'i', b'n', b'i',
    b't', 0,
];

/// An ELF64 executable: the header, a `PT_LOAD` of the whole file (read + execute), a
/// `PT_GNU_STACK` (a non-executable stack), then [`CODE`].
#[cfg(target_arch = "x86_64")]
fn elf() -> Option<Vec<u8>> {
    const EHDR: u64 = 64;
    const PHDR: u64 = 56;
    let entry_off = EHDR + 2 * PHDR;
    let len = entry_off + CODE.len() as u64;
    let mut e = Vec::with_capacity(len as usize);
    // e_ident: magic, ELFCLASS64, little-endian, version 1, System V ABI, padding.
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    e.extend_from_slice(&2u16.to_le_bytes()); // e_type: ET_EXEC
    e.extend_from_slice(&62u16.to_le_bytes()); // e_machine: EM_X86_64
    e.extend_from_slice(&1u32.to_le_bytes()); // e_version
    e.extend_from_slice(&(BASE + entry_off).to_le_bytes()); // e_entry
    e.extend_from_slice(&EHDR.to_le_bytes()); // e_phoff
    e.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    e.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    e.extend_from_slice(&(EHDR as u16).to_le_bytes()); // e_ehsize
    e.extend_from_slice(&(PHDR as u16).to_le_bytes()); // e_phentsize
    e.extend_from_slice(&2u16.to_le_bytes()); // e_phnum
    e.extend_from_slice(&[0; 6]); // e_shentsize, e_shnum, e_shstrndx
    let phdr = |e: &mut Vec<u8>, kind: u32, flags: u32, size: u64, align: u64| {
        e.extend_from_slice(&kind.to_le_bytes());
        e.extend_from_slice(&flags.to_le_bytes());
        e.extend_from_slice(&0u64.to_le_bytes()); // p_offset
        let addr = if size > 0 { BASE } else { 0 };
        e.extend_from_slice(&addr.to_le_bytes()); // p_vaddr
        e.extend_from_slice(&addr.to_le_bytes()); // p_paddr
        e.extend_from_slice(&size.to_le_bytes()); // p_filesz
        e.extend_from_slice(&size.to_le_bytes()); // p_memsz
        e.extend_from_slice(&align.to_le_bytes());
    };
    phdr(&mut e, 1, 5, len, 0x1000); // PT_LOAD, R+X
    phdr(&mut e, 0x6474_e551, 6, 0, 16); // PT_GNU_STACK, R+W
    e.extend_from_slice(CODE);
    debug_assert_eq!(e.len() as u64, len);
    Some(e)
}

/// No machine code for this architecture: the init runs `sleep`.
#[cfg(not(target_arch = "x86_64"))]
fn elf() -> Option<Vec<u8>> {
    None
}

/// A memfd with `bytes`, sealed against every change.
fn create(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    const MFD_EXEC: libc::c_uint = 0x10;
    let name = c"acp-terminal-init";
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: a NUL-terminated name; MFD_EXEC (Linux 6.3+) asks for an executable memfd where
    // `vm.memfd_noexec` would otherwise seal it non-executable; older kernels refuse the flag.
    let mut raw = unsafe { libc::memfd_create(name.as_ptr(), flags | MFD_EXEC) };
    if raw < 0 {
        // SAFETY: as above.
        raw = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    }
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just created and own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: writing from a valid buffer to our descriptor; the seals then forbid changes.
    unsafe {
        if libc::write(raw, bytes.as_ptr() as *const libc::c_void, bytes.len())
            != bytes.len() as isize
            || libc::fchmod(raw, 0o500) != 0
            || libc::fcntl(
                raw,
                libc::F_ADD_SEALS,
                libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(fd)
}
