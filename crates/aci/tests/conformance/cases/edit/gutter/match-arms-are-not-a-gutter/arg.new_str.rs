        0 => "none",
1|2 => "few",
