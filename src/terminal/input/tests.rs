use super::*;
use std::sync::Arc;

/// A descriptor that takes at most `room` bytes until it is "drained" by `writable()`, and
/// records every write call.
struct FakeFd {
    /// Bytes accepted so far, in order.
    written: Mutex<Vec<u8>>,
    /// Length of every write call.
    calls: Mutex<Vec<usize>>,
    /// Bytes it takes before answering EAGAIN.
    room: Mutex<usize>,
    /// Refilled to this by `writable()`; 0: `writable()` never resolves.
    refill: usize,
    eagains: Mutex<usize>,
    /// Every write fails with this (a raw OS error).
    fail: Option<i32>,
}

impl FakeFd {
    fn new(refill: usize) -> Arc<Self> {
        Arc::new(Self {
            written: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            room: Mutex::new(refill),
            refill,
            eagains: Mutex::new(0),
            fail: None,
        })
    }
}

impl InputFd for Arc<FakeFd> {
    fn write(&self, data: &[u8]) -> io::Result<usize> {
        self.calls.lock().unwrap().push(data.len());
        if let Some(e) = self.fail {
            return Err(io::Error::from_raw_os_error(e));
        }
        let mut room = self.room.lock().unwrap();
        if *room == 0 {
            *self.eagains.lock().unwrap() += 1;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = data.len().min(*room);
        *room -= n;
        self.written.lock().unwrap().extend_from_slice(&data[..n]);
        Ok(n)
    }

    async fn writable(&self) -> std::io::Result<()> {
        if self.refill == 0 {
            std::future::pending::<()>().await;
        }
        *self.room.lock().unwrap() = self.refill;
        Ok(())
    }
}

fn input(fd: Arc<FakeFd>, is_pty: bool) -> (Input, watch::Sender<Option<ExitStatus>>) {
    let (exit_tx, exit_rx) = watch::channel(None);
    (
        Input::start(Some(fd), is_pty, exit_rx, "t1".into()),
        exit_tx,
    )
}

async fn write(i: &Input, data: &[u8]) -> Result<(), TermError> {
    let rx = i.enqueue(data.to_vec(), true, false)?;
    rx.unwrap().await.unwrap()
}

#[tokio::test]
async fn writes_keep_call_order_across_eagain_in_paced_chunks() {
    let fd = FakeFd::new(10_000);
    let (i, _exit) = input(fd.clone(), false);
    let big: Vec<u8> = (0..300_000u32).map(|n| (n % 251) as u8).collect();
    // Both queued before either is performed.
    let a = i.enqueue(big.clone(), true, false).unwrap().unwrap();
    let b = i.enqueue(b"tail".to_vec(), true, false).unwrap().unwrap();
    assert!(a.await.unwrap().is_ok());
    assert!(b.await.unwrap().is_ok());
    let mut expected = big;
    expected.extend_from_slice(b"tail");
    assert_eq!(
        *fd.written.lock().unwrap(),
        expected,
        "every byte, in order"
    );
    assert!(fd.calls.lock().unwrap().iter().all(|&n| n <= WRITE_CHUNK));
    assert!(
        *fd.eagains.lock().unwrap() >= 29,
        "waited for writability on EAGAIN"
    );
}

#[tokio::test]
async fn a_write_blocked_when_the_exit_is_published_fails_as_exited() {
    let fd = FakeFd::new(0);
    let (i, exit) = input(fd.clone(), false);
    let pending = i
        .enqueue(b"never read".to_vec(), true, false)
        .unwrap()
        .unwrap();
    tokio::task::yield_now().await;
    exit.send_replace(Some(ExitStatus::code(0)));
    let e = pending.await.unwrap().unwrap_err();
    assert_eq!(e.code, super::super::ERR_TERMINAL_EXITED);
    // Once exited, nothing more is queued.
    assert_eq!(
        i.enqueue(b"x".to_vec(), true, true).unwrap_err().code,
        super::super::ERR_TERMINAL_EXITED
    );
}

#[tokio::test(start_paused = true)]
async fn a_gone_reader_without_an_exit_is_epipe() {
    let fd = Arc::new(FakeFd {
        fail: crate::sys::pipe::gone_reader_error().raw_os_error(),
        ..Arc::try_unwrap(FakeFd::new(1)).ok().unwrap()
    });
    let (i, _exit) = input(fd, false);
    let e = write(&i, b"x").await.unwrap_err();
    assert_eq!(e.code, "EPIPE");
    assert!(e.message.contains("nothing reads"), "{}", e.message);
}

#[tokio::test]
async fn close_on_a_pipe_ends_input_after_the_queued_writes() {
    let fd = FakeFd::new(1 << 20);
    let (i, _exit) = input(fd.clone(), false);
    let w = i.enqueue(b"last".to_vec(), true, false).unwrap().unwrap();
    i.close(false).unwrap().await.unwrap();
    assert!(w.await.unwrap().is_ok());
    assert_eq!(*fd.written.lock().unwrap(), b"last");
    assert_eq!(
        i.enqueue(b"x".to_vec(), true, false).unwrap_err().code,
        ERR_STDIN_CLOSED
    );
    // Closing again is a no-op.
    i.close(false).unwrap().await.unwrap();
    i.shut().await;
}

#[tokio::test]
async fn close_on_a_pty_sends_veof_and_stays_open() {
    let fd = FakeFd::new(1 << 20);
    let (i, _exit) = input(fd.clone(), true);
    i.close(false).unwrap().await.unwrap();
    write(&i, b"more").await.unwrap();
    assert_eq!(*fd.written.lock().unwrap(), b"\x04more");
}

#[tokio::test]
async fn without_input_every_call_is_no_stdin() {
    let (_tx, rx) = watch::channel(None);
    let i = Input::start(None::<Arc<FakeFd>>, false, rx, "t2".into());
    assert_eq!(
        i.enqueue(b"x".to_vec(), true, false).unwrap_err().code,
        ERR_NO_STDIN
    );
    assert_eq!(i.close(false).err().unwrap().code, ERR_NO_STDIN);
    // An empty write resolves at once without queueing anything.
    let fd = FakeFd::new(1);
    let (i, _exit) = input(fd.clone(), false);
    assert!(i.enqueue(Vec::new(), true, false).unwrap().is_none());
    assert!(fd.calls.lock().unwrap().is_empty());
}
