        1|2 => "low",
        3|4 => "medium",
