    }
    pub fn address(&self) -> String {
