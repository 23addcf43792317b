//! Unix: a unix socket in a fresh 0700 directory under the temporary directory.

use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::{BoxRead, BoxWrite};

/// A bound reattach socket; dropping it removes the socket and its directory.
pub struct Listener {
    dir: PathBuf,
    path: PathBuf,
    inner: tokio::net::UnixListener,
}

/// 32 random bytes from the kernel, as hex.
pub fn random_token() -> std::io::Result<String> {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl Listener {
    /// Binds a socket in a new directory (mode 0700, created here: never one planted before).
    pub fn bind() -> std::io::Result<Self> {
        let base = std::env::temp_dir();
        let mut tries = 0;
        let dir = loop {
            let name = format!("acp-terminal-server-{}", &random_token()?[..16]);
            let dir = base.join(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
                Err(e) => return Err(e),
            }
        };
        let path = dir.join("s");
        match tokio::net::UnixListener::bind(&path) {
            Ok(inner) => Ok(Self { dir, path, inner }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The socket's path (what `--attach` takes).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next connection, split.
    pub async fn accept(&self) -> std::io::Result<(BoxRead, BoxWrite)> {
        let (s, _) = self.inner.accept().await?;
        let (r, w) = s.into_split();
        Ok((Box::new(r), Box::new(w)))
    }
}

impl Listener {
    /// Removes the socket and its directory (new connections are refused from now on).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.remove();
    }
}

/// `--attach PATH`: splices stdin and stdout to the server listening at `path` until either
/// side ends; returns the process's exit code. When no server listens there, it prints
/// `gone` (a line the client recognizes: the server is gone, retrying is vain) and returns 3.
pub fn attach(path: &Path, gone: &str) -> i32 {
    let sock = match std::os::unix::net::UnixStream::connect(path) {
        Ok(s) => s,
        Err(e) => {
            let mut out = std::io::stdout();
            let _ = out.write_all(gone.as_bytes());
            let _ = out.flush();
            eprintln!(
                "acp-terminal-server: no live server at {}: {e}",
                path.display()
            );
            return 3;
        }
    };
    let Ok(mut from_server) = sock.try_clone() else {
        return 1;
    };
    // Server -> stdout on its own thread; stdin -> server here. Either end finishing ends the
    // process (and so the socket): the server then sees its link gone and waits for the next.
    std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match from_server.read(&mut buf) {
                Ok(0) | Err(_) => std::process::exit(0),
                Ok(n) => {
                    if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                        std::process::exit(0);
                    }
                }
            }
        }
    });
    let mut to_server = sock;
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_server);
    0
}

/// Marks every descriptor above stderr close-on-exec: what the transport or the launcher left
/// open in the server (the launcher's descriptor of the server file itself) never reaches a
/// command the server starts.
pub fn close_inherited_on_exec() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: F_GETFD/F_SETFD on a descriptor number only change its close-on-exec flag; a
        // number that is not open (the directory's own, closed by now) fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}
