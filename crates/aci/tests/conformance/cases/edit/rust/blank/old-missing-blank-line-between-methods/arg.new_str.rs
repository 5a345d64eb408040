    }

    /// host:port, as the listener binds it.
    pub fn address(&self) -> String {
