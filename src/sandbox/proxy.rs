//! The way out of a sandbox's network namespace under `network: { allow, deny }`: a TCP
//! listener on [`super::PROXY_ADDR`] that lives in the namespace and is served by the host.
//!
//! The launch's intermediate process C, already in the new network namespace with its loopback
//! up, creates the listener ([`listen_and_send`], system calls only) and sends it over a
//! socketpair ([`Channel`], made in the parent) with `SCM_RIGHTS`, then closes its own copy: no
//! process in the namespace ever holds it, and nothing runs in the namespace before it exists
//! (a failure fails the launch). The parent receives it once the launch returned
//! ([`Channel::receive`]); the TypeScript layer takes it from the terminal's handle and accepts
//! connections on it from the host's namespace, where the proxy connects out (to allowed hosts
//! only). There is no bridge process inside and no file in the sandbox's tree.
//!
//! Invariants: the listener's descriptors are close-on-exec everywhere (`SOCK_CLOEXEC`,
//! `MSG_CMSG_CLOEXEC`); one message per launch; the parent's end is the only other copy.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The socketpair a launch passes the listener over (parent's end, C's end).
#[derive(Debug)]
pub struct Channel {
    parent: OwnedFd,
    child: OwnedFd,
}

impl Channel {
    /// A close-on-exec `SOCK_SEQPACKET` pair (one message, one descriptor).
    pub fn new() -> std::io::Result<Channel> {
        let mut fds = [-1; 2];
        // SAFETY: socketpair writes two descriptors on success, which are owned at once.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nobody else.
        Ok(unsafe {
            Channel {
                parent: OwnedFd::from_raw_fd(fds[0]),
                child: OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }

    /// C's end (valid while the channel lives).
    pub fn child_fd(&self) -> RawFd {
        self.child.as_raw_fd()
    }

    /// The listener C sent (after the launch returned: the message is already queued).
    pub fn receive(&self) -> std::io::Result<OwnedFd> {
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: &mut byte as *mut u8 as *mut libc::c_void,
            iov_len: 1,
        };
        let mut control = [0u64; 8];
        // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: the buffers outlive the call; the received descriptor is owned below.
        let n = unsafe {
            libc::recvmsg(
                self.parent.as_raw_fd(),
                &mut msg,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: CMSG_FIRSTHDR/CMSG_DATA walk the control buffer recvmsg filled, within
        // `msg_controllen`.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
                || (*cmsg).cmsg_len < libc::CMSG_LEN(4) as _
            {
                return Err(std::io::Error::other("no listener was passed"));
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const RawFd);
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }
}

/// In C, inside the new network namespace: a TCP listener on [`super::PROXY_ADDR`], sent over
/// `sock` and closed here. Raw system calls only; fails with the errno.
///
/// # Safety
/// Call only in C (a vfork child), with `sock` C's end of a [`Channel`].
pub unsafe fn listen_and_send(sock: RawFd) -> Result<(), i32> {
    let errno = crate::sys::spawn::errno;
    let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
    if l < 0 {
        return Err(errno());
    }
    let ([a, b, c, d], port) = super::PROXY_ADDR;
    let mut addr: libc::sockaddr_in = std::mem::zeroed();
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_port = port.to_be();
    addr.sin_addr.s_addr = u32::from_ne_bytes([a, b, c, d]);
    let r = if libc::bind(
        l,
        &addr as *const libc::sockaddr_in as *const libc::sockaddr,
        std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
    ) != 0
        || libc::listen(l, 511) != 0
    {
        Err(errno())
    } else {
        send_fd(sock, l)
    };
    libc::close(l);
    r
}

/// Sends `fd` over `sock` with `SCM_RIGHTS` (one byte of data). Raw system calls only.
unsafe fn send_fd(sock: RawFd, fd: RawFd) -> Result<(), i32> {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: &mut byte as *mut u8 as *mut libc::c_void,
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = libc::CMSG_SPACE(4) as _;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
    if libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) != 1 {
        return Err(crate::sys::spawn::errno());
    }
    Ok(())
}
