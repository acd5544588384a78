//! Inputs found by the fuzz targets (fuzz/, fuzz/README.md "Ledger"), minimised and
//! rebuilt here from our own bytes: each test failed (panicked) on the code before its fix.

mod snapshot_common;

use proflens::engine::read::snapshot::{analyse, SnapshotOptions};
use proflens::ingest::InputFile;
use snapshot_common::{decode_bytes, snapshot_with};

/// `{"segments": [], "device_traces": [[alloc 512 @16, alloc 256 @1024]]}`, both allocations
/// with the frames `(filename, line)` (innermost first).
fn two_allocs_with_frames(frames: &[(&str, i128)]) -> Vec<u8> {
    snapshot_with(|w| {
        for (i, (addr, size)) in [(16, 512), (1024, 256)].into_iter().enumerate() {
            w.dict().unwrap();
            w.mark().unwrap();
            for (k, v) in [("action", "alloc")] {
                w.str(k).unwrap();
                w.str(v).unwrap();
            }
            for (k, v) in [
                ("addr", addr),
                ("size", size),
                ("stream", 0),
                ("time_us", i as i128 + 1),
            ] {
                w.str(k).unwrap();
                w.int(v).unwrap();
            }
            w.str("frames").unwrap();
            w.list().unwrap();
            w.mark().unwrap();
            for (file, line) in frames {
                w.dict().unwrap();
                w.mark().unwrap();
                w.str("filename").unwrap();
                w.str(file).unwrap();
                w.str("line").unwrap();
                w.int(*line).unwrap();
                w.str("name").unwrap();
                w.str("f").unwrap();
                w.setitems().unwrap();
            }
            w.appends().unwrap();
            w.setitems().unwrap();
            w.append().unwrap();
        }
    })
}

/// fuzz target `snapshot_report`: a frame file name whose last 3 bytes are inside a
/// multi-byte character (`x.\u{FFFD}pp`, `…/データ`) panicked in
/// `frame_filter::is_python` (byte slice of a `str` off a char boundary), in every build.
#[test]
fn frame_file_names_ending_in_multibyte_characters_are_attributed() {
    for odd in ["x.\u{FFFD}pp", "/home/u/データ"] {
        let bytes = two_allocs_with_frames(&[(odd, 3), ("/home/u/train.py", 7)]);
        let d = decode_bytes("t.pickle", &bytes).unwrap();
        let file = InputFile {
            path: "t.pickle".into(),
            size: bytes.len() as u64,
        };
        let opts = SnapshotOptions::spec_defaults();
        let run = analyse(&file, d.snapshot, d.problems, &opts);
        assert_eq!(run.devices.len(), 1);
        assert_eq!(run.devices[0].max[0].0, 768, "{odd}: peak allocated bytes");
        let md = run.markdown(&opts.report);
        assert!(
            md.contains("train.py:7"),
            "{odd}: the Python frame is the site\n{md}"
        );
    }
}

/// Dropped files as the `inventory_paths` fuzz target makes them: each path with its index as
/// its size in bytes.
fn listed(paths: &[&str]) -> Vec<InputFile> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| InputFile {
            path: p.to_string(),
            size: i as u64,
        })
        .collect()
}

