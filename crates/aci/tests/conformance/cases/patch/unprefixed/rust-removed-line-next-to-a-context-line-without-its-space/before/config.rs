impl Config {
    pub fn port(&self) -> u16 {
        match self.port {
            Some(p) => p,
            None => 8080,
        }
    }
}
