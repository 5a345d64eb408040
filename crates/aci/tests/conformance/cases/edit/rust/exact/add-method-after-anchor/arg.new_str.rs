    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn is_local(&self) -> bool {
        self.host == "127.0.0.1" || self.host == "localhost"
    }
