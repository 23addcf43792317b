//! The live terminals of one Node environment (the main thread or one worker), so that all of
//! them can be killed when that environment goes away, and only them. Also issues terminal ids.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::terminal::Terminal;

/// Live terminals of one environment, by id.
#[derive(Default)]
pub struct Registry {
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    terms: HashMap<String, Weak<Terminal>>,
    /// The environment went away ([`Registry::abandon_all`]): a terminal whose start finishes
    /// later is killed as it is recorded.
    closed: bool,
}

impl Registry {
    /// A new, empty registry.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a terminal; if the environment already went away (a start that finished after
    /// a worker's termination began), kills it instead and says false.
    pub fn insert(&self, term: &Arc<Terminal>) -> bool {
        let mut live = self.lock();
        if live.closed {
            drop(live);
            term.abandon();
            return false;
        }
        if live.terms.len() >= 64 && live.terms.len().is_power_of_two() {
            live.terms.retain(|_, w| w.strong_count() > 0);
        }
        live.terms
            .insert(term.id().to_string(), Arc::downgrade(term));
        true
    }

    /// Forgets a terminal (released or dropped).
    pub fn remove(&self, id: &str) {
        self.lock().terms.remove(id);
    }

    /// Kills every terminal of this environment at once (SIGKILL to each group), and every
    /// terminal recorded later: the environment is gone.
    pub fn abandon_all(&self) -> usize {
        let terms: Vec<Arc<Terminal>> = {
            let mut live = self.lock();
            live.closed = true;
            live.terms
                .drain()
                .filter_map(|(_, w)| w.upgrade())
                .collect()
        };
        for t in &terms {
            t.abandon();
        }
        terms.len()
    }
}

/// A new terminal id, unique within this process and unlikely to repeat across processes.
pub fn next_id() -> String {
    static SALT: OnceLock<u32> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let salt = SALT.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
            .unwrap_or(0);
        nanos ^ std::process::id().rotate_left(16)
    });
    format!(
        "term_{salt:08x}_{}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| next_id()).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(next_id().starts_with("term_"));
    }
}
