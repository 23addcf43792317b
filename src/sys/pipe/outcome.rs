//! What one read of a command's output found (the same on every platform).

/// What reading a command's output (`OutputReader`) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Nothing more to read for now.
    Drained,
    /// The read budget was used up; more may be waiting.
    More,
    /// Every writer closed it: the output is complete.
    Eof,
}
