use double::double;

#[test]
fn doubles() {
    assert_eq!(double(21), 42);
}
