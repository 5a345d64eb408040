        };
        if port == 0 {
            return Err("port 0".into());
        }
