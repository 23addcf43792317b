//! Unix: `bash`, which the session's start looks up in its `PATH`.

use super::NotFound;

/// The program a session runs: `bash`, resolved in `PATH` when the session starts.
pub fn session_bash() -> Result<String, NotFound> {
    Ok("bash".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_runs_bash_from_path() {
        assert_eq!(session_bash(), Ok("bash".to_string()));
    }
}
