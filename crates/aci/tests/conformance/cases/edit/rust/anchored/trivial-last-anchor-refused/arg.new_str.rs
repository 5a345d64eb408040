        Ok(Settings {
            host,
            port: port,
            retries,
            labels: HashMap::from([("env".into(), "prod".into())]),
        })
