        let port = match vars.get("APP_PORT") {  
            Some(p) => p.parse::<u16>().map_err(|e| format!("bad port: {e}"))?,  
            None => 80,  
