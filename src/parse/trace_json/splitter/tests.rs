use super::*;
use crate::parse::trace_json::diag::TraceDiagnostics;

fn run(text: &[u8], chunk: usize) -> Result<(Vec<(String, u64)>, TraceScan), ParseError> {
    let mut rdr = ChunkReader::with_sizes(text, Some(text.len() as u64), chunk, 1 << 20);
    let mut events = Vec::new();
    let file: Arc<str> = "t.json".into();
    let scan = for_each_event(
        &mut rdr,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |ev, at| {
            events.push((String::from_utf8(ev.to_vec()).unwrap(), at));
            ControlFlow::Continue(())
        },
    )?;
    Ok((events, scan))
}

#[test]
fn bare_array_at_every_chunk_size() {
    let text = br#" [{"a":1}, {"b":"x]}"} ,{"c":[{"d":2}]} ]"#;
    for chunk in 1..text.len() + 2 {
        let (ev, scan) = run(text, chunk).unwrap();
        assert_eq!(ev.len(), 3, "chunk {chunk}");
        assert_eq!(ev[1], (r#"{"b":"x]}"}"#.to_string(), 11));
        assert_eq!(ev[2].0, r#"{"c":[{"d":2}]}"#);
        assert!(!scan.wrapped);
        assert_eq!(scan.truncated_at, None);
    }
}

#[test]
fn wrapper_object_skips_other_members() {
    let text = br#"{"otherData":{"x":[1,2,{"y":"]"}]},"displayTimeUnit":"ns","traceEvents":[{"a":1},{"b":2}],"z":1}"#;
    for chunk in [1, 3, 7, 64] {
        let (ev, scan) = run(text, chunk).unwrap();
        assert_eq!(ev.len(), 2);
        assert!(scan.wrapped);
    }
    let (ev, scan) = run(br#"{"a":1}"#, 2).unwrap();
    assert!(ev.is_empty() && scan.no_trace_events);
}

#[test]
fn truncation_reports_the_end_of_file_the_cut_event_and_the_last_event() {
    let text = br#"[{"a":1},{"b":2},{"c":"#;
    for chunk in [1, 4, 64] {
        let (ev, scan) = run(text, chunk).unwrap();
        assert_eq!(ev.len(), 2);
        assert_eq!(scan.truncated_at, Some(22));
        assert_eq!(scan.cut_event_at, Some(17));
        assert_eq!(scan.last_event_end, Some(16));
    }
    let (ev, scan) = run(br#"[{"a":1},"#, 3).unwrap();
    assert_eq!((ev.len(), scan.truncated_at), (1, Some(9)));
    assert_eq!((scan.cut_event_at, scan.last_event_end), (None, Some(8)));
}

#[test]
fn errors_have_offsets() {
    let e = run(b"  \n ", 2).err().unwrap();
    assert_eq!(e.kind(), &ParseErrorKind::Empty);
    let e = run(b"PK\x03\x04", 2).err().unwrap();
    assert_eq!(
        e.to_string(),
        "t.json (byte 0): expected `[` or `{` at the start of a trace"
    );
    // Garbage after events: the events before it are delivered, the error is kept.
    let (ev, scan) = run(br#"[{"a":1} x]"#, 64).unwrap();
    assert_eq!(ev.len(), 1);
    let e = scan.error.unwrap();
    assert_eq!(e.position().byte, Some(9));
    assert_eq!(
        e.to_string(),
        "t.json (byte 9): expected an event, `,` or `]`"
    );
    assert_eq!(scan.last_event_end, Some(8));
    assert_eq!(scan.diag.seen(Issue::Punctuation).count, 0);
}

#[test]
fn bom_is_skipped_and_utf16_is_named() {
    let (ev, scan) = run(b"\xEF\xBB\xBF[{\"a\":1}]", 1).unwrap();
    assert_eq!((ev.len(), ev[0].1, scan.diag.bom), (1, 4, true));
    let le = "[{}]"
        .encode_utf16()
        .flat_map(|u| u.to_le_bytes())
        .collect::<Vec<u8>>();
    for (bytes, found) in [
        (
            [&[0xFF, 0xFE][..], &le].concat(),
            "UTF-16 LE (byte-order mark FF FE)",
        ),
        (
            le.clone(),
            "UTF-16 LE (a zero byte after the first character)",
        ),
        (
            vec![0xFE, 0xFF, 0, b'['],
            "UTF-16 BE (byte-order mark FE FF)",
        ),
        (
            vec![0, b'[', 0, b']'],
            "UTF-16 BE (a zero byte before the first character)",
        ),
    ] {
        for chunk in [1, 64] {
            let e = run(&bytes, chunk).err().unwrap();
            assert_eq!(e.kind(), &ParseErrorKind::Encoding { found }, "{bytes:?}");
            assert_eq!(
                e.to_string(),
                format!("t.json (byte 0): the text is {found}, not supported: re-save the file as UTF-8")
            );
        }
    }
}

#[test]
fn commas_non_objects_and_trailing_bytes_are_noted_with_offsets() {
    //          0         1         2         3
    //          0123456789012345678901234567890123456
    let text = br#"[,{"a":1},,{"b":2}{"c":3},7,]  xyz"#;
    for chunk in [1, 2, 5, 64] {
        let (ev, scan) = run(text, chunk).unwrap();
        let at: Vec<u64> = ev.iter().map(|e| e.1).collect();
        assert_eq!(at, [2, 11, 18]);
        let d = &scan.diag;
        assert_eq!(
            d.seen(Issue::Punctuation).first,
            [1, 10, 18],
            "chunk {chunk}"
        );
        assert_eq!(d.seen(Issue::NonObject).first, [26]);
        assert_eq!(d.seen(Issue::TrailingComma).first, [27]);
        assert_eq!(d.trailing_at, Some(31));
        assert_eq!(scan.error, None);
    }
    let (_, scan) = run(br#"{"traceEvents":[{"a":1}],"x":2} ,"#, 3).unwrap();
    assert_eq!(scan.diag.trailing_at, Some(32));
    let (_, scan) = run(b"[{\"a\":1}]  \n", 3).unwrap();
    assert_eq!(scan.diag, TraceDiagnostics::default());
}

/// An event that never closes was rescanned from its start after every read
/// (2 MB in 4 KiB reads: ~512 MB of scanning, minutes in a debug build). Linear now.
#[test]
fn an_unclosed_event_is_scanned_once() {
    let mut text = vec![b'['];
    text.resize(2 << 20, b'{');
    let t0 = std::time::Instant::now();
    let (ev, res) = split_run(&text, vec![], 4096);
    let secs = t0.elapsed().as_secs_f64();
    let scan = res.unwrap();
    assert!(ev.is_empty());
    assert_eq!(
        (scan.truncated_at, scan.cut_event_at),
        (Some(2 << 20), Some(1))
    );
    assert!(secs < 20.0, "{secs} s for 2 MB");
}

/// A reader that returns the bytes in reads of the given lengths (then the rest in one).
struct Splits<'a> {
    text: &'a [u8],
    at: usize,
    lens: Vec<usize>,
    next: usize,
}

impl Read for Splits<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let want = self.lens.get(self.next).copied().unwrap_or(usize::MAX);
        self.next += 1;
        let n = want.min(out.len()).min(self.text.len() - self.at);
        out[..n].copy_from_slice(&self.text[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

type Outcome = (Vec<(Vec<u8>, u64)>, Result<TraceScan, ParseError>);

fn split_run(text: &[u8], lens: Vec<usize>, chunk: usize) -> Outcome {
    let src = Splits {
        text,
        at: 0,
        lens,
        next: 0,
    };
    let mut rdr = ChunkReader::with_sizes(src, None, chunk, 8 << 20);
    let mut events = Vec::new();
    let file: Arc<str> = "t.json".into();
    let res = for_each_event(
        &mut rdr,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |ev, at| {
            events.push((ev.to_vec(), at));
            ControlFlow::Continue(())
        },
    );
    let res = res.map(|mut s| {
        s.bytes = 0; // bytes read so far is the only field that depends on the reads
        s
    });
    (events, res)
}

/// Property: any split of a file into reads gives the same events, offsets and
/// findings as one read of the whole file. Deterministic (xorshift, fixed seed) rather
/// than a `proptest` dependency: the inputs are byte strings and the property is checked
/// exhaustively for every 1- and 2-point split of the small texts and for 300 random
/// splits per small text (20 of the 2.2 MB real trace), so shrinking is not needed (a failure prints the split).
#[test]
fn any_split_into_reads_gives_the_same_events() {
    let l1 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    ))
    .unwrap();
    let small: Vec<&[u8]> = vec![
        br#" [{"a":"x]}\"{","b":[1,{"c":"\\"}]} , {"d":[[]]},3,"s]",{"e":{}}]"#,
        br#"{"meta":{"k":["]}",{"x":"}"}]},"traceEvents":[{"a":-1.5e3},{"b":null}],"z":"\"}"}"#,
        br#"[{"a":1},{"b":"unterminated"#,
        br#"[{"a":1},,{"b":2},]  junk"#,
        b"\xEF\xBB\xBF[{\"n\":\"\xff\x01\"}]",
        br#"[{"a":1} nonsense {"b":2}]"#,
    ];
    let mut rnd = super::super::test_rng();
    for text in small.iter().copied().chain([l1.as_slice()]) {
        let want = split_run(text, vec![], text.len() + 1);
        assert!(want.1.is_ok());
        if text.len() < 200 {
            for a in 0..=text.len() {
                for b in 0..=text.len() - a {
                    let got = split_run(text, vec![a.max(1), b.max(1)], text.len() + 1);
                    assert_eq!(
                        got,
                        want,
                        "reads {a}, {b} of {:?}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
        let runs = if text.len() < 200 { 300 } else { 20 };
        for _ in 0..runs {
            let scale = if rnd(2) == 0 { 16 } else { 70_000 };
            let max = 1 + rnd(scale);
            let lens: Vec<usize> = (0..text.len()).map(|_| 1 + rnd(max)).collect();
            let chunk = 1 + rnd(8192);
            let got = split_run(text, lens.clone(), chunk);
            assert_eq!(
                got,
                want,
                "chunk {chunk}, reads {:?}…",
                &lens[..lens.len().min(20)]
            );
        }
    }
}

#[test]
fn cancel_stops_at_once() {
    let text = br#"[{"a":1},{"b":2}]"#;
    let mut rdr = ChunkReader::with_sizes(&text[..], None, 64, 1 << 20);
    let file: Arc<str> = "t".into();
    let mut n = 0;
    let scan = for_each_event(
        &mut rdr,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |_, _| {
            n += 1;
            ControlFlow::Break(())
        },
    )
    .unwrap();
    assert!(scan.stopped);
    assert_eq!(n, 1);
}

/// An event past the cap (formats.md §1.1) is skipped, not kept: noted at the byte where it
/// starts, the events after it read; at, below and above the cap, whatever the reads.
/// Was: kept whole in memory up to the reader's 256 MiB record cap.
#[test]
fn an_event_over_the_cap_is_skipped_and_located() {
    // `{"n":"xxxx…"}` of exactly `len` bytes.
    let event = |len: usize| {
        let mut e = br#"{"n":""#.to_vec();
        e.resize(len - 2, b'x');
        e.extend_from_slice(b"\"}");
        e
    };
    for (len, kept) in [
        (MAX_EVENT_BYTES - 1, true),
        (MAX_EVENT_BYTES, true),
        (MAX_EVENT_BYTES + 1, false),
        (MAX_EVENT_BYTES + 5000, false),
    ] {
        let mut text = br#"[{"a":1},"#.to_vec();
        let big_at = text.len() as u64;
        text.extend_from_slice(&event(len));
        text.extend_from_slice(br#",{"b":[{"}":"]"}]}]"#);
        for chunk in [4096, 1 << 20, 4 << 20, 32 << 20] {
            let mut rdr = ChunkReader::with_sizes(&text[..], None, chunk, 256 << 20);
            let mut got = Vec::new();
            let file: Arc<str> = "t.json".into();
            let scan = for_each_event(
                &mut rdr,
                &file,
                &mut |_| ControlFlow::Continue(()),
                &mut |ev, at| {
                    got.push((ev.len(), at));
                    ControlFlow::Continue(())
                },
            )
            .unwrap();
            let last = (17, text.len() as u64 - 18);
            let (want, skipped) = match kept {
                true => (vec![(7, 1), (len, big_at), last], vec![]),
                false => (vec![(7, 1), last], vec![big_at]),
            };
            assert_eq!(got, want, "len {len}, chunk {chunk}");
            assert_eq!(scan.diag.seen(Issue::Oversized).first, skipped);
            assert_eq!((scan.error.is_none(), scan.truncated_at), (true, None));
            assert_eq!(scan.diag.seen(Issue::Punctuation).count, 0);
        }
    }
}

/// A member of the wrapper object past the cap (formats.md §1.1) is skipped like an event:
/// noted at the byte where its value starts, never handed out, the members and events after it
/// read; at, below and above the cap, whatever the reads. One that never closes is scanned to
/// the end of the file without being kept. Was: buffered whole, however large.
#[test]
fn a_member_over_the_cap_is_skipped_and_located() {
    for (len, kept) in [
        (MAX_EVENT_BYTES, true),
        (MAX_EVENT_BYTES + 1, false),
        (MAX_EVENT_BYTES + 5000, false),
    ] {
        // `"metadata":"xxxx…"` whose value is exactly `len` bytes.
        let mut text = br#"{"metadata":"#.to_vec();
        let big_at = text.len() as u64;
        text.push(b'"');
        text.resize(big_at as usize + len - 1, b'x');
        text.push(b'"');
        text.extend_from_slice(br#","displayTimeUnit":"ns","traceEvents":[{"a":1},{"b":2}]}"#);
        for chunk in [4096, 4 << 20, 32 << 20] {
            let mut rdr = ChunkReader::with_sizes(&text[..], None, chunk, 256 << 20);
            let file: Arc<str> = "t.json".into();
            let (mut members, mut events) = (Vec::new(), 0);
            let scan = for_each_member_and_event(
                &mut rdr,
                &file,
                &mut |_| ControlFlow::Continue(()),
                &mut |k, v, at| {
                    members.push((String::from_utf8_lossy(k).into_owned(), v.len(), at))
                },
                &mut |_, _| {
                    events += 1;
                    ControlFlow::Continue(())
                },
            )
            .unwrap();
            let unit = ("displayTimeUnit".to_string(), 4, big_at + len as u64 + 19);
            let (want, skipped) = match kept {
                true => (vec![("metadata".to_string(), len, big_at), unit], vec![]),
                false => (vec![unit], vec![big_at]),
            };
            assert_eq!(members, want, "len {len}, chunk {chunk}");
            assert_eq!(events, 2);
            assert_eq!(scan.diag.seen(Issue::Oversized).first, skipped);
            assert!(scan.error.is_none() && scan.truncated_at.is_none());
        }
    }
    // Never closed: the file ends inside it, nothing of it kept.
    let mut text = br#"{"metadata":{"k":""#.to_vec();
    while text.len() < MAX_EVENT_BYTES * 2 {
        text.extend_from_slice(b"y");
    }
    let chunk = 64 << 10;
    let mut rdr = ChunkReader::with_sizes(&text[..], None, chunk, 256 << 20);
    let file: Arc<str> = "t.json".into();
    let scan = for_each_member_and_event(
        &mut rdr,
        &file,
        &mut |_| ControlFlow::Continue(()),
        &mut |_, _, _| panic!("no member is whole"),
        &mut |_, _| ControlFlow::Continue(()),
    )
    .unwrap();
    assert!(
        rdr.buffer().len() <= chunk,
        "{} bytes left buffered",
        rdr.buffer().len()
    );
    assert_eq!(scan.truncated_at, Some(text.len() as u64));
    assert_eq!(scan.diag.seen(Issue::Oversized).first, vec![12]);
}

/// An event that never closes is scanned to the end of the file without being kept: the
/// file ends inside it (cut at its start), noted as over the cap with its start, the events
/// before it delivered; the reader's buffer stays under the cap plus one read.
#[test]
fn an_unclosed_event_is_not_kept() {
    for body in [&b"x"[..], b"\"k\":[1,{\"a\":\"}\"}],"] {
        let mut text = br#"{"traceEvents":[{"a":1},"#.to_vec();
        let start = text.len() as u64;
        text.extend_from_slice(br#"{"ph":"X","name":""#);
        if body != b"x" {
            text.extend_from_slice(br#"","args":{"#);
        }
        while text.len() < MAX_EVENT_BYTES * 2 {
            text.extend_from_slice(body);
        }
        let chunk = 64 << 10;
        let mut rdr = ChunkReader::with_sizes(&text[..], None, chunk, 256 << 20);
        let file: Arc<str> = "t.json".into();
        let mut events = 0;
        let scan = for_each_event(
            &mut rdr,
            &file,
            &mut |_| ControlFlow::Continue(()),
            &mut |_, _| {
                events += 1;
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        let left = rdr.buffer().len();
        assert_eq!(events, 1);
        assert_eq!(
            (scan.truncated_at, scan.cut_event_at),
            (Some(text.len() as u64), Some(start))
        );
        assert_eq!(scan.diag.seen(Issue::Oversized).first, vec![start]);
        assert!(left <= chunk, "{left} bytes left buffered");
        assert!(scan.error.is_none());
        let mut problems = crate::base::Problems::new();
        let codes = &crate::parse::trace_json::diag::ANOMALY;
        crate::parse::trace_json::diag::push_problems("r/t.json", &scan, codes, &mut problems);
        let p = problems
            .kept()
            .iter()
            .find(|p| p.code == "ANOM-TV-016")
            .unwrap();
        assert_eq!((&*p.at.file, p.at.byte), ("r/t.json", Some(start)));
        assert_eq!(
            p.message,
            format!("t.json: 1 × event (or top-level member) larger than the cap of 16 MiB, located by the byte where it starts: skipped without being kept (formats.md §1.1); at byte {start}")
        );
    }
}
