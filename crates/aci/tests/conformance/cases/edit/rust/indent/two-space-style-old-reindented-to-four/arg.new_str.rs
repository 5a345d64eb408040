  pub fn address(&self) -> String {
    let host = self.host.trim();
    format!("{}:{}", host, self.port)
  }
