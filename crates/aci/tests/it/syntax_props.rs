//! The incremental syntax check must agree with a full parse for any edit: a wrong tree
//! edit would let a breaking change through or revert a good one.

use proptest::prelude::*;
use slmcode_aci::path::RelPath;
use slmcode_aci::syntax::{check, TreeCache};

fn source() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("fn a() { let x = 1; }\n"),
            Just("struct S { f: u8 }\n"),
            Just("impl S {\n    fn g(&self) -> u8 { self.f }\n}\n"),
            Just("// é comment\n"),
            Just("\n"),
            Just("let s = \"str(\";\n"),
        ],
        1..12,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn incremental_agrees_with_full(
        before in source(),
        at in any::<prop::sample::Index>(),
        cut in 0usize..12,
        insert in prop_oneof![Just(""), Just("("), Just("}"), Just("fn b() {}\n"), Just("\""), Just("é")],
    ) {
        let path = RelPath::parse("x.rs", std::path::Path::new("/p")).unwrap();
        let mut start = at.index(before.len() + 1);
        while !before.is_char_boundary(start) { start -= 1; }
        let mut end = (start + cut).min(before.len());
        while !before.is_char_boundary(end) { end += 1; }
        let after = format!("{}{}{}", &before[..start], insert, &before[end..]);
        let cache = TreeCache::default();
        // Warm the cache with the before tree, as a ws_read does.
        cache.check_change(&path, None, before.as_bytes());
        let (incremental, was) = cache.check_change(&path, Some(before.as_bytes()), after.as_bytes());
        prop_assert_eq!(&incremental, &check(&path, after.as_bytes()), "after {:?}", after);
        if let Some(was) = was {
            prop_assert_eq!(was, check(&path, before.as_bytes()));
        }
        // And a second edit from the cached result.
        let (again, _) = cache.check_change(&path, Some(after.as_bytes()), before.as_bytes());
        prop_assert_eq!(again, check(&path, before.as_bytes()));
    }
}
