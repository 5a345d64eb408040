use std::collections::HashMap;

/// A tiny in-memory key/value cache with hit counting.
pub struct Cache {
    entries: HashMap<String, String>,
    hits: u64,
    misses: u64,
}

impl Cache {
    pub fn new() -> Self {
        Cache {
            entries: HashMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    pub fn get(&mut self, key: &str) -> Option<&String> {
        match self.entries.get(key) {
            Some(v) => {
                self.hits += 1;
                Some(v)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.entries.insert(key.into(), value.into());
    }

    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        self.hits as f64 / total as f64
    }
}
