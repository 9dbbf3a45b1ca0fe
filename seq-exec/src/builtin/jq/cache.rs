//! Compiled filters kept by their text, so that a filter run again (a run's `each` item, the
//! same step of many runs) is compiled once. Bounded: at most [`ENTRIES`] filters, none longer
//! than [`MAX_TEXT`] bytes, the least recently used one dropped for a new one, so distinct
//! filters, however many, never grow it. Only what compiles is kept; a filter's evaluation
//! never touches the cache, so its bounds are those of an uncached one.

use seq_catalog::jq::Filter;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

/// How many compiled filters are kept. Each holds its own copy of the compiled library.
pub(super) const ENTRIES: usize = 32;
/// Longer filters are compiled for every call, not kept.
pub(super) const MAX_TEXT: usize = 4096;

/// The filters kept, each with the tick of its last use.
struct Cache<F> {
    entries: HashMap<String, (Arc<F>, u64)>,
    tick: u64,
}

impl<F> Cache<F> {
    fn new() -> Self {
        Cache {
            entries: HashMap::with_capacity(ENTRIES + 1),
            tick: 0,
        }
    }

    fn get(&mut self, text: &str) -> Option<Arc<F>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(text).map(|(filter, used)| {
            *used = tick;
            Arc::clone(filter)
        })
    }

    fn insert(&mut self, text: &str, filter: Arc<F>) {
        self.tick += 1;
        if !self.entries.contains_key(text) && self.entries.len() >= ENTRIES {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(text, _)| text.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(text.to_owned(), (filter, self.tick));
    }
}

/// The filters of the engine's data kind, for every call in the process.
static FILTERS: LazyLock<Mutex<Cache<Filter<super::Bounded>>>> =
    LazyLock::new(|| Mutex::new(Cache::new()));

/// `text` compiled, from the cache or by `compile` (outside the lock, so calls compiling
/// different filters do not wait for each other).
pub(super) fn compiled<E>(
    text: &str,
    compile: impl FnOnce(&str) -> Result<Filter<super::Bounded>, E>,
) -> Result<Arc<Filter<super::Bounded>>, E> {
    let lock = || FILTERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(filter) = lock().get(text) {
        return Ok(filter);
    }
    let filter = Arc::new(compile(text)?);
    if text.len() <= MAX_TEXT {
        lock().insert(text, Arc::clone(&filter));
    }
    Ok(filter)
}

/// How many filters are kept now (tests).
#[cfg(test)]
pub(super) fn len() -> usize {
    FILTERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entries
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_filter_goes_first() {
        let mut cache = Cache::new();
        for i in 0..ENTRIES {
            cache.insert(&format!("f{i}"), Arc::new(i));
        }
        // `f0` used again: `f1` is now the oldest.
        assert!(cache.get("f0").is_some());
        cache.insert("new", Arc::new(0));
        assert_eq!(cache.entries.len(), ENTRIES);
        assert!(cache.get("f0").is_some());
        assert!(cache.get("f1").is_none());
        assert!(cache.get("new").is_some());
    }

    #[test]
    fn distinct_filters_never_grow_it_past_its_bound() {
        for i in 0..ENTRIES * 3 {
            let text = format!(". + {i}");
            let filter = compiled(&text, seq_catalog::jq::compile::<super::super::Bounded>);
            assert!(filter.is_ok());
        }
        assert!(len() <= ENTRIES);
        let long = format!(". + {}", "1".repeat(MAX_TEXT));
        let before = len();
        assert!(compiled(&long, seq_catalog::jq::compile::<super::super::Bounded>).is_ok());
        assert!(len() <= before.max(ENTRIES));
        let kept = FILTERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .contains_key(&long);
        assert!(!kept, "a filter past the text bound is not kept");
    }
}
