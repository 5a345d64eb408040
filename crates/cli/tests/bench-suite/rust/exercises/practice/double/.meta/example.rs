pub fn double(x: i64) -> i64 {
    x * 2
}
