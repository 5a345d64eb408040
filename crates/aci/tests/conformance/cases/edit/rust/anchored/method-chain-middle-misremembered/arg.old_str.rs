        let host = vars
            .get("HOST")
            .cloned()
            .unwrap_or_else(|| "127.0.0.1".to_string());
