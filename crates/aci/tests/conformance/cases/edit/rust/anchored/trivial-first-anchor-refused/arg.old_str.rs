    }
        let retries = match vars.get("RETRIES") {
            Some(r) => r.parse::<u32>().map_err(|e| format!("bad retries: {e}"))?,
        };
