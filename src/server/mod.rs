//! `acp-terminal-server`: the core behind a framed, versioned protocol on a byte stream
//! (stdin/stdout of the server process, reached through `podman exec -i`, `ssh`, `kubectl exec
//! -i`, ...), so terminals run where Node does not.
//!
//! One [`serve`] call is one connection: it prints the banner, then reads frames
//! ([`frame`]) and answers each JSON request `{id, op, ...}` with `{id, result}` or
//! `{id, error: {code, message}}`; events are `{event: "exit", term, status}` and
//! `{event: "end", sub}`, and output arrives in output frames per subscription.
//!
//! Invariants:
//! - The session owns its terminals. When its link ends (input EOF, output failure) after the
//!   client said `shutdown`, or when the client asked for no grace (the default), every terminal
//!   is released (TERM -> grace -> KILL through the core's containment) before [`serve`]
//!   returns; the guardian covers a server that is killed outright.
//! - Reattach: a client that said `hello {graceMs}` gets a socket path and a random token. When
//!   its link is lost the session detaches and keeps its terminals for `graceMs`, queueing what
//!   it would have sent; a new link (`acp-terminal-server --attach PATH`) that presents the token
//!   in `resume {token, offset}` continues it: the server resends what it wrote from
//!   the client's byte `offset` (from a replay ring of the last `replayBytes` written, so nothing
//!   is lost or sent twice) and says how many client frames it read (the client resends the
//!   rest). A client behind the ring (the dead link swallowed more than it keeps) is refused
//!   (`ERR_REPLAY_LOST`) and the session ends. After the grace without a resume, the session
//!   ends as above.
//! - Output is bounded per subscription ([`HIGH_WATER_MARK`]): a reader that falls behind loses
//!   the oldest bytes (counted in the next output frame), never the server's memory; the
//!   retained output (`output`) is never affected.
//! - A response or event goes out after every output byte pushed before it (sent, or counted as
//!   dropped): an `exit` never overtakes the output written before the exit.
//! - A sandboxed command never gets the server's own file, nor a directory above it, among its
//!   writable roots ([`own_file`]): the next connection's server cannot be its program.
//! - A bad frame or request is answered with a coded error and the connection goes on.
//! - Requests are taken in order: whatever a request does synchronously (queueing a write,
//!   subscribing, marking a release) happens before the next request is read.

mod frame;
mod inspect;
mod lookup;
mod own_file;
mod request;
// The server's tests run sh lines: Unix-only, like the core's own process tests (the server is
// built for Linux far ends).
#[cfg(all(test, unix))]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Notify};

pub use crate::sys::attach::close_inherited_on_exec;
pub use frame::{banner, BANNER_PREFIX, MAX_FRAME, PROTOCOL};
use frame::{json_frame, push_output_frame, read_frame, Frame, FrameError};

use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::pending::{Pending, HIGH_WATER_MARK};
use crate::sys::attach::{BoxRead, BoxWrite, Listener};
use crate::sys::pty::PtySize;
use crate::terminal::{OutputSink, SharedSink, Terminal};

/// A frame that is not a usable request (bad JSON, no `id`/`op`, unknown kind, too short).
pub const ERR_BAD_FRAME: &str = "ERR_BAD_FRAME";
/// A frame longer than [`MAX_FRAME`] (its bytes are skipped).
pub const ERR_FRAME_TOO_LARGE: &str = "ERR_FRAME_TOO_LARGE";
/// A request whose `op` the server does not know.
pub const ERR_UNKNOWN_OP: &str = "ERR_UNKNOWN_OP";
/// A request naming a terminal or subscription this connection does not have (never created,
/// or released).
pub const ERR_UNKNOWN_TERMINAL: &str = "ERR_UNKNOWN_TERMINAL";
/// A reattach without the session's token (or not starting with `resume`).
pub const ERR_ATTACH_REFUSED: &str = "ERR_ATTACH_REFUSED";
/// A resume from behind the replay ring where answers or events were lost: it cannot continue.
pub const ERR_REPLAY_LOST: &str = "ERR_REPLAY_LOST";
/// The replay ring's default size: what a lost link may have swallowed in flight.
pub const REPLAY_BYTES: usize = 8 << 20;
/// The longest grace a client may ask for (a day).
const MAX_GRACE_MS: u64 = 86_400_000;
/// What `--attach` prints when no server listens at its path (the client stops retrying).
pub const GONE_MARKER: &str = "\x1eACP-TERMINAL-SERVER-GONE\n";

