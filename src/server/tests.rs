//! The server over an in-memory stream: a client speaking the protocol to [`super::serve`].

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::frame::{input_frame, json_frame, KIND_JSON, KIND_OUTPUT, MAX_FRAME};
use super::*;

enum Msg {
    Json(Value),
    Output { sub: u32, data: Vec<u8> },
}

struct Client {
    tx: DuplexStream,
    rx: BufReader<DuplexStream>,
    server: tokio::task::JoinHandle<()>,
    /// Output received while waiting for something else, by subscription.
    output: std::collections::HashMap<u32, Vec<u8>>,
    events: Vec<Value>,
}

async fn read_msg<R: AsyncRead + Unpin>(r: &mut R) -> Option<Msg> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await.ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    r.read_exact(&mut body).await.ok()?;
    match body[0] {
        KIND_JSON => Some(Msg::Json(serde_json::from_slice(&body[1..]).unwrap())),
        KIND_OUTPUT => Some(Msg::Output {
            sub: u32::from_be_bytes(body[1..5].try_into().unwrap()),
            data: body[13..].to_vec(),
        }),
        k => panic!("unknown kind {k}"),
    }
}

impl Client {
    async fn start() -> Self {
        let (tx, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, rx) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(serve(server_in, server_out));
        let mut rx = BufReader::new(rx);
        let mut line = String::new();
        rx.read_line(&mut line).await.unwrap();
        assert_eq!(line, banner());
        Self {
            tx,
            rx,
            server,
            output: Default::default(),
            events: Vec::new(),
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.tx.write_all(bytes).await.unwrap();
    }

    /// The next message answering `id` (`Value::Null`: an answer to no request).
    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(20), read_msg(&mut self.rx))
                .await
                .expect("an answer in time")
                .expect("the server is up");
            match msg {
                Msg::Json(v) if v.get("id") == Some(&id) => return v,
                Msg::Json(v) => self.events.push(v),
                Msg::Output { sub, data } => self.output.entry(sub).or_default().extend(data),
            }
        }
    }

    async fn call(&mut self, id: u64, req: Value) -> Value {
        let mut req = req;
        req["id"] = json!(id);
        self.send_raw(&json_frame(&req)).await;
        self.answer(json!(id)).await
    }

    async fn ok(&mut self, id: u64, req: Value) -> Value {
        let v = self.call(id, req).await;
        assert!(v.get("error").is_none(), "{v}");
        v["result"].clone()
    }

    async fn wait_end(&mut self, sub: u32) -> Vec<u8> {
        while !self
            .events
            .iter()
            .any(|e| e["event"] == "end" && e["sub"] == sub)
        {
            let msg = tokio::time::timeout(Duration::from_secs(20), read_msg(&mut self.rx))
                .await
                .expect("the end in time")
                .expect("the server is up");
            match msg {
                Msg::Json(v) => self.events.push(v),
                Msg::Output { sub, data } => self.output.entry(sub).or_default().extend(data),
            }
        }
        self.output.remove(&sub).unwrap_or_default()
    }
}

fn alive(pid: i64) -> bool {
    // A zombie is not alive: only /proc's state says so.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_runs_and_streams_its_output_and_exit() {
    let mut c = Client::start().await;
    let r = c
        .ok(
            1,
            json!({"op": "create", "params": {"command": "printf 'a\\nb'; exit 3"}, "subscribe": 7}),
        )
        .await;
    let term = r["term"].clone();
    assert_eq!(r["sub"], 7);
    let status = c.ok(2, json!({"op": "wait", "term": term})).await;
    assert_eq!(status, json!({"exitCode": 3, "signal": null}));
    assert_eq!(c.wait_end(7).await, b"a\nb");
    let out = c.ok(3, json!({"op": "output", "term": term})).await;
    assert_eq!(out["output"], "a\nb");
    assert_eq!(out["exitStatus"]["exitCode"], 3);
    assert_eq!(out["outputBytes"], 3);
    c.ok(4, json!({"op": "release", "term": term})).await;
    let gone = c.call(5, json!({"op": "output", "term": term})).await;
    assert_eq!(gone["error"]["code"], ERR_UNKNOWN_TERMINAL);
}

