use super::*;

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

#[test]
fn prefix_is_zero_copy() {
    let name = n("/a/bb/ccc");
    let p = name.prefix(2);
    assert_eq!(p, n("/a/bb"));
    assert_eq!(p.value().as_ptr(), name.value().as_ptr());
    assert_eq!(name.prefix_value_len(1), 3);
    assert_eq!(name.prefix(10), name);
    assert!(p.is_prefix_of(&name) && !name.is_prefix_of(&p));
    assert!(Name::root().is_prefix_of(&name));
    // A byte prefix that is not a component prefix is not a name prefix.
    assert!(!n("/a/b").is_prefix_of(&n("/a/bb")));
}

#[test]
fn rejects_invalid_components() {
    let bad_type0 = Bytes::from_static(&[0x00, 0x01, 0x61]);
    assert_eq!(
        Name::from_value(bad_type0),
        Err(TlvError::TypeOutOfRange(0))
    );
    let too_big = Bytes::from_static(&[0xFE, 0x00, 0x01, 0x00, 0x00, 0x00]);
    assert_eq!(
        Name::from_value(too_big),
        Err(TlvError::TypeOutOfRange(65536))
    );
    let short_digest = Bytes::from_static(&[0x01, 0x01, 0x00]);
    assert_eq!(
        Name::from_value(short_digest),
        Err(TlvError::InvalidValue(1))
    );
    assert!(Component::new(2, vec![0u8; 31]).is_err());
    assert!(Name::decode(Bytes::from_static(&[0x08, 0x00])).is_err());
}

#[test]
fn canonical_order_examples() {
    let mut v = [
        n("/b"),
        n("/aa"),
        n("/a/b"),
        n("/a"),
        n("/"),
        n("/sha256digest=0000000000000000000000000000000000000000000000000000000000000000"),
        n("/seg=1"),
    ];
    v.sort();
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        s,
        [
            "/",
            "/sha256digest=0000000000000000000000000000000000000000000000000000000000000000",
            "/a",
            "/a/b",
            "/b",
            "/aa",
            "/seg=1"
        ]
    );
}

#[test]
fn accessors() {
    let name = n("/x/v=7/seg=3/t=9/seq=2/off=5");
    assert_eq!(name.get(1).unwrap().as_version(), Some(7));
    assert_eq!(name.get(2).unwrap().as_segment(), Some(3));
    assert_eq!(name.get(3).unwrap().as_timestamp(), Some(9));
    assert_eq!(name.get(4).unwrap().as_sequence_num(), Some(2));
    assert_eq!(name.last().unwrap().as_byte_offset(), Some(5));
    assert_eq!(name.get(0).unwrap().as_segment(), None);
    assert_eq!(name.get(6), None);
    let appended = name.append(Component::keyword("k"));
    assert_eq!(appended.len(), 7);
    assert_eq!(appended.prefix(6), name);
}

/// A Name TLV-VALUE of `comps` (type, length) components, the value of
/// each `length` bytes of `fill`; `cut` bytes dropped from the end.
fn encode_raw(comps: &[(u32, usize)], cut: usize) -> Bytes {
    let mut out = BytesMut::new();
    for &(typ, len) in comps {
        write_header(&mut out, typ, len);
        out.put_slice(&vec![0x61; len]);
    }
    let keep = out.len().saturating_sub(cut);
    out.truncate(keep);
    out.freeze()
}

proptest::proptest! {
    /// The one-octet fast walk decides exactly as the general parse: the
    /// same count, the same bytes, the same error, on valid and invalid
    /// names alike (type 0, digest lengths, truncation, long headers).
    #[test]
    fn fast_walk_agrees_with_the_general_parse(
        comps in proptest::collection::vec(
            (
                proptest::prop_oneof![0u32..4, 4u32..40, 250u32..260, 65_530u32..65_540],
                proptest::prop_oneof![0usize..40, 30usize..34, 250usize..300],
            ),
            0..12,
        ),
        cut in proptest::prop_oneof![proptest::strategy::Just(0usize), 0usize..5],
    ) {
        let v = encode_raw(&comps, cut);
        let fast = Name::from_value(v.clone());
        let general = Name::from_value_general(v.clone());
        proptest::prop_assert_eq!(fast.is_ok(), general.is_ok());
        if let (Ok(a), Ok(b)) = (&fast, &general) {
            proptest::prop_assert_eq!(a.len(), b.len());
            proptest::prop_assert_eq!(a.value(), b.value());
        }
        let mut ends = Vec::new();
        if let Some(n) = short_components(&v, |e| ends.push(e)) {
            let b = general.as_ref().unwrap();
            proptest::prop_assert_eq!(n, b.len());
            proptest::prop_assert_eq!(ends.last().copied().unwrap_or(0), v.len());
        }
    }
}
