        Ok(Settings {
            host,
            port: port,
            retries,
            labels: HashMap::new(),
        })
