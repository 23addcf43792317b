//! Windows: anonymous pipes (`CreatePipe`), not inheritable (the launcher makes the child's
//! end inheritable for its one launch), and the NUL device for a stdin at EOF.

use std::io;
use std::os::windows::io::{FromRawHandle, OwnedHandle};

use super::ReadOutcome;

use windows_sys::Win32::Foundation::{GENERIC_READ, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::Pipes::CreatePipe;

/// A pipe `(read end, write end)`, neither inheritable, with a 64 KiB buffer.
pub fn pipe() -> io::Result<(OwnedHandle, OwnedHandle)> {
    let mut read = std::ptr::null_mut();
    let mut write = std::ptr::null_mut();
    // SAFETY: both out-pointers are valid; null attributes: not inheritable.
    if unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 64 * 1024) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CreatePipe succeeded: two valid handles, now owned.
    Ok(unsafe {
        (
            OwnedHandle::from_raw_handle(read),
            OwnedHandle::from_raw_handle(write),
        )
    })
}

/// The NUL device opened for reading: a stdin that is at EOF at once.
pub fn null_input() -> io::Result<OwnedHandle> {
    let name: Vec<u16> = "NUL\0".encode_utf16().collect();
    // SAFETY: a NUL-terminated name; null security attributes and template.
    let h = unsafe {
        CreateFileW(
            name.as_ptr(),
            GENERIC_READ,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle we own.
    Ok(unsafe { OwnedHandle::from_raw_handle(h) })
}

/// The read end of a pipe (or a pseudo console's output) served by a thread of its own:
/// Windows' anonymous pipes have no readiness to wait on, so a thread blocks in `ReadFile`
/// and hands each chunk to async code through a bounded channel. When the consumer falls
/// behind, the thread waits for room, the pipe fills and the writer blocks: no byte is dropped
/// and at most `depth` chunks are held. The thread ends at end of file (every writer closed)
/// or when the receiver is dropped.
#[derive(Debug)]
pub struct PipeReader {
    rx: tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
}

impl PipeReader {
    /// Starts reading `handle` in chunks of at most `chunk` bytes, `depth` chunks ahead.
    pub fn spawn(handle: OwnedHandle, chunk: usize, depth: usize) -> io::Result<PipeReader> {
        let (tx, rx) = tokio::sync::mpsc::channel(depth.max(1));
        std::thread::Builder::new()
            .name("acp-terminal-pipe-reader".into())
            .spawn(move || {
                use std::io::Read;
                let mut file = std::fs::File::from(handle);
                loop {
                    let mut buf = vec![0u8; chunk.max(1)];
                    // std reads a pipe whose writers are gone (ERROR_BROKEN_PIPE) as 0 bytes.
                    match file.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => {
                            buf.truncate(n);
                            if tx.blocking_send(Ok(buf)).is_err() {
                                return;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = tx.blocking_send(Err(e));
                            return;
                        }
                    }
                }
            })?;
        Ok(PipeReader { rx })
    }

    /// The next chunk, in order; `None` at end of file.
    pub async fn next(&mut self) -> Option<io::Result<Vec<u8>>> {
        self.rx.recv().await
    }
}

/// The write end of a pipe (a command's stdin, or a pseudo console's input) served by a thread
/// of its own: writes are queued (bounded: a full queue makes [`PipeWriter::write`] wait, as
/// a full pipe would) and written in order by a thread blocked in `WriteFile`. Dropping the
/// writer closes the pipe once everything queued was written: the command then reads EOF.
#[derive(Debug)]
pub struct PipeWriter {
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
    result: tokio::sync::watch::Receiver<Option<io::ErrorKind>>,
}

impl PipeWriter {
    /// Starts writing to `handle`, with room for `depth` queued writes.
    pub fn spawn(handle: OwnedHandle, depth: usize) -> io::Result<PipeWriter> {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(depth.max(1));
        let (failed, result) = tokio::sync::watch::channel(None);
        std::thread::Builder::new()
            .name("acp-terminal-pipe-writer".into())
            .spawn(move || {
                use std::io::Write;
                let mut file = std::fs::File::from(handle);
                while let Some(bytes) = rx.blocking_recv() {
                    if let Err(e) = file.write_all(&bytes) {
                        // The reader is gone (ERROR_NO_DATA / broken pipe): later writes fail.
                        let _ = failed.send(Some(e.kind()));
                        return;
                    }
                }
            })?;
        Ok(PipeWriter { tx, result })
    }

    /// Queues `bytes`; fails once the command stopped reading (its end closed) or a write failed.
    /// (The core writes through [`InputWriter`]; the tests drive the writer directly.)
    #[cfg(test)]
    pub async fn write(&self, bytes: Vec<u8>) -> io::Result<()> {
        if let Some(kind) = *self.result.borrow() {
            return Err(io::Error::from(kind));
        }
        self.tx
            .send(bytes)
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

/// Chunk size and queue depth of an [`OutputReader`]'s thread: 64 KiB reads (a pipe's
/// buffer), 16 ahead.
const OUTPUT_CHUNK: usize = 64 * 1024;
const OUTPUT_DEPTH: usize = 16;

/// A command's output (a pipe's read end or a pseudo console's output), read by a
/// [`PipeReader`]'s thread: the same interface as the Unix reader, chunks instead of reads.
#[derive(Debug)]
pub struct OutputReader {
    reader: PipeReader,
}

impl OutputReader {
    /// Starts the reading thread on `handle`.
    pub fn new(handle: OwnedHandle) -> io::Result<OutputReader> {
        Ok(OutputReader {
            reader: PipeReader::spawn(handle, OUTPUT_CHUNK, OUTPUT_DEPTH)?,
        })
    }

    /// Waits for the next chunk, then takes up to `max_reads` chunks in all (those already
    /// queued), handing each to `sink`; stops early (`More`) when `sink` answers false.
    /// Cancel-safe: a chunk is taken only when it is handed over.
    pub async fn read(
        &mut self,
        max_reads: usize,
        mut sink: impl FnMut(&[u8]) -> bool,
    ) -> ReadOutcome {
        match self.reader.next().await {
            Some(Ok(chunk)) => {
                if !sink(&chunk) {
                    return ReadOutcome::More;
                }
                self.read_now(max_reads.saturating_sub(1), sink)
            }
            // A read error ends the output, as on Unix.
            Some(Err(_)) | None => ReadOutcome::Eof,
        }
    }

    /// Bytes known to wait unread: 0 here (what the reading thread has in flight arrives
    /// before the end of file, which the pump waits for, as for [`OutputReader::read_now`]).
    pub fn queued(&self) -> usize {
        0
    }

    /// Takes up to `max_reads` chunks already queued, without waiting. Unlike a Unix pipe,
    /// what the command wrote just before its exit may still be on its way from the reading
    /// thread; it arrives before the end of file, which the pump waits for (or its drain time).
    /// Stops early (`More`) when `sink` answers false.
    pub fn read_now(
        &mut self,
        max_reads: usize,
        mut sink: impl FnMut(&[u8]) -> bool,
    ) -> ReadOutcome {
        use tokio::sync::mpsc::error::TryRecvError;
        for _ in 0..max_reads {
            match self.reader.rx.try_recv() {
                Ok(Ok(chunk)) => {
                    if !sink(&chunk) {
                        return ReadOutcome::More;
                    }
                }
                Ok(Err(_)) | Err(TryRecvError::Disconnected) => return ReadOutcome::Eof,
                Err(TryRecvError::Empty) => return ReadOutcome::Drained,
            }
        }
        ReadOutcome::More
    }
}

/// Queued writes an [`InputWriter`]'s thread holds before `try_write` answers `WouldBlock`.
const INPUT_DEPTH: usize = 16;

/// A command's input (a pipe's write end or a pseudo console's input), written by a
/// [`PipeWriter`]'s thread: the same interface as the Unix writer, where "taken" means queued
/// for the thread and "writable" means the queue has room.
#[derive(Debug)]
pub struct InputWriter {
    writer: PipeWriter,
}

impl InputWriter {
    /// Starts the writing thread on `handle`.
    pub fn new(handle: OwnedHandle) -> io::Result<InputWriter> {
        Ok(InputWriter {
            writer: PipeWriter::spawn(handle, INPUT_DEPTH)?,
        })
    }

    /// Queues all of `data` when there is room (`WouldBlock` when the queue is full); fails
    /// with `BrokenPipe` once the command stopped reading.
    pub fn try_write(&self, data: &[u8]) -> io::Result<usize> {
        use tokio::sync::mpsc::error::TrySendError;
        // A gone reader is reported with its Windows code (`EPIPE`), as a Unix write's errno.
        let gone = |kind: io::ErrorKind| {
            if kind == io::ErrorKind::BrokenPipe {
                gone_reader_error()
            } else {
                io::Error::from(kind)
            }
        };
        if let Some(kind) = *self.writer.result.borrow() {
            return Err(gone(kind));
        }
        match self.writer.tx.try_send(data.to_vec()) {
            Ok(()) => Ok(data.len()),
            Err(TrySendError::Full(_)) => Err(io::ErrorKind::WouldBlock.into()),
            Err(TrySendError::Closed(_)) => Err(gone_reader_error()),
        }
    }

    /// Resolves once the queue has room again.
    pub async fn writable(&self) -> io::Result<()> {
        self.writer
            .tx
            .reserve()
            .await
            .map(drop)
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

/// Whether a failed write means nothing reads the input any more (the pipe's read end is
/// closed: `ERROR_NO_DATA` / `ERROR_BROKEN_PIPE`, both `BrokenPipe` in std).
pub fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// The error a write gets once nothing reads the other end: `ERROR_NO_DATA` ("the pipe is
/// being closed"), whose `code` is `EPIPE` as in Node.
pub fn gone_reader_error() -> io::Error {
    io::Error::from_raw_os_error(windows_sys::Win32::Foundation::ERROR_NO_DATA as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_reader_hands_over_every_byte_then_end_of_file() {
        let (read, write) = pipe().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::File::from(write);
            let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
            w.write_all(&sent).unwrap();
            sent
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = rt.block_on(async {
            let mut reader = OutputReader::new(read).unwrap();
            let mut got = Vec::new();
            loop {
                match reader
                    .read(4, |b| {
                        got.extend_from_slice(b);
                        true
                    })
                    .await
                {
                    ReadOutcome::Eof => break,
                    ReadOutcome::Drained | ReadOutcome::More => {}
                }
            }
            // After the end of file, reading without waiting answers it again.
            assert_eq!(
                reader.read_now(4, |_| panic!("no more bytes")),
                ReadOutcome::Eof
            );
            got
        });
        assert!(got == writer.join().unwrap(), "the bytes differ");
    }

    #[test]
    fn every_byte_arrives_in_order_through_a_slow_reader() {
        let (read, write) = pipe().unwrap();
        // 4 MiB in uneven writes, while the reader holds at most 2 chunks of 4 KiB.
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::File::from(write);
            let mut sent = Vec::new();
            let mut i = 0u32;
            while sent.len() < 4 << 20 {
                let block: Vec<u8> = (0..(i % 9000 + 1)).map(|j| (i + j) as u8).collect();
                w.write_all(&block).unwrap();
                sent.extend_from_slice(&block);
                i += 1;
            }
            sent
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let got = rt.block_on(async {
            let mut reader = PipeReader::spawn(read, 4096, 2).unwrap();
            let mut got = Vec::new();
            let mut chunks = 0u32;
            while let Some(chunk) = reader.next().await {
                got.extend_from_slice(&chunk.unwrap());
                chunks += 1;
                if chunks.is_multiple_of(64) {
                    // Fall behind now and then: the writer must wait, not lose bytes.
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
            got
        });
        let sent = writer.join().unwrap();
        assert_eq!(got.len(), sent.len());
        assert!(got == sent, "the bytes differ");
    }

    #[test]
    fn queued_writes_arrive_in_order_then_end_of_file() {
        let (read, write) = pipe().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let reader = std::thread::spawn(move || {
            use std::io::Read;
            let mut all = Vec::new();
            std::fs::File::from(read).read_to_end(&mut all).unwrap();
            all
        });
        let mut sent = Vec::new();
        rt.block_on(async {
            let writer = PipeWriter::spawn(write, 2).unwrap();
            for i in 0..2000u32 {
                let block: Vec<u8> = (0..(i % 3000 + 1)).map(|j| (i ^ j) as u8).collect();
                sent.extend_from_slice(&block);
                writer.write(block).await.unwrap();
            }
            // Dropped: the thread writes what is queued, then closes the pipe.
        });
        assert!(reader.join().unwrap() == sent, "the bytes differ");
    }

    #[test]
    fn the_input_writer_queues_in_order_and_reports_a_gone_reader() {
        let (read, write) = pipe().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        // The reader starts only once the writer was told to wait: 100,000 bytes are more than
        // the pipe's 64 KiB plus the queue's 16 writes of 1,000, so that is bound to happen.
        let (start, started) = std::sync::mpsc::channel::<()>();
        let reader = std::thread::spawn(move || {
            use std::io::Read;
            started.recv().unwrap();
            let mut got = vec![0u8; 100_000];
            std::fs::File::from(read).read_exact(&mut got).unwrap();
            got
        });
        let sent: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        rt.block_on(async {
            let w = InputWriter::new(write).unwrap();
            let mut blocked = 0;
            for chunk in sent.chunks(1000) {
                loop {
                    match w.try_write(chunk) {
                        Ok(n) => {
                            assert_eq!(n, chunk.len());
                            break;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            blocked += 1;
                            let _ = start.send(());
                            w.writable().await.unwrap();
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            assert!(
                blocked > 0,
                "a full pipe and queue never made the writer wait"
            );
            // The reader took its 100,000 bytes and closed its end: writes fail, as gone.
            assert!(reader.join().unwrap() == sent, "the bytes differ");
            let mut gone = None;
            for _ in 0..100 {
                match w.try_write(b"x") {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => w.writable().await.unwrap(),
                    Err(e) => {
                        gone = Some(e);
                        break;
                    }
                    Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                }
            }
            assert!(reader_gone(&gone.expect("writes kept succeeding")));
        });
    }

    #[test]
    fn writing_after_the_reader_closed_fails() {
        let (read, write) = pipe().unwrap();
        drop(read);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let writer = PipeWriter::spawn(write, 1).unwrap();
            let mut failed = false;
            for _ in 0..100 {
                if writer.write(vec![b'x'; 4096]).await.is_err() {
                    failed = true;
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert!(failed, "writes to a pipe nobody reads kept succeeding");
        });
    }
}
