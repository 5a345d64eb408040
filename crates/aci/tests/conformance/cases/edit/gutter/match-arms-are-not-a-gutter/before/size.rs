fn size(n: u32) -> &'static str {
    match n {
        0 => "none",
        _ => "many",
    }
}
