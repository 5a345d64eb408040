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

    // ...

    pub fn put(&mut self, key: String, value: String) {
        self.map.insert(key.to_lowercase(), value);
    }
}