/// What the writer sends next.
enum Item {
    /// A response or event, sent after every output byte pushed before it ([`Outbox::send`]).
    Frame(Vec<u8>, Vec<Mark>),
    /// The pending output of a subscription.
    Output(u32),
    /// A subscription ended: its last output, then `{event: "end"}`.
    End(u32),
}

#[derive(Default)]
struct OutState {
    queue: VecDeque<Item>,
    subs: HashMap<u32, SubOut>,
    /// No more frames: the session is over.
    closed: bool,
    ring: Ring,
}

/// One batch handed to a link's writer, shared with the replay ring (never copied).
struct Entry {
    bytes: Arc<Vec<u8>>,
}

/// The most output bytes one output frame carries: the rest of a subscription's queue waits in
/// its bounded queue, not in copies on the way out.
const OUTPUT_FRAME_BYTES: usize = 1 << 20;

/// The last bytes written to the client, by stream offset (everything after the banner of the
/// first link), kept so a resumed link continues exactly where the client stopped reading.
#[derive(Default)]
struct Ring {
    entries: VecDeque<Entry>,
    bytes: usize,
    /// Bytes kept at most (0: none; the newest batch is kept whole when larger).
    cap: usize,
    /// Stream offset of the first kept byte.
    start: u64,
}

impl Ring {
    fn add(&mut self, e: Entry) {
        self.bytes += e.bytes.len();
        self.entries.push_back(e);
        while self.bytes > self.cap && (self.cap == 0 || self.entries.len() > 1) {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= old.bytes.len();
            self.start += old.bytes.len() as u64;
        }
    }

    /// The bytes to resend to a client that read `offset` bytes; refused when some of what it
    /// missed is no longer kept.
    fn resume(&self, offset: u64) -> Result<Vec<u8>, TermError> {
        let end = self.start + self.bytes as u64;
        if offset > end {
            return Err(TermError::invalid_arg(format!(
                "offset {offset} is past the {end} bytes sent"
            )));
        }
        if offset < self.start {
            return Err(TermError::new(
                ERR_REPLAY_LOST,
                format!(
                    "the link lost {} bytes in flight, more than the {}-byte replay ring keeps",
                    self.start - offset,
                    self.cap
                ),
            ));
        }
        let mut out = Vec::new();
        let mut skip = offset - self.start;
        for e in &self.entries {
            let n = e.bytes.len() as u64;
            if skip >= n {
                skip -= n;
                continue;
            }
            out.extend_from_slice(&e.bytes[skip as usize..]);
            skip = 0;
        }
        Ok(out)
    }
}

struct SubOut {
    pending: Pending,
    /// Bytes ever pushed (those dropped included; see [`SubOut::counted`]).
    pushed: u64,
    /// An `Item::Output` for it is in the queue.
    queued: bool,
}

impl SubOut {
    /// Bytes sent, or counted as dropped in a frame sent: everything pushed that is neither
    /// pending nor dropped since the last frame.
    fn counted(&self) -> u64 {
        self.pushed - self.pending.len() as u64 - self.pending.dropped()
    }
}

/// A frame waits until subscription `sub` has sent (or counted as dropped) its first `upto`
/// bytes.
struct Mark {
    sub: u32,
    upto: u64,
}