#[tokio::test(flavor = "multi_thread")]
async fn argv_env_cwd_limits_and_truncation_are_the_cores() {
    let mut c = Client::start().await;
    let r = c
        .ok(
            1,
            json!({"op": "create", "params": {
                "command": "sh", "args": ["-c", "printf '%s|%s|' \"$X\" \"$(pwd)\"; ulimit -n; printf 'é%.0s' 1 2 3"],
                "env": [{"name": "X", "value": "1 2"}], "cwd": "/tmp", "outputByteLimit": 3,
            }, "options": {"limits": {"openFiles": 77}}}),
        )
        .await;
    c.ok(2, json!({"op": "wait", "term": r["term"]})).await;
    let out = c.ok(3, json!({"op": "output", "term": r["term"]})).await;
    // The tail cut on a character boundary: 3 bytes keep one 2-byte é.
    assert_eq!(out["output"], "é");
    assert_eq!(out["truncated"], true);
    let r = c
        .ok(
            4,
            json!({"op": "create", "params": {
                "command": "printf '%s|%s|' \"$X\" \"$(pwd)\"; ulimit -n",
                "env": [{"name": "X", "value": "1 2"}], "cwd": "/tmp",
            }, "options": {"limits": {"openFiles": 77}}}),
        )
        .await;
    c.ok(5, json!({"op": "wait", "term": r["term"]})).await;
    let out = c.ok(6, json!({"op": "output", "term": r["term"]})).await;
    assert_eq!(out["output"], "1 2|/tmp|77\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_coded_errors_naming_the_field() {
    let mut c = Client::start().await;
    let cases = [
        (json!({"op": "create", "params": {"command": 5}}), "command"),
        (
            json!({"op": "create", "params": {"command": "true"}, "options": {"limits": {"cpu": 1}}}),
            "options.limits.cpu",
        ),
        (
            json!({"op": "create", "params": {"command": "true"}, "options": {"killGraceMs": -1}}),
            "options.killGraceMs",
        ),
        (
            json!({"op": "create", "params": {"command": "true"}, "options": {"output": "text"}}),
            "options.output",
        ),
        (
            json!({"op": "create", "params": {"command": "true", "cwd": "relative"}}),
            "cwd",
        ),
        (
            json!({"op": "resize", "term": 99, "cols": 1, "rows": 1}),
            "terminal 99",
        ),
    ];
    for (i, (req, field)) in cases.into_iter().enumerate() {
        let v = c.call(i as u64 + 1, req).await;
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(field), "{v}");
        assert!(v["error"]["code"].as_str().is_some_and(|c| !c.is_empty()));
    }
    let v = c
        .call(
            50,
            json!({"op": "create", "params": {"command": "no-such-program-x", "args": ["a"]}}),
        )
        .await;
    assert_eq!(v["error"]["code"], "ENOENT");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_oversized_frames_are_refused_and_the_connection_goes_on() {
    let mut c = Client::start().await;
    let bad: Vec<(Vec<u8>, &str)> = vec![
        (b"\x00\x00\x00\x04\x01{x}".to_vec(), ERR_BAD_FRAME),
        (json_frame(&json!([1, 2])), ERR_BAD_FRAME),
        (json_frame(&json!({"op": "hello"})), ERR_BAD_FRAME),
        (b"\x00\x00\x00\x02\x09z".to_vec(), ERR_BAD_FRAME),
        (b"\x00\x00\x00\x00".to_vec(), ERR_BAD_FRAME),
    ];
    for (bytes, code) in bad {
        c.send_raw(&bytes).await;
        let v = c.answer(Value::Null).await;
        assert_eq!(v["error"]["code"], code, "{v}");
    }
    // Over the bound: refused, its bytes skipped (sent while the server reads them).
    let len = MAX_FRAME + 1;
    let mut big = (len as u32).to_be_bytes().to_vec();
    big.push(KIND_JSON);
    big.resize(4 + len, b' ');
    let (mut tx, rx) = (c.tx, c.rx);
    let sender = tokio::spawn(async move {
        tx.write_all(&big).await.unwrap();
        tx
    });
    let mut c2 = Client {
        tx: tokio::io::duplex(1).0,
        rx,
        server: c.server,
        output: Default::default(),
        events: Vec::new(),
    };
    let v = c2.answer(Value::Null).await;
    assert_eq!(v["error"]["code"], ERR_FRAME_TOO_LARGE);
    c2.tx = sender.await.unwrap();
    let v = c2.call(9, json!({"op": "nonsense"})).await;
    assert_eq!(v["error"]["code"], ERR_UNKNOWN_OP);
    let hello = c2.ok(10, json!({"op": "hello"})).await;
    assert_eq!(hello["protocol"], PROTOCOL);
}

#[tokio::test(flavor = "multi_thread")]
async fn input_frames_and_keys_reach_the_command_and_a_pty_resizes() {
    let mut c = Client::start().await;
    let r = c
        .ok(
            1,
            json!({"op": "create", "params": {"command": "cat"}, "options": {"stdin": "pipe"}, "subscribe": 1}),
        )
        .await;
    let term = r["term"].as_u64().unwrap() as u32;
    c.send_raw(&input_frame(2, term, b"over the wire\n")).await;
    let w = c.answer(json!(2)).await;
    assert!(w.get("error").is_none(), "{w}");
    c.ok(3, json!({"op": "closeStdin", "term": term})).await;
    assert_eq!(c.wait_end(1).await, b"over the wire\n");

    let r = c
        .ok(
            4,
            json!({"op": "create", "params": {"command": "read l; stty size; echo \"got $l\""},
                   "options": {"pty": {"cols": 100, "rows": 30}}, "subscribe": 2}),
        )
        .await;
    let term = r["term"].clone();
    assert_eq!(r["isPty"], true);
    c.ok(
        5,
        json!({"op": "resize", "term": term, "cols": 120, "rows": 40}),
    )
    .await;
    c.ok(6, json!({"op": "write", "term": term, "data": "xy"}))
        .await;
    c.ok(
        7,
        json!({"op": "sendKeys", "term": term, "keys": ["z", "Enter"]}),
    )
    .await;
    let out = String::from_utf8(c.wait_end(2).await).unwrap();
    assert!(out.contains("40 120") && out.contains("got xyz"), "{out:?}");
    let v = c
        .call(
            8,
            json!({"op": "sendKeys", "term": term, "keys": ["NotAKey"]}),
        )
        .await;
    assert_eq!(v["error"]["code"], "ERR_INVALID_ARG");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subscription_with_replay_gets_the_retained_output_then_the_rest() {
    let mut c = Client::start().await;
    let r = c
        .ok(
            1,
            json!({"op": "create", "params": {"command": "printf first; read x; printf second"},
                   "options": {"pty": {}}}),
        )
        .await;
    let term = r["term"].clone();
    // Wait for the first output to be retained.
    for _ in 0..200 {
        let out = c.ok(2, json!({"op": "output", "term": term})).await;
        if out["output"] == "first" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    c.ok(
        3,
        json!({"op": "subscribe", "term": term, "sub": 40, "replay": true}),
    )
    .await;
    c.ok(4, json!({"op": "write", "term": term, "data": "\n"}))
        .await;
    let got = String::from_utf8(c.wait_end(40).await).unwrap();
    assert!(
        got.starts_with("first") && got.ends_with("second"),
        "{got:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_the_input_kills_every_command_and_ends_the_server() {
    let mut c = Client::start().await;
    let mut pids = Vec::new();
    for i in 0..3 {
        let r = c
            .ok(
                i,
                json!({"op": "create", "params": {"command": "trap '' TERM; sleep 1000 & echo $!; wait"},
                       "options": {"killGraceMs": 100}, "subscribe": i}),
            )
            .await;
        pids.push(r["pid"].as_i64().unwrap());
    }
    for i in 0..3 {
        loop {
            if let Some(o) = c.output.get(&(i as u32)) {
                if o.ends_with(b"\n") {
                    pids.push(String::from_utf8_lossy(o).trim().parse().unwrap());
                    break;
                }
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), c.answer(json!("none"))).await;
        }
    }
    assert!(pids.iter().all(|p| alive(*p)));
    drop(c.tx);
    tokio::time::timeout(Duration::from_secs(20), c.server)
        .await
        .expect("the server ends")
        .unwrap();
    for p in pids {
        assert!(!alive(p), "pid {p} outlived the connection");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lookup_answers_from_the_servers_path_and_file_system() {
    let dir = std::env::temp_dir().join(format!("acp-lookup-{}", std::process::id()));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("far-tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let link = dir.join("link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&bin, &link).unwrap();
    let (bin_s, link_s) = (bin.to_str().unwrap(), link.to_str().unwrap());
    let mut c = Client::start().await;
    let r = c
        .ok(
            1,
            json!({"op": "lookup", "programs": [
                {"command": "far-tool", "path": bin_s},
                {"command": "no-such-program-here", "path": bin_s},
                {"command": "./far-tool", "cwd": bin_s},
            ], "realPaths": [format!("{link_s}/far-tool"), "/no/such/file"],
               "roots": [link_s], "cwd": "/", "env": true}),
        )
        .await;
    let real_bin = std::fs::canonicalize(&bin).unwrap();
    let real_tool = real_bin.join("far-tool");
    assert_eq!(r["programs"][0]["path"], tool.to_str().unwrap());
    assert_eq!(r["programs"][1]["error"]["code"], "ENOENT");
    assert_eq!(r["programs"][2]["path"], tool.to_str().unwrap());
    assert_eq!(r["realPaths"], json!([real_tool.to_str().unwrap(), null]));
    assert_eq!(r["roots"], json!([real_bin.to_str().unwrap()]));
    assert_eq!(r["cwdInRoots"]["inside"], false);
    assert_eq!(r["cwdInRoots"]["resolved"], "/");
    assert_eq!(r["path"], json!(std::env::var("PATH").ok()));
    assert!(r["env"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "PATH"));
    let inside = c
        .ok(2, json!({"op": "lookup", "roots": [link_s], "cwd": link_s}))
        .await;
    assert_eq!(inside["cwdInRoots"]["inside"], true);
    let missing = c
        .ok(
            3,
            json!({"op": "lookup", "roots": ["/"], "cwd": "/no/such/dir"}),
        )
        .await;
    assert_eq!(missing["cwdInRoots"]["error"]["code"], "ERR_INVALID_CWD");
    let bad = c
        .call(4, json!({"op": "lookup", "roots": ["/no/such/root"]}))
        .await;
    assert_eq!(bad["error"]["code"], "ERR_INVALID_ARG");
    assert!(bad["error"]["message"]
        .as_str()
        .unwrap()
        .contains("roots[0]"));
    let bad = c
        .call(5, json!({"op": "lookup", "programs": [{"cwd": "/"}]}))
        .await;
    assert!(bad["error"]["message"]
        .as_str()
        .unwrap()
        .contains("programs[0].command"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Polls `inspect` until `pred` holds on its answer (at most 10 s).
async fn inspect_until(
    c: &mut Client,
    id: &mut u64,
    term: &Value,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        *id += 1;
        let look = c.ok(*id, json!({"op": "inspect", "term": term})).await;
        if pred(&look) || std::time::Instant::now() > deadline {
            return look;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_is_inspected_and_its_job_and_tagged_processes_are_ended_at_the_server() {
    let mut c = Client::start().await;
    let mut id = 1;
    let r = c
        .ok(
            id,
            json!({"op": "create",
                   "params": {"command": "bash", "args": ["--norc", "--noprofile", "-i"],
                              "env": [{"name": "ACP_SWEEP_TEST", "value": "t1"}, {"name": "PS1", "value": "$ "}],
                              "cwd": "/tmp"},
                   "options": {"pty": {"cols": 80, "rows": 24}}}),
        )
        .await;
    let term = r["term"].clone();
    let pid = r["pid"].as_i64().unwrap();
    // At its prompt: the shell's own group in the foreground, the shell reading its terminal.
    let look = inspect_until(&mut c, &mut id, &term, |l| {
        l["shellWait"] == "reading-stdin"
    })
    .await;
    assert_eq!(look["foregroundProcessGroup"], pid, "{look}");
    assert_eq!(look["shellWait"], "reading-stdin", "{look}");
    assert_eq!(look["foregroundWait"], Value::Null);
    assert_eq!(look["cwd"], "/tmp");
    assert!(
        look["startTime"].is_u64() && look["execStamp"].is_string(),
        "{look}"
    );
    // Where it blocks at its prompt: the call's number, its first arguments, stack and pc.
    let site = look["shellSite"].as_str().unwrap_or_default();
    assert_eq!(site.split(' ').count(), 6, "{look}");
    id += 1;
    let none = c
        .ok(
            id,
            json!({"op": "killForeground", "term": term, "graceMs": 100}),
        )
        .await;
    assert_eq!(none, json!({"pgid": null, "signal": null}));

    // A foreground job that ignores SIGINT: its own group, ended TERM-first; the shell lives on.
    id += 1;
    c.ok(id, json!({"op": "write", "term": term, "data": "cd / && exec 2>/dev/null; sh -c 'trap \"\" INT; read x'\n"}))
        .await;
    let look = inspect_until(&mut c, &mut id, &term, |l| {
        l["foregroundProcessGroup"] != pid && l["foregroundWait"] == "reading-stdin"
    })
    .await;
    assert_eq!(look["foregroundWait"], "reading-stdin", "{look}");
    assert_eq!(look["shellWait"], "waiting-for-child", "{look}");
    assert_eq!(look["cwd"], "/");
    let job = look["foregroundProcessGroup"].as_i64().unwrap();
    id += 1;
    let killed = c
        .ok(
            id,
            json!({"op": "killForeground", "term": term, "graceMs": 2000}),
        )
        .await;
    assert_eq!(killed, json!({"pgid": job, "signal": "SIGTERM"}));
    assert!(!alive(job));
    let look = inspect_until(&mut c, &mut id, &term, |l| {
        l["foregroundProcessGroup"] == pid
    })
    .await;
    assert_eq!(look["foregroundProcessGroup"], pid, "{look}");

    // A stopped shell is continued.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    let look = inspect_until(&mut c, &mut id, &term, |l| l["shellWait"] == "stopped").await;
    assert_eq!(look["shellWait"], "stopped", "{look}");
    id += 1;
    assert_eq!(
        c.ok(id, json!({"op": "continueShell", "term": term})).await["continued"],
        true
    );
    let look = inspect_until(&mut c, &mut id, &term, |l| {
        l["shellWait"] == "reading-stdin"
    })
    .await;
    assert_eq!(look["shellWait"], "reading-stdin", "{look}");

    // A job, and a process that left the session: the sweep ends both (the tag finds the second).
    id += 1;
    c.ok(id, json!({"op": "write", "term": term, "data": "sleep 1000 & setsid sleep 1001 & echo $! > /dev/null\n"}))
        .await;
    let tagged = || crate::sys::procs::with_environment_entry(b"ACP_SWEEP_TEST=t1");
    // Settled: the shell, its sleep, and the setsid'd sleep out of the shell's tree (`setsid`
    // forks when it leads its job's group and exits, so its child is orphaned in a session of
    // its own). Before that the tree kill alone would reach every process, and the tag none.
    let escaped = || {
        let table = crate::sys::procs::list();
        let tags = tagged();
        let out: Vec<i32> = tags
            .iter()
            .copied()
            .filter(|p| {
                table.iter().any(|i| {
                    i.pid == *p
                        && i.sid == *p
                        && i.sid != pid as i32
                        && !tags.contains(&i.ppid)
                        && std::fs::read_to_string(format!("/proc/{p}/comm"))
                            .is_ok_and(|c| c.trim() == "sleep")
                })
            })
            .collect();
        (tags.len(), out)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (count, out) = escaped();
        if count == 3 && out.len() == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the shell and its two sleeps, one out of its tree: {count} tagged, {out:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    id += 1;
    let bad = c
        .call(
            id,
            json!({"op": "sweep", "term": term, "entry": "no-value="}),
        )
        .await;
    assert_eq!(bad["error"]["code"], "ERR_INVALID_ARG");
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("entry"),
        "{bad}"
    );
    id += 1;
    let start = look["startTime"].clone();
    let swept = c
        .ok(
            id,
            json!({"op": "sweep", "term": term, "entry": "ACP_SWEEP_TEST=t1", "startTime": start}),
        )
        .await;
    assert!(swept["killed"].as_u64().unwrap() >= 1, "{swept}");
    assert!(tagged().is_empty(), "{:?}", tagged());
}

/// The eighth attack's remote break: output queued faster than the link takes it went out in 1 MiB
/// turns behind frames queued meanwhile, so an `exit` overtook megabytes written before the exit. A
/// frame now goes out after every output byte pushed before it; output pushed after it still
/// takes its turn behind it, and a second subscription's output is not held back by the first's.
#[tokio::test]
async fn a_frame_goes_out_after_the_output_pushed_before_it() {
    let outbox = Outbox::default();
    assert!(outbox.open_sub(1) && outbox.open_sub(2));
    let before: Vec<u8> = (0..3 * OUTPUT_FRAME_BYTES + 7).map(|i| i as u8).collect();
    outbox.push(1, &before);
    outbox.send(json!({"event": "exit", "term": 1}));
    outbox.push(1, b"after");
    outbox.push(2, b"other");
    outbox.close();
    let mut stream = Vec::new();
    while let Some(b) = outbox.next_batch(64 << 10).await {
        stream.extend_from_slice(&b);
    }
    let mut r = &stream[..];
    let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
    while let Some(m) = read_msg(&mut r).await {
        match m {
            Msg::Json(v) => seen.push(("exit".into(), v.to_string().into_bytes())),
            Msg::Output { sub, data } => match seen.last_mut() {
                Some((k, d)) if *k == format!("out{sub}") => d.extend_from_slice(&data),
                _ => seen.push((format!("out{sub}"), data)),
            },
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds[..2], ["out1", "exit"], "{kinds:?}");
    assert!(seen[0].1 == before, "every byte before the exit, in order");
    let mut rest: Vec<_> = seen[2..].to_vec();
    rest.sort();
    assert_eq!(
        rest,
        [
            ("out1".into(), b"after".to_vec()),
            ("out2".into(), b"other".to_vec())
        ]
    );
}

/// The ninth attack: when more than the subscription's bound was pushed after a frame, the bytes
/// pushed before it were all dropped, and their count went out only after the frame (with the
/// next output). A frame now goes out after every byte pushed before it was sent or counted.
#[tokio::test]
async fn a_frame_goes_out_after_the_drops_of_the_output_pushed_before_it() {
    let outbox = Outbox::default();
    assert!(outbox.open_sub(1));
    let before = 3 * OUTPUT_FRAME_BYTES + 7;
    outbox.push(1, &vec![b'b'; before]);
    outbox.send(json!({"event": "exit", "term": 1}));
    // The writer takes one turn of the subscription (it goes back in line behind the exit) ...
    let mut stream = outbox.next_batch(64 << 10).await.unwrap().to_vec();
    // ... then the command's descendant writes more than the bound after the exit.
    let after = HIGH_WATER_MARK + OUTPUT_FRAME_BYTES;
    for _ in 0..after / 4096 {
        outbox.push(1, &[b'a'; 4096]);
    }
    outbox.close();
    while let Some(b) = outbox.next_batch(64 << 10).await {
        stream.extend_from_slice(&b);
    }
    // (sub 1's bytes counted, sent or dropped) when the exit came, and in all.
    let (mut counted, mut at_exit) = (0u64, None);
    let mut r = &stream[..];
    while !r.is_empty() {
        let len = u32::from_be_bytes(r[..4].try_into().unwrap()) as usize;
        let body = &r[4..4 + len];
        r = &r[4 + len..];
        if body[0] == KIND_OUTPUT {
            counted += u64::from_be_bytes(body[5..13].try_into().unwrap()) + (len - 13) as u64;
        } else {
            at_exit = Some(counted);
        }
    }
    // (Drops are counted in bulk: some bytes pushed after the exit may be among them.)
    let at_exit = at_exit.unwrap();
    assert!(
        at_exit >= before as u64,
        "{at_exit} of the {before} bytes before the exit"
    );
    assert_eq!(counted, (before + after / 4096 * 4096) as u64);
}
