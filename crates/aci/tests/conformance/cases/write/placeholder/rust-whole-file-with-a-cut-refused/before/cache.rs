use std::collections::HashMap;

pub struct Cache {
    map: HashMap<String, String>,
    hits: u64,
}

impl Cache {
    pub fn new() -> Cache {
        Cache {
            map: HashMap::new(),
            hits: 0,
        }
    }

    pub fn get(&mut self, key: &str) -> Option<&String> {
        let found = self.map.get(key);
        if found.is_some() {
            self.hits += 1;
        }
        found
    }

    pub fn put(&mut self, key: String, value: String) {
        self.map.insert(key, value);
    }
}