/// Frames waiting for the writer: responses and events in order, output per subscription
/// (bounded).
#[derive(Default)]
struct Outbox {
    state: Mutex<OutState>,
    ready: Notify,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, OutState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a response or event. It goes out after every output byte pushed before it (sent, or
    /// counted as dropped): an `exit` never overtakes the output written before the exit, though
    /// each subscription's output otherwise takes its turn behind what is queued.
    fn send(&self, v: Value) {
        let mut s = self.lock();
        if !s.closed {
            let marks = s
                .subs
                .iter()
                .filter(|(_, o)| o.counted() < o.pushed)
                .map(|(&sub, o)| Mark {
                    sub,
                    upto: o.pushed,
                })
                .collect();
            s.queue.push_back(Item::Frame(json_frame(&v), marks));
            drop(s);
            self.ready.notify_one();
        }
    }

    /// Opens a subscription's queue; false if that number is in use.
    fn open_sub(&self, sub: u32) -> bool {
        let mut s = self.lock();
        if s.subs.contains_key(&sub) {
            return false;
        }
        s.subs.insert(
            sub,
            SubOut {
                pending: Pending::new(HIGH_WATER_MARK),
                pushed: 0,
                queued: false,
            },
        );
        true
    }

    fn push(&self, sub: u32, chunk: &[u8]) {
        let mut s = self.lock();
        let s = &mut *s;
        if let Some(o) = s.subs.get_mut(&sub) {
            o.pending.push(chunk);
            o.pushed += chunk.len() as u64;
            if !o.queued {
                o.queued = true;
                s.queue.push_back(Item::Output(sub));
                self.ready.notify_one();
            }
        }
    }

    fn end(&self, sub: u32) {
        let mut s = self.lock();
        if s.subs.contains_key(&sub) {
            s.queue.push_back(Item::End(sub));
            drop(s);
            self.ready.notify_one();
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }

    fn set_ring(&self, cap: usize) {
        self.lock().ring.cap = cap;
    }

    /// The next bytes to write, up to about `max`; `None` when closed and empty.
    async fn next_batch(&self, max: usize) -> Option<Arc<Vec<u8>>> {
        loop {
            {
                let mut s = self.lock();
                let s = &mut *s;
                let mut bytes = Vec::new();
                while bytes.len() < max {
                    let Some(item) = s.queue.pop_front() else {
                        break;
                    };
                    match item {
                        Item::Frame(f, marks) => {
                            for m in marks {
                                let Some(o) = s.subs.get_mut(&m.sub) else {
                                    continue;
                                };
                                // What was pushed before the frame and is neither sent nor
                                // counted as dropped yet goes first (drops before data).
                                loop {
                                    let need = m.upto.saturating_sub(o.counted());
                                    if need == 0 {
                                        break;
                                    }
                                    let data = need.saturating_sub(o.pending.dropped());
                                    let n = data.min(OUTPUT_FRAME_BYTES as u64) as usize;
                                    match o.pending.take_up_to(n) {
                                        Some((data, dropped))
                                            if !data.is_empty() || dropped > 0 =>
                                        {
                                            push_output_frame(&mut bytes, m.sub, dropped, &data)
                                        }
                                        _ => break,
                                    }
                                }
                            }
                            bytes.extend_from_slice(&f);
                        }
                        Item::Output(sub) => {
                            if let Some(o) = s.subs.get_mut(&sub) {
                                o.queued = false;
                                if let Some((data, dropped)) =
                                    o.pending.take_up_to(OUTPUT_FRAME_BYTES)
                                {
                                    push_output_frame(&mut bytes, sub, dropped, &data);
                                }
                                // The rest goes after what is queued meanwhile (in turn with
                                // the other subscriptions).
                                if !o.pending.is_empty() {
                                    o.queued = true;
                                    s.queue.push_back(Item::Output(sub));
                                }
                            }
                        }
                        Item::End(sub) => {
                            if let Some(mut o) = s.subs.remove(&sub) {
                                while let Some((data, dropped)) =
                                    o.pending.take_up_to(OUTPUT_FRAME_BYTES)
                                {
                                    push_output_frame(&mut bytes, sub, dropped, &data);
                                }
                            }
                            bytes.extend_from_slice(&json_frame(
                                &json!({"event": "end", "sub": sub}),
                            ));
                        }
                    }
                }
                if !bytes.is_empty() {
                    let bytes = Arc::new(bytes);
                    s.ring.add(Entry {
                        bytes: bytes.clone(),
                    });
                    return Some(bytes);
                }
                if s.closed {
                    return None;
                }
            }
            self.ready.notified().await;
        }
    }
}

/// A subscription's sink: output goes to the outbox, bounded there.
struct ConnSink {
    sub: u32,
    outbox: Arc<Outbox>,
}

impl OutputSink for ConnSink {
    fn push(&self, chunk: &[u8]) {
        self.outbox.push(self.sub, chunk);
    }
    fn close(&self) {
        self.outbox.end(self.sub);
    }
}

type Reply = Pin<Box<dyn Future<Output = Result<Value, TermError>> + Send>>;

/// A link that asked to continue the session: its stream and its `resume` request.
struct Attached {
    read: BoxRead,
    write: BoxWrite,
    id: Value,
    req: Map<String, Value>,
}

/// The reattach point, once a client asked for a grace.
struct Reattach {
    listener: Arc<Listener>,
    token: String,
    grace: std::time::Duration,
}

/// One session: its terminals and subscriptions, over one link at a time.
struct Conn {
    outbox: Arc<Outbox>,
    terms: Mutex<HashMap<u32, Arc<Terminal>>>,
    /// Subscription -> (terminal, the core's subscriber key).
    subs: Mutex<HashMap<u32, (u32, u64)>>,
    next: AtomicU32,
    reattach: Mutex<Option<Reattach>>,
    /// Links that presented the token, for the serving loop.
    attached: mpsc::UnboundedSender<Attached>,
    /// The client said `shutdown`: the end of this link ends the session.
    closing: std::sync::atomic::AtomicBool,
    /// The server's own file and the directories above it (no sandbox may write there).
    own: own_file::OwnFile,
}

fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn status_json(s: &ExitStatus) -> Value {
    json!({"exitCode": s.exit_code, "signal": s.signal})
}

fn error_json(e: &TermError) -> Value {
    let details: Map<String, Value> = e
        .details
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
        .collect();
    json!({"code": e.code, "message": e.message, "details": details})
}

fn reply_json(id: &Value, r: Result<Value, TermError>) -> Value {
    match r {
        Ok(result) => json!({"id": id, "result": result}),
        Err(e) => json!({"id": id, "error": error_json(&e)}),
    }
}

fn now(v: Value) -> Result<Reply, TermError> {
    Ok(Box::pin(async move { Ok(v) }))
}

fn u32_field(req: &Map<String, Value>, key: &str) -> Result<u32, TermError> {
    req.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| TermError::invalid_arg(format!("{key} must be a terminal number")))
}

impl Conn {
    fn new(attached: mpsc::UnboundedSender<Attached>) -> Arc<Self> {
        Arc::new(Self {
            outbox: Arc::new(Outbox::default()),
            terms: Mutex::default(),
            subs: Mutex::default(),
            next: AtomicU32::new(1),
            reattach: Mutex::default(),
            attached,
            closing: Default::default(),
            own: own_file::OwnFile::resolve(),
        })
    }

