//! The server protocol's framing. The server first prints a banner line
//! ([`banner`]: `\x1eACP-TERMINAL-SERVER/<protocol> <version>\n`), which a client finds past
//! whatever a login shell printed before it; frames follow in both directions:
//!
//! | bytes | content |
//! |---|---|
//! | 4 | length of what follows (big-endian), at least 1 |
//! | 1 | kind: [`KIND_JSON`], [`KIND_OUTPUT`] (server -> client), [`KIND_INPUT`] (client -> server) |
//! | rest | JSON text; output: sub (u32) + bytes dropped before (u64) + data; input: request id (u32) + terminal (u32) + data |
//!
//! Invariant: a frame the server cannot use (too long, unknown kind, too short) is consumed
//! whole and reported, so the stream stays in step and the connection usable.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The protocol version the banner announces; a client speaking another one reinstalls (2:
/// `hello {graceMs, replayBytes}`, reattach with `resume`, `shutdown`).
pub const PROTOCOL: u32 = 2;
/// What the banner line starts with (after any noise).
pub const BANNER_PREFIX: &str = "\x1eACP-TERMINAL-SERVER/";
/// Longest frame the server accepts (the length field's value).
pub const MAX_FRAME: usize = 16 << 20;
/// A JSON message (request, response, event).
pub const KIND_JSON: u8 = 1;
/// Output bytes of one subscription (server -> client).
pub const KIND_OUTPUT: u8 = 2;
/// Input bytes for one terminal (client -> server), the binary form of `write`.
pub const KIND_INPUT: u8 = 3;

/// The banner line: protocol and server version.
pub fn banner() -> String {
    format!("{BANNER_PREFIX}{PROTOCOL} {}\n", env!("CARGO_PKG_VERSION"))
}

/// A frame read from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// JSON text.
    Json(Vec<u8>),
    /// Input for terminal `term`, answered as request `id`.
    Input { id: u32, term: u32, data: Vec<u8> },
}

/// A frame that was read whole but cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Its length was over [`MAX_FRAME`] (its bytes were skipped).
    TooLarge(usize),
    /// Empty, an unknown kind, or too short for its kind.
    Malformed(String),
}

/// Reads the next frame; `Ok(None)` at the end of the stream (a partial frame there is the
/// end too: the client is gone).
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Option<Result<Frame, FrameError>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > max {
        let skipped = tokio::io::copy(&mut r.take(len as u64), &mut tokio::io::sink()).await?;
        if skipped < len as u64 {
            return Ok(None);
        }
        return Ok(Some(Err(FrameError::TooLarge(len))));
    }
    let mut body = vec![0u8; len];
    match r.read_exact(&mut body).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    Ok(Some(decode(body)))
}

fn decode(mut body: Vec<u8>) -> Result<Frame, FrameError> {
    match body.first().copied() {
        None => Err(FrameError::Malformed(
            "an empty frame (no kind byte)".into(),
        )),
        Some(KIND_JSON) => {
            body.remove(0);
            Ok(Frame::Json(body))
        }
        Some(KIND_INPUT) if body.len() >= 9 => {
            let id = u32::from_be_bytes(body[1..5].try_into().unwrap());
            let term = u32::from_be_bytes(body[5..9].try_into().unwrap());
            Ok(Frame::Input {
                id,
                term,
                data: body.split_off(9),
            })
        }
        Some(KIND_INPUT) => Err(FrameError::Malformed(format!(
            "an input frame of {} bytes (at least 9: kind, id, terminal)",
            body.len()
        ))),
        Some(k) => Err(FrameError::Malformed(format!("unknown frame kind {k}"))),
    }
}

/// A JSON frame.
pub fn json_frame(v: &serde_json::Value) -> Vec<u8> {
    let text = serde_json::to_vec(v).expect("a JSON value serializes");
    let mut f = Vec::with_capacity(5 + text.len());
    f.extend_from_slice(&((text.len() + 1) as u32).to_be_bytes());
    f.push(KIND_JSON);
    f.extend_from_slice(&text);
    f
}

