    pub retries: u32,