    fn reattach(&self) -> MutexGuard<'_, Option<Reattach>> {
        self.reattach.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The grace a lost link gets (zero: none asked).
    fn grace(&self) -> std::time::Duration {
        if self.closing.load(Ordering::Relaxed) {
            return std::time::Duration::ZERO;
        }
        self.reattach()
            .as_ref()
            .map_or(std::time::Duration::ZERO, |r| r.grace)
    }

    /// `hello {graceMs?, replayBytes?}`: with a grace, binds the reattach socket (once) and
    /// answers its path and token.
    fn hello(self: &Arc<Self>, req: &Map<String, Value>) -> Result<Reply, TermError> {
        let mut v = json!({
            "protocol": PROTOCOL,
            "version": env!("CARGO_PKG_VERSION"),
            "pid": std::process::id(),
        });
        let grace = match req.get("graceMs") {
            None | Some(Value::Null) => 0,
            Some(g) => g.as_u64().filter(|g| *g <= MAX_GRACE_MS).ok_or_else(|| {
                TermError::invalid_arg(format!(
                    "graceMs must be an integer from 0 to {MAX_GRACE_MS}"
                ))
            })?,
        };
        let ring = match req.get("replayBytes") {
            None | Some(Value::Null) => REPLAY_BYTES,
            Some(b) => b.as_u64().filter(|b| *b <= 1 << 30).ok_or_else(|| {
                TermError::invalid_arg("replayBytes must be an integer up to 1 GiB")
            })? as usize,
        };
        if grace > 0 {
            let mut r = self.reattach();
            if r.is_none() {
                let listener = Arc::new(Listener::bind().map_err(|e| {
                    TermError::new("ERR_ATTACH_UNAVAILABLE", format!("no reattach socket: {e}"))
                })?);
                let token = crate::sys::attach::random_token().map_err(|e| {
                    TermError::new("ERR_ATTACH_UNAVAILABLE", format!("no token: {e}"))
                })?;
                tokio::spawn(accept_loop(self.clone(), listener.clone(), token.clone()));
                *r = Some(Reattach {
                    listener,
                    token,
                    grace: std::time::Duration::ZERO,
                });
            }
            let r = r.as_mut().expect("bound above");
            r.grace = std::time::Duration::from_millis(grace);
            self.outbox.set_ring(ring);
            v["attach"] = json!({
                "path": r.listener.path().to_string_lossy(),
                "token": r.token,
                "graceMs": grace,
                "replayBytes": ring,
            });
        } else if let Some(r) = self.reattach().as_mut() {
            r.grace = std::time::Duration::ZERO;
        }
        now(v)
    }