/// An output frame of subscription `sub`, `dropped` bytes lost before `data`.
#[cfg(test)]
pub fn output_frame(sub: u32, dropped: u64, data: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(17 + data.len());
    push_output_frame(&mut f, sub, dropped, data);
    f
}

/// Appends an output frame to `out` (no intermediate copy of `data`).
pub fn push_output_frame(out: &mut Vec<u8>, sub: u32, dropped: u64, data: &[u8]) {
    out.reserve(17 + data.len());
    out.extend_from_slice(&((13 + data.len()) as u32).to_be_bytes());
    out.push(KIND_OUTPUT);
    out.extend_from_slice(&sub.to_be_bytes());
    out.extend_from_slice(&dropped.to_be_bytes());
    out.extend_from_slice(data);
}

/// An input frame (what a client sends; used by the tests).
#[cfg(test)]
pub fn input_frame(id: u32, term: u32, data: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(13 + data.len());
    f.extend_from_slice(&((9 + data.len()) as u32).to_be_bytes());
    f.push(KIND_INPUT);
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&term.to_be_bytes());
    f.extend_from_slice(data);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8], max: usize) -> Vec<Result<Frame, FrameError>> {
        let mut r = bytes;
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r, max).await.unwrap() {
            out.push(f);
        }
        out
    }

    #[tokio::test]
    async fn frames_round_trip_in_order() {
        let mut bytes = json_frame(&serde_json::json!({"id": 1}));
        bytes.extend(input_frame(7, 3, b"abc"));
        let frames = read_all(&bytes, MAX_FRAME).await;
        assert_eq!(
            frames,
            vec![
                Ok(Frame::Json(br#"{"id":1}"#.to_vec())),
                Ok(Frame::Input {
                    id: 7,
                    term: 3,
                    data: b"abc".to_vec()
                })
            ]
        );
    }

    #[tokio::test]
    async fn a_frame_over_the_bound_is_skipped_and_the_next_one_read() {
        let big = json_frame(&serde_json::json!({"pad": "x".repeat(100)}));
        let mut bytes = big.clone();
        bytes.extend(json_frame(&serde_json::json!(2)));
        let frames = read_all(&bytes, 50).await;
        assert_eq!(frames[0], Err(FrameError::TooLarge(big.len() - 4)));
        assert_eq!(frames[1], Ok(Frame::Json(b"2".to_vec())));
        assert_eq!(frames.len(), 2);
    }

    #[tokio::test]
    async fn malformed_frames_are_reported_and_the_stream_stays_in_step() {
        let mut bytes = vec![0, 0, 0, 0]; // empty
        bytes.extend([0, 0, 0, 2, 9, 9]); // unknown kind
        bytes.extend([0, 0, 0, 3, KIND_INPUT, 0, 0]); // input too short
        bytes.extend(json_frame(&serde_json::json!(true)));
        let frames = read_all(&bytes, MAX_FRAME).await;
        assert!(matches!(frames[0], Err(FrameError::Malformed(_))));
        assert!(matches!(frames[1], Err(FrameError::Malformed(_))));
        assert!(matches!(frames[2], Err(FrameError::Malformed(_))));
        assert_eq!(frames[3], Ok(Frame::Json(b"true".to_vec())));
    }

    #[tokio::test]
    async fn a_partial_frame_at_the_end_is_the_end() {
        let f = json_frame(&serde_json::json!({"id": 1}));
        assert!(read_all(&f[..f.len() - 1], MAX_FRAME).await.is_empty());
        assert!(read_all(&f[..2], MAX_FRAME).await.is_empty());
    }

    #[test]
    fn output_frames_carry_sub_dropped_and_data() {
        let f = output_frame(5, 9, b"hi");
        assert_eq!(
            u32::from_be_bytes(f[0..4].try_into().unwrap()) as usize,
            f.len() - 4
        );
        assert_eq!(f[4], KIND_OUTPUT);
        assert_eq!(&f[5..9], &5u32.to_be_bytes());
        assert_eq!(&f[9..17], &9u64.to_be_bytes());
        assert_eq!(&f[17..], b"hi");
        assert!(banner().starts_with(BANNER_PREFIX) && banner().ends_with('\n'));
    }
}
