        0 => "none",
