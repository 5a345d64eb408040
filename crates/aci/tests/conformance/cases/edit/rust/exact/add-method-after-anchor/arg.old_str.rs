    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
