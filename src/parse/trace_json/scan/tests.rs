use super::*;

#[test]
fn value_end_handles_nesting_strings_and_escapes() {
    let b = br#"{"a":"x}\"]","b":[1,{"c":2}]} rest"#;
    assert_eq!(value_end(b, 0, false), End::At(29));
    assert_eq!(value_end(br#"{"a":"#, 0, false), End::Incomplete);
    assert_eq!(value_end(b"12.5,", 0, false), End::At(4));
    assert_eq!(value_end(b"12.5", 0, false), End::Incomplete);
    assert_eq!(value_end(b"12.5", 0, true), End::At(4));
    assert_eq!(value_end(b"]", 0, true), End::Invalid);
    assert_eq!(value_end(br#""ab\"#, 0, false), End::Incomplete);
}

/// The fast paths give exactly what the general parsers give, and step aside elsewhere.
#[test]
fn fast_paths_equal_the_general_parsers() {
    let texts = [
        "0",
        "7",
        "12.5",
        "1008.265",
        "\"1736408883688177.930\"",
        "9223372036854775.807",
        "9223372036854775.808",
        "9999999999999999.999",
        "18446744073709551.615",
        "1.",
        ".5",
        "1.2345",
        "-3.5",
        "+4",
        "1e3",
        "\"12\"",
        "\" 12\"",
        "\"\"",
        "\"",
        "0001.000",
        "12a",
        "1.2.3",
        "99999999999999999999",
        "-0",
        "-",
        "123456789012345678",
        "1234567890123456789",
        "-999999999999999999",
        "7.0",
        "\"-12\"",
        "1.5\t",
    ];
    for t in texts {
        let raw = t.as_bytes();
        let slow = decimal_text(raw).and_then(|d| parse_time_ns(d).ok());
        assert_eq!(time_ns(raw), slow, "{t}");
        if let Some(v) = int_fast(raw) {
            assert_eq!(
                Some(v),
                decimal_text(raw).and_then(|d| d.trim().parse().ok()),
                "{t}"
            );
        }
    }
    assert_eq!(int_fast(b"\"42\""), Some(42));
    assert_eq!(int_fast(b"1234567890123456789"), None);
    for inner in [
        &b"aten::mm"[..],
        b"",
        b"void at::native::vectorized_elementwise_kernel<4>(int)",
        b"tab\there",
        b"back\\slash",
        b"0123456789abcdef\x7f",
        b"caf\xc3\xa9",
        b"\xff",
        b"01234567\n",
    ] {
        let mut raw = vec![b'"'];
        raw.extend_from_slice(inner);
        raw.push(b'"');
        if let Some(text) = plain_text(inner) {
            assert_eq!(text.as_bytes(), inner);
        }
        let (text, flaws) = decode_str(&raw).unwrap();
        let plain = plain_text(inner).is_some();
        assert_eq!(
            plain,
            inner
                .iter()
                .all(|&c| (0x20..0x80).contains(&c) && c != b'\\')
        );
        if plain {
            assert!(flaws.is_clean() && matches!(text, Cow::Borrowed(_)));
        }
    }
}

#[test]
fn fields_reads_top_level_keys_only() {
    let ev = br#"{"ph":"X","args":{"cat":"inner","name":"no"},"name":"aten::add","cat":"cpu_op","ts":"1736408883688177.930","dur":1.5}"#;
    let [cat, ph, name, ts, missing] = fields(ev, ["cat", "ph", "name", "ts", "id"]).unwrap();
    assert_eq!(as_str(cat.unwrap()).unwrap(), "cpu_op");
    assert_eq!(as_str(ph.unwrap()).unwrap(), "X");
    assert_eq!(as_str(name.unwrap()).unwrap(), "aten::add");
    assert_eq!(time_ns(ts.unwrap()).unwrap().ns, 1_736_408_883_688_177_930);
    assert_eq!(missing, None);
    assert_eq!(time_ns(b"12.5").unwrap().ns, 12_500);
    assert_eq!(as_str(br#""a\nb""#).unwrap(), "a\nb");
    assert!(fields(b"[1]", ["a"]).is_none());
    assert!(fields(br#"{"b":1"#, ["a"]).is_none());
}

/// Each flaw of a string is located at its offending byte (index in the raw string, quotes
/// included): the first byte that is not UTF-8, the first raw control byte, the `\` of the
/// first invalid escape or lone surrogate; the earliest of each kind wins.
#[test]
fn decode_str_locates_the_offending_byte() {
    let cases: [(&[u8], Option<usize>, Option<usize>); 9] = [
        (b"\"abc\"", None, None),
        (b"\"ab\x01c\"", None, Some(3)),
        (b"\"caf\xc3\xa9 \xff\"", Some(7), None),
        (b"\"x\\n\xff\"", Some(4), None),
        (b"\"x\\q\x02\"", None, Some(2)),
        (b"\"x\x02\\q\"", None, Some(2)),
        (b"\"ab\\ud800z\"", Some(3), None),
        (b"\"\xe2\x82\\ud800\x01\"", Some(1), Some(9)),
        (b"\"ok\\u12\"", None, Some(3)),
    ];
    for (raw, utf8, json) in cases {
        let (_, f) = decode_str(raw).unwrap();
        let got = (
            f.invalid_utf8.then_some(f.utf8_at),
            f.invalid_json.then_some(f.json_at),
        );
        assert_eq!(got, (utf8, json), "{}", String::from_utf8_lossy(raw));
    }
}

/// Dropping the scanned bytes and going on with [`ValueScan::resume_dropped`] finds the same
/// end as scanning the whole value, wherever the bytes were dropped.
#[test]
fn resume_dropped_finds_the_same_end() {
    for v in [
        &br#"{"a":"x}\"]","b":[1,{"c":"\\"}]} rest"#[..],
        br#"["]",{"a":[[]]},"\\\"["] ,"#,
        br#""ab\"c}" x"#,
        br#"{"k":[1,{"a":"}"}],"k":[1,{"a":"}"}]}"#,
    ] {
        let End::At(want) = value_end(v, 0, false) else {
            panic!("{v:?}")
        };
        for cut in 1..want {
            let mut s = ValueScan::default();
            assert_eq!(s.resume(&v[..cut], false), End::Incomplete);
            let got = match s.resume_dropped(v[0], &v[cut..]) {
                End::At(k) => cut + k,
                other => panic!("{other:?} at cut {cut}"),
            };
            assert_eq!((got, s.scanned()), (want, want), "cut {cut}");
        }
    }
}
