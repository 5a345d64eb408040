        let host = vars
            .get("APP_HOST")
            .cloned()
            .unwrap_or_else(|| "0.0.0.0".to_string());
