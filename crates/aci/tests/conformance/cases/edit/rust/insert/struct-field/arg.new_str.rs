    pub retries: u32,
    pub timeout_secs: u64,
