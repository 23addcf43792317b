//! Windows: no signals, but Node numbers a few names there (`os.constants.signals`), and a
//! terminal ended by kill, timeout or release reports `SIGTERM` or `SIGKILL` as Node's
//! child_process does.

/// The name Node gives signal number `signo` on Windows; any other as `SIG<n>`.
pub fn name(signo: i32) -> String {
    let name = match signo {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        21 => "SIGBREAK",
        22 => "SIGABRT",
        28 => "SIGWINCH",
        _ => return format!("SIG{signo}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_node_s_numbers_on_windows() {
        assert_eq!(name(15), "SIGTERM");
        assert_eq!(name(9), "SIGKILL");
        assert_eq!(name(21), "SIGBREAK");
        assert_eq!(name(200), "SIG200");
    }
}
