fn size(n: u32) -> &'static str {
    match n {
        0 => "none",
1|2 => "few",
        _ => "many",
    }
}
