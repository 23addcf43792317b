//! macOS has no real-time signals: every signal number it defines has a POSIX name.

pub(super) fn realtime_name(_signo: i32) -> Option<String> {
    None
}