/// `inventory_paths` (deterministic smoke run, 2026-12-01): a path listed twice that the
/// inventory takes for a Kineto trace candidate (`x/communication.json` outside a rank folder)
/// filled one slot keyed by the path, so the second copy vanished from every list. The repeat
/// is now an ignored file that says so; every given path is in exactly one list.
#[test]
fn a_path_given_twice_is_ignored_once_and_never_vanishes() {
    use proflens::ingest::inventory::Inventory;
    let files = listed(&[
        "run/cluster/communication.json",
        "run/cluster/communication.json",
        "run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    ]);
    let inv = Inventory::from_paths(&files);
    let placed: usize = inv
        .ranks
        .iter()
        .map(|r| r.files.len() + r.other_files as usize)
        .sum::<usize>()
        + inv.snapshots.len()
        + inv.ignored.len();
    assert_eq!(placed, files.len());
    let repeats: Vec<&str> = inv
        .ignored
        .iter()
        .filter(|f| f.reason == "the same path was given twice; read once")
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(
        repeats,
        [
            "run/cluster/communication.json",
            "run/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
        ]
    );
}

/// fuzz target `trace_splitter` (long run, 2026-12-01; 5 inputs, one class): whitespace, then
/// the start of UTF-16 text (a byte-order mark, or a zero byte before or after `[`/`{`). When a
/// read ended right after its first byte, the splitter judged the encoding on one byte and
/// said "expected `[` or `{`" (or took `[` and failed later); with a larger read it said
/// "UTF-16": the verdict depended on where a read ended. Now every read size gives the UTF-16
/// message.
#[test]
fn utf16_after_whitespace_is_named_whatever_the_read_size() {
    use std::ops::ControlFlow;
    use std::sync::Arc;

    use proflens::ingest::ChunkReader;
    use proflens::parse::trace_json::for_each_event;

    let name: Arc<str> = "trace_view.json".into();
    for (ws, head, found) in [
        (69, &[0xFE, 0xFF][..], "UTF-16 BE (byte-order mark FE FF)"),
        (5, &[0xFF, 0xFE][..], "UTF-16 LE (byte-order mark FF FE)"),
        (
            19,
            &[0, b'['][..],
            "UTF-16 BE (a zero byte before the first character)",
        ),
        (
            2,
            &[b'[', 0][..],
            "UTF-16 LE (a zero byte after the first character)",
        ),
        (
            2,
            &[b'{', 0][..],
            "UTF-16 LE (a zero byte after the first character)",
        ),
    ] {
        let mut file = vec![b'\r'; ws];
        file.extend_from_slice(head);
        file.extend_from_slice(&[0xFF, 0xFF, b'\r', 0, b' ']);
        for chunk in 1..=80 {
            let mut rdr =
                ChunkReader::with_sizes(&file[..], Some(file.len() as u64), chunk, 16 << 20);
            let err = for_each_event(
                &mut rdr,
                &name,
                &mut |_| ControlFlow::Continue(()),
                &mut |_, _| ControlFlow::Continue(()),
            )
            .map(|_| ())
            .unwrap_err()
            .to_string();
            assert_eq!(
                err,
                format!("trace_view.json (byte {ws}): the text is {found}, not supported: re-save the file as UTF-8"),
                "read size {chunk}"
            );
        }
    }
}

/// `inventory_paths` (long run, 2026-12-05): one path listed both as a file and as
/// a folder (`…/cluster_communication.json` and `…/cluster_communication.json/ASCEND_PROFILER_OUTPUT/_k`).
/// The JSON file is a Kineto trace candidate, whose slot was keyed by its path; the folder's
/// loose-output slot had the same key, so the folder's file joined the candidate's slot, and
/// when step 2 found the (empty) candidate was not a trace and moved it to the ignored list,
/// the folder's file vanished from every list. Now the two are separate slots: the candidate
/// is ignored with its reason and the folder is a rank of its own holding its file.
#[test]
fn a_path_that_is_both_a_file_and_a_folder_never_vanishes() {
    use proflens::ingest::inventory::Inventory;
    use proflens::ingest::rank::CaptureKind;
    use proflens::ingest::MemOpener;
    use proflens::parse::metadata::read_side_files;
    let dir = "run/cluster_analysis_output/cluster_communication.json";
    let files = listed(&[dir, &format!("{dir}/ASCEND_PROFILER_OUTPUT/_k")]);
    let mut inv = Inventory::from_paths(&files);
    let mut o = MemOpener::new();
    for f in &files {
        o.add(f.path.clone(), Vec::new());
    }
    read_side_files(&mut inv, &o);
    let ranks: Vec<(&str, CaptureKind, u64)> = inv
        .ranks
        .iter()
        .map(|r| (r.dir.as_str(), r.kind, r.other_files))
        .collect();
    assert_eq!(ranks, [(dir, CaptureKind::LooseOutput, 1)]);
    let ignored: Vec<&str> = inv.ignored.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(ignored, [dir]);
}