    fn terms(&self) -> MutexGuard<'_, HashMap<u32, Arc<Terminal>>> {
        self.terms.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn subs(&self) -> MutexGuard<'_, HashMap<u32, (u32, u64)>> {
        self.subs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn term(&self, req: &Map<String, Value>) -> Result<(u32, Arc<Terminal>), TermError> {
        let n = u32_field(req, "term")?;
        let t = self.terms().get(&n).cloned().ok_or_else(|| {
            TermError::new(
                ERR_UNKNOWN_TERMINAL,
                format!("terminal {n} is not open on this connection"),
            )
        })?;
        Ok((n, t))
    }

    fn handle(self: &Arc<Self>, frame: Result<Frame, FrameError>) {
        let (id, reply) = match frame {
            Err(FrameError::TooLarge(n)) => (
                Value::Null,
                Err(TermError::new(
                    ERR_FRAME_TOO_LARGE,
                    format!(
                        "a frame of {n} bytes is over the bound of {MAX_FRAME}; it was skipped"
                    ),
                )),
            ),
            Err(FrameError::Malformed(m)) => (Value::Null, Err(TermError::new(ERR_BAD_FRAME, m))),
            Ok(Frame::Input { id, term, data }) => {
                let mut req = Map::new();
                req.insert("term".into(), json!(term));
                (
                    json!(id),
                    self.term(&req).and_then(|(_, t)| write(&t, data)),
                )
            }
            Ok(Frame::Json(text)) => match serde_json::from_slice::<Value>(&text) {
                Ok(Value::Object(req)) => match req.get("id") {
                    Some(id) if id.is_u64() => (id.clone(), self.request(&req)),
                    _ => (
                        Value::Null,
                        Err(TermError::new(
                            ERR_BAD_FRAME,
                            "a request needs an id (a non-negative integer)",
                        )),
                    ),
                },
                Ok(_) => (
                    Value::Null,
                    Err(TermError::new(
                        ERR_BAD_FRAME,
                        "a request must be a JSON object",
                    )),
                ),
                Err(e) => (
                    Value::Null,
                    Err(TermError::new(ERR_BAD_FRAME, format!("not JSON: {e}"))),
                ),
            },
        };
        match reply {
            Err(e) => self.outbox.send(reply_json(&id, Err(e))),
            Ok(fut) => {
                let outbox = self.outbox.clone();
                tokio::spawn(async move {
                    let r = fut.await;
                    outbox.send(reply_json(&id, r));
                });
            }
        }
    }

