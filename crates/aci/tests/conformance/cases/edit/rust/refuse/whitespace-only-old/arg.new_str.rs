    pub debug: bool,
