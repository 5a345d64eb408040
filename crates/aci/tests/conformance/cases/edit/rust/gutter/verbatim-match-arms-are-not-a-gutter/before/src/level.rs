/// How loud a log level is, for the status line.
pub fn describe(level: u8) -> &'static str {
    match level {
        0 => "off",
        1|2 => "low",
        3|4 => "medium",
        _ => "high",
    }
}
