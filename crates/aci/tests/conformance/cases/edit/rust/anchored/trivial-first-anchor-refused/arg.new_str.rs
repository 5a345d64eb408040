        let retries = 5;
