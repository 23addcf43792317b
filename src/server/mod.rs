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
//! - The connection owns its terminals: when its input ends (the client, or the transport,
//!   is gone) or its output fails, every terminal is released (TERM -> grace -> KILL through
//!   the core's containment) before [`serve`] returns; the guardian covers a server that is
//!   killed outright.
//! - Output is bounded per subscription ([`HIGH_WATER_MARK`]): a reader that falls behind loses
//!   the oldest bytes (counted in the next output frame), never the server's memory; the
//!   retained output (`output`) is never affected.
//! - A bad frame or request is answered with a coded error and the connection goes on.
//! - Requests are taken in order: whatever a request does synchronously (queueing a write,
//!   subscribing, marking a release) happens before the next request is read.

mod frame;
mod lookup;
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
use tokio::sync::Notify;

pub use frame::{banner, BANNER_PREFIX, MAX_FRAME, PROTOCOL};
use frame::{json_frame, output_frame, read_frame, Frame, FrameError};

use crate::error::TermError;
use crate::exit::ExitStatus;
use crate::pending::{Pending, HIGH_WATER_MARK};
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

/// What the writer sends next.
enum Item {
    Frame(Vec<u8>),
    /// The pending output of a subscription.
    Output(u32),
    /// A subscription ended: its last output, then `{event: "end"}`.
    End(u32),
}

#[derive(Default)]
struct OutState {
    queue: VecDeque<Item>,
    subs: HashMap<u32, SubOut>,
    /// No more frames: the connection is over.
    closed: bool,
}

struct SubOut {
    pending: Pending,
    /// An `Item::Output` for it is in the queue.
    queued: bool,
}

/// Frames waiting for the writer: responses and events in order, output per subscription
/// (bounded).
#[derive(Default)]
struct Outbox {
    state: Mutex<OutState>,
    ready: Notify,
    /// The writer failed (the stream is gone).
    failed: Notify,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, OutState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, v: Value) {
        let mut s = self.lock();
        if !s.closed {
            s.queue.push_back(Item::Frame(json_frame(&v)));
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

    /// The next bytes to write, up to about `max`; `None` when closed and empty.
    async fn next_batch(&self, max: usize) -> Option<Vec<u8>> {
        loop {
            {
                let mut s = self.lock();
                let mut out = Vec::new();
                while out.len() < max {
                    let Some(item) = s.queue.pop_front() else {
                        break;
                    };
                    match item {
                        Item::Frame(f) => out.extend_from_slice(&f),
                        Item::Output(sub) => {
                            if let Some(o) = s.subs.get_mut(&sub) {
                                o.queued = false;
                                if let Some((data, dropped)) = o.pending.take() {
                                    out.extend_from_slice(&output_frame(sub, dropped, &data));
                                }
                            }
                        }
                        Item::End(sub) => {
                            s.subs.remove(&sub);
                            out.extend_from_slice(&json_frame(
                                &json!({"event": "end", "sub": sub}),
                            ));
                        }
                    }
                }
                if !out.is_empty() {
                    return Some(out);
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

/// One connection: its terminals and subscriptions.
struct Conn {
    outbox: Arc<Outbox>,
    terms: Mutex<HashMap<u32, Arc<Terminal>>>,
    /// Subscription -> (terminal, the core's subscriber key).
    subs: Mutex<HashMap<u32, (u32, u64)>>,
    next: AtomicU32,
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
    fn new() -> Arc<Self> {
        Arc::new(Self {
            outbox: Arc::new(Outbox::default()),
            terms: Mutex::default(),
            subs: Mutex::default(),
            next: AtomicU32::new(1),
        })
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
            "hello" => now(json!({
                "protocol": PROTOCOL,
                "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(),
            })),
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

async fn write_loop<W: AsyncWrite + Unpin>(outbox: Arc<Outbox>, mut w: W) -> std::io::Result<()> {
    w.write_all(banner().as_bytes()).await?;
    w.flush().await?;
    while let Some(batch) = outbox.next_batch(1 << 20).await {
        w.write_all(&batch).await?;
        w.flush().await?;
    }
    Ok(())
}

/// Serves one connection: the banner on `output`, then requests from `input` until it ends
/// (or `output` fails); then releases every terminal it started and returns.
pub async fn serve<R, W>(mut input: R, output: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let conn = Conn::new();
    let outbox = conn.outbox.clone();
    let writer = tokio::spawn(async move {
        let r = write_loop(outbox.clone(), output).await;
        if r.is_err() {
            outbox.close();
            outbox.failed.notify_one();
        }
    });
    loop {
        let frame = tokio::select! {
            f = read_frame(&mut input, MAX_FRAME) => f,
            _ = conn.outbox.failed.notified() => break,
        };
        match frame {
            Ok(Some(f)) => conn.handle(f),
            Ok(None) | Err(_) => break,
        }
    }
    conn.release_all().await;
    conn.outbox.close();
    let _ = writer.await;
}
