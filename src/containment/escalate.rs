//! TERM -> grace -> KILL, once, for every kind of [`Target`].

use std::future::Future;
use std::time::Duration;

use crate::sys::signals::Stop;
use tokio::time::Instant;

use super::Target;

/// How often a target is re-checked during the grace period once its leader is gone.
pub const GROUP_POLL: Duration = Duration::from_millis(10);

/// Terminates `target`: SIGTERM and SIGCONT to all of it; then waits for `leader_exit` (the
/// main process's reaping, when there is one: an event, not a poll) and for everything else to
/// go, until `grace` has passed; SIGKILL to whatever still runs then. Returns true when SIGKILL
/// was needed. A target with nothing alive is left alone (returns false at once).
pub async fn escalate<T, F>(target: &T, grace: Duration, leader_exit: F) -> bool
where
    T: Target + ?Sized,
    F: Future<Output = ()>,
{
    if !target.alive() {
        return false;
    }
    target.signal(Stop::Term);
    // A stopped process only acts on SIGTERM once continued.
    target.signal(Stop::Continue);
    let deadline = Instant::now() + grace;
    if tokio::time::timeout_at(deadline, leader_exit).await.is_ok() {
        // The leader is gone; give descendants that trap SIGTERM the rest of the grace.
        while target.alive() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            tokio::time::sleep(GROUP_POLL.min(deadline - now)).await;
        }
        if !target.alive() {
            return false;
        }
    }
    target.signal(Stop::Kill);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A target that dies after `dies_after` signals of a given kind, recording every signal.
    struct Fake {
        sent: Mutex<Vec<Stop>>,
        /// Signals that end it.
        fatal: Vec<Stop>,
    }

    impl Fake {
        fn new(fatal: &[Stop]) -> Self {
            Self {
                sent: Mutex::new(Vec::new()),
                fatal: fatal.to_vec(),
            }
        }
        fn sent(&self) -> Vec<Stop> {
            self.sent.lock().unwrap().clone()
        }
    }

    impl Target for Fake {
        fn signal(&self, sig: Stop) {
            self.sent.lock().unwrap().push(sig);
        }
        fn alive(&self) -> bool {
            !self.sent().iter().any(|s| self.fatal.contains(s))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn term_is_enough_for_a_well_behaved_target() {
        let t = Fake::new(&[Stop::Term, Stop::Kill]);
        let start = Instant::now();
        assert!(!escalate(&t, Duration::from_secs(2), async {}).await);
        assert_eq!(t.sent(), vec![Stop::Term, Stop::Continue]);
        assert!(Instant::now() - start < Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_target_that_ignores_term_gets_kill_after_the_grace() {
        let t = Fake::new(&[Stop::Kill]);
        let start = Instant::now();
        assert!(escalate(&t, Duration::from_millis(500), async {}).await);
        assert_eq!(t.sent(), vec![Stop::Term, Stop::Continue, Stop::Kill]);
        assert_eq!(Instant::now() - start, Duration::from_millis(500));
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_that_never_exits_is_killed_at_the_deadline() {
        let t = Fake::new(&[Stop::Kill]);
        let start = Instant::now();
        assert!(escalate(&t, Duration::from_secs(3), std::future::pending()).await);
        assert_eq!(Instant::now() - start, Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_alive_means_no_signal() {
        let dead = Fake::new(&[Stop::Kill]);
        dead.signal(Stop::Kill);
        assert!(!escalate(&dead, Duration::from_secs(1), async {}).await);
        assert_eq!(dead.sent(), vec![Stop::Kill]);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_grace_kills_at_once() {
        let t = Fake::new(&[Stop::Kill]);
        assert!(escalate(&t, Duration::ZERO, std::future::pending()).await);
        assert_eq!(t.sent(), vec![Stop::Term, Stop::Continue, Stop::Kill]);
    }
}