    fn request(self: &Arc<Self>, req: &Map<String, Value>) -> Result<Reply, TermError> {
        let op = req
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| TermError::new(ERR_BAD_FRAME, "a request needs an op (a string)"))?;
        match op {
            "hello" => self.hello(req),
            "shutdown" => {
                self.closing.store(true, Ordering::Relaxed);
                now(json!({}))
            }
            "resume" => Err(TermError::new(
                ERR_ATTACH_REFUSED,
                "resume is only the first request of a reattached link",
            )),
            "create" => self.create(req),
            "lookup" => lookup::lookup(req),
            "output" => {
                let (_, t) = self.term(req)?;
                t.check_live()?;
                let (raw, exit, _) = t.raw_output();
                let (snap, _) = raw.decode_ascii();
                let mut v = json!({
                    "output": snap.output,
                    "truncated": snap.truncated,
                    "outputBytes": t.bytes_written(),
                    "timedOut": t.timed_out(),
                });
                if let Some(st) = exit {
                    v["exitStatus"] = status_json(&st);
                }
                now(v)
            }
            "wait" => {
                let (_, t) = self.term(req)?;
                if t.is_released() {
                    return Err(TermError::released(t.id()));
                }
                Ok(Box::pin(async move {
                    Ok(status_json(&t.wait_for_exit().await))
                }))
            }
            "kill" => {
                let (_, t) = self.term(req)?;
                t.check_live()?;
                Ok(Box::pin(async move {
                    t.kill().await;
                    Ok(json!({}))
                }))
            }
            "release" => {
                let (n, t) = self.term(req)?;
                let first = t.mark_released();
                let conn = self.clone();
                Ok(Box::pin(async move {
                    if first {
                        t.finish_release().await;
                        conn.terms().remove(&n);
                    } else {
                        t.wait_for_exit().await;
                    }
                    Ok(json!({}))
                }))
            }
            "write" => {
                let (_, t) = self.term(req)?;
                let data = req.get("data").and_then(Value::as_str).ok_or_else(|| {
                    TermError::invalid_arg("data must be a string (or send an input frame)")
                })?;
                write(&t, data.as_bytes().to_vec())
            }
            "sendKeys" => {
                let (_, t) = self.term(req)?;
                let names = match req.get("keys") {
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, k)| {
                            k.as_str().map(str::to_owned).ok_or_else(|| {
                                TermError::invalid_arg(format!("keys[{i}] must be a string"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => return Err(TermError::invalid_arg("keys must be an array of key names")),
                };
                write(&t, crate::keys::encode_all(&names)?)
            }
            "closeStdin" => {
                let (_, t) = self.term(req)?;
                let fut = t.close_stdin()?;
                Ok(Box::pin(async move {
                    fut.await?;
                    Ok(json!({}))
                }))
            }
            "resize" => {
                let (_, t) = self.term(req)?;
                let get = |k: &str| req.get(k).unwrap_or(&Value::Null);
                let size = PtySize {
                    cols: request::dimension(get("cols"), "cols")?,
                    rows: request::dimension(get("rows"), "rows")?,
                };
                t.resize(size)?;
                now(json!({}))
            }
            "subscribe" => {
                let (n, t) = self.term(req)?;
                let replay = req.get("replay").and_then(Value::as_bool).unwrap_or(false);
                let sub = self.new_sub(req.get("sub"))?;
                let sink = ConnSink {
                    sub,
                    outbox: self.outbox.clone(),
                };
                let key = t.subscribe(Arc::new(sink), replay)?;
                self.subs().insert(sub, (n, key));
                now(json!({"sub": sub}))
            }
            "unsubscribe" => {
                let sub = u32_field(req, "sub")?;
                if let Some((n, key)) = self.subs().remove(&sub) {
                    if let Some(t) = self.terms().get(&n) {
                        t.unsubscribe(key);
                    }
                }
                now(json!({}))
            }
            "releaseHold" => {
                let (_, t) = self.term(req)?;
                t.release_hold();
                now(json!({}))
            }
            "foregroundProcessGroup" => {
                let (_, t) = self.term(req)?;
                now(json!({"pgid": t.foreground_process_group()?}))
            }
            "savePtyModes" => {
                let (_, t) = self.term(req)?;
                t.save_pty_modes()?;
                now(json!({}))
            }
            "restorePtyModes" => {
                let (_, t) = self.term(req)?;
                now(json!({"changed": t.restore_pty_modes()?}))
            }
            // A shell session's view of its shell from outside (`inspect.rs`).
            "inspect" => inspect::inspect(&self.term(req)?.1),
            "continueShell" => inspect::continue_shell(&self.term(req)?.1),
            "killForeground" => inspect::kill_foreground(&self.term(req)?.1, req),
            "sweep" => inspect::sweep(&self.term(req)?.1, req),
            other => Err(TermError::new(
                ERR_UNKNOWN_OP,
                format!("unknown op '{other}'"),
            )),
        }
    }

    /// `create {params, options, subscribe?, hold?}`: `subscribe` (a subscription number)
    /// streams the output from its
    /// first byte to a subscription made before the command starts; `hold` holds the first
    /// output until `releaseHold` (so subscriptions sent right after the answer get all of it).
    fn create(self: &Arc<Self>, req: &Map<String, Value>) -> Result<Reply, TermError> {
        let mut r = request::request(
            req.get("params").unwrap_or(&Value::Null),
            req.get("options"),
        )?;
        if let Some(spec) = r.spawn.sandbox.as_mut() {
            self.own.guard(spec, "options.sandbox")?;
        }
        let flag = |k: &str| req.get(k).and_then(Value::as_bool).unwrap_or(false);
        let sub = match req.get("subscribe").filter(|v| !v.is_null()) {
            Some(v) => Some(self.new_sub(Some(v))?),
            None => None,
        };
        if let Some(sub) = sub {
            r.terminal.first_sink = Some(SharedSink(Arc::new(ConnSink {
                sub,
                outbox: self.outbox.clone(),
            })));
        }
        r.terminal.hold_first_output = flag("hold");
        let inherited = if r.spawn.inherit_env {
            std::env::vars_os().collect()
        } else {
            Vec::new()
        };
        let cwd = std::env::current_dir()
            .map_err(|e| TermError::invalid_cwd(format!("the server's cwd is unusable: {e}")))
            .unwrap_or_else(|_| PathBuf::from("/"));
        let term = match crate::start::start(&r, inherited, &cwd) {
            Ok(t) => t,
            Err(e) => {
                if let Some(sub) = sub {
                    self.outbox.end(sub);
                }
                return Err(e);
            }
        };
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.terms().insert(n, term.clone());
        if let Some(sub) = sub {
            // The core subscribed the first sink without a key: only release ends it.
            self.subs().insert(sub, (n, u64::MAX));
        }
        let outbox = self.outbox.clone();
        let t = term.clone();
        tokio::spawn(async move {
            let st = t.wait_for_exit().await;
            outbox.send(json!({"event": "exit", "term": n, "status": status_json(&st)}));
        });
        now(json!({
            "term": n,
            "id": term.id(),
            "sessionId": term.session_id(),
            "pid": term.pid(),
            "cwd": term.cwd().to_string_lossy(),
            "isPty": term.is_pty(),
            "sub": sub,
        }))
    }

    /// Opens the subscription the client numbered `v` (its numbers, so output that arrives
    /// before the answer that confirms it is already known to be its).
    fn new_sub(&self, v: Option<&Value>) -> Result<u32, TermError> {
        let sub = v
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| TermError::invalid_arg("sub must be a subscription number"))?;
        if !self.outbox.open_sub(sub) {
            return Err(TermError::invalid_arg(format!(
                "subscription {sub} is already open"
            )));
        }
        Ok(sub)
    }

    /// Releases every terminal (the connection is gone); returns once all are.
    async fn release_all(&self) {
        let terms: Vec<Arc<Terminal>> = self.terms().drain().map(|(_, t)| t).collect();
        let mut set = tokio::task::JoinSet::new();
        for t in terms {
            if t.mark_released() {
                set.spawn(async move { t.finish_release().await });
            }
        }
        while set.join_next().await.is_some() {}
    }
}

fn write(t: &Arc<Terminal>, data: Vec<u8>) -> Result<Reply, TermError> {
    let fut = t.write(data)?;
    Ok(Box::pin(async move {
        fut.await?;
        Ok(json!({}))
    }))
}

/// `acp-terminal-server --attach PATH`: splices stdio to the live server at `path` (see
/// [`crate::sys::attach::attach`]); returns the exit code.
pub fn attach(path: &std::path::Path) -> i32 {
    crate::sys::attach::attach(path, GONE_MARKER)
}

/// What ended a link.
enum LinkEnd {
    /// The input ended or the output failed.
    Lost,
    /// Another link presented the token: it takes over.
    Superseded(Attached),
}

/// One link: the input being read and the task writing the outbox to the output.
struct Link {
    read: BoxRead,
    writer: tokio::task::JoinHandle<()>,
    failed: Arc<Notify>,
}

impl Link {
    /// Starts writing `prefix` (out of the stream's count: the banner, a resume's answer and
    /// replay), then the outbox, to `write`.
    fn start(outbox: Arc<Outbox>, read: BoxRead, mut write: BoxWrite, prefix: Vec<u8>) -> Self {
        let failed = Arc::new(Notify::new());
        let f = failed.clone();
        let writer = tokio::spawn(async move {
            let r = async {
                write.write_all(&prefix).await?;
                write.flush().await?;
                while let Some(batch) = outbox.next_batch(1 << 20).await {
                    write.write_all(&batch).await?;
                    write.flush().await?;
                }
                std::io::Result::Ok(())
            }
            .await;
            if r.is_err() {
                f.notify_one();
            }
        });
        Self {
            read,
            writer,
            failed,
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.writer.abort();
    }
}

/// Accepts reattaching links: each must send `resume` with the token first.
async fn accept_loop(conn: Arc<Conn>, listener: Arc<Listener>, token: String) {
    while let Ok((read, write)) = listener.accept().await {
        let tx = conn.attached.clone();
        let token = token.clone();
        tokio::spawn(async move {
            if let Some(a) = handshake(read, write, &token).await {
                let _ = tx.send(a);
            }
        });
    }
}

async fn handshake(mut read: BoxRead, mut write: BoxWrite, token: &str) -> Option<Attached> {
    write.write_all(banner().as_bytes()).await.ok()?;
    write.flush().await.ok()?;
    let first = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        read_frame(&mut read, 1 << 20),
    )
    .await;
    let req = match first {
        Ok(Ok(Some(Ok(Frame::Json(text))))) => match serde_json::from_slice::<Value>(&text) {
            Ok(Value::Object(req)) => Some(req),
            _ => None,
        },
        _ => None,
    };
    let ok = req.as_ref().is_some_and(|r| {
        r.get("op").and_then(Value::as_str) == Some("resume")
            && r.get("token")
                .and_then(Value::as_str)
                .is_some_and(|t| same_token(t, token))
    });
    let id = req
        .as_ref()
        .and_then(|r| r.get("id").cloned())
        .unwrap_or(Value::Null);
    if !ok {
        let e = TermError::new(
            ERR_ATTACH_REFUSED,
            "a reattached link must first send resume with the session token",
        );
        let _ = write.write_all(&json_frame(&reply_json(&id, Err(e)))).await;
        let _ = write.flush().await;
        return None;
    }
    Some(Attached {
        read,
        write,
        id,
        req: req.unwrap_or_default(),
    })
}

/// Serves a session: the banner on `output`, then requests from `input`. When the link ends it
/// waits for a reattach if the client asked for a grace (see the module's invariants), else (or
/// after the grace) releases every terminal it started and returns.
pub async fn serve<R, W>(input: R, output: W)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut attached) = mpsc::unbounded_channel();
    let conn = Conn::new(tx);
    let mut link = Link::start(
        conn.outbox.clone(),
        Box::new(input),
        Box::new(output),
        banner().into_bytes(),
    );
    // Client frames read so far (a resumed client resends the ones after).
    let mut received: u64 = 0;
    loop {
        let end = loop {
            let frame = tokio::select! {
                f = read_frame(&mut link.read, MAX_FRAME) => f,
                _ = link.failed.notified() => break LinkEnd::Lost,
                Some(a) = attached.recv() => break LinkEnd::Superseded(a),
            };
            match frame {
                Ok(Some(f)) => {
                    received += 1;
                    conn.handle(f);
                }
                Ok(None) | Err(_) => break LinkEnd::Lost,
            }
        };
        drop(link);
        let next = match end {
            LinkEnd::Superseded(a) => a,
            LinkEnd::Lost => {
                let grace = conn.grace();
                if grace.is_zero() {
                    break;
                }
                match tokio::time::timeout(grace, attached.recv()).await {
                    Ok(Some(a)) => a,
                    _ => break,
                }
            }
        };
        match conn.resume(next, received) {
            Ok(l) => link = l,
            Err((mut w, refusal)) => {
                let _ = w.write_all(&refusal).await;
                let _ = w.flush().await;
                break;
            }
        }
    }
    conn.release_all().await;
    conn.outbox.close();
    let reattach = conn.reattach().take();
    if let Some(r) = reattach {
        // The accept task holds the listener too: remove the socket now (the process may exit
        // before that task is dropped).
        r.listener.remove();
    }
}

impl Conn {
    /// Continues the session on a link that presented the token, or refuses it (and the
    /// session ends: what the client missed cannot be made up).
    fn resume(&self, a: Attached, received: u64) -> Result<Link, (BoxWrite, Vec<u8>)> {
        let r = match a.req.get("offset").and_then(Value::as_u64) {
            Some(offset) => self.outbox.lock().ring.resume(offset),
            None => Err(TermError::invalid_arg(
                "resume needs offset (the bytes the client read)",
            )),
        };
        match r {
            Ok(bytes) => {
                let mut prefix = json_frame(&reply_json(&a.id, Ok(json!({"received": received}))));
                prefix.extend_from_slice(&bytes);
                Ok(Link::start(self.outbox.clone(), a.read, a.write, prefix))
            }
            Err(e) => Err((a.write, json_frame(&reply_json(&a.id, Err(e))))),
        }
    }
}
