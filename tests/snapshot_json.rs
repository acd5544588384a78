//! Memory snapshots written as JSON (torch-snapshot.md §2.6): decoded into the same model as
//! the pickle, so `proflens snapshot --json` of the JSON form equals that of the pickle, number
//! for number. The JSON forms are written by CPython (`tests/reference/snapshot_to_json.py`:
//! `json.dump(pickle.load(f))`) from every fixture pickle and the three real-world ones; two
//! small ones made from our own sample pickle are committed (`fixtures/snapshot_json/`).
//! Before this change every one of them was refused ("JSON snapshots are not supported yet")
//! and `proflens analyze` skipped them without a word.

mod snapshot_common;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

use proflens::engine::read::snapshot::{run, SnapshotOptions};
use proflens::ingest::{InputFile, MemOpener};
use proflens::model::snapshot::Encoding;
use serde_json::Value;
use snapshot_common::{fixture_dir, fixture_names, python};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real_world");
const OURS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

/// The document `proflens snapshot --json FILE` writes for `path`, as JSON.
fn document(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let name = path.to_str().unwrap().to_string();
    let mut o = MemOpener::new();
    o.add(name.clone(), bytes.clone());
    let file = InputFile {
        path: name,
        size: bytes.len() as u64,
    };
    let opts = SnapshotOptions::spec_defaults();
    let r =
        run(&o, &file, &opts, &mut |_| ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&r.json_text(&opts.report).unwrap()).unwrap()
}

/// `doc` without what names the input rather than its data: the file name and size, the
/// encoding, protocol and opcodes, and the byte offsets of problems (the same finding sits
/// at another byte of the other form).
fn data_part(mut doc: Value) -> Value {
    let o = doc.as_object_mut().unwrap();
    o.remove("file");
    o.remove("bytes");
    let f = o["format"].as_object_mut().unwrap();
    for k in ["encoding", "protocol", "opcodes"] {
        f.remove(k);
    }
    for p in o["problems"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("byte");
    }
    doc
}

/// Converts `pickles` to JSON into a fresh folder `tag` (one CPython run).
fn converted(tag: &str, pickles: &[PathBuf]) -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snapjson_{tag}_{}", std::process::id()));
    let mut args: Vec<&str> = vec![out.to_str().unwrap()];
    args.extend(pickles.iter().map(|p| p.to_str().unwrap()));
    python("snapshot_to_json.py", &args);
    out
}

fn assert_same_document(pickle: &Path, json: &Path) {
    let (p, j) = (document(pickle), document(json));
    assert_eq!(j["format"]["encoding"], "json");
    assert_eq!(j["format"]["protocol"], 0);
    assert_eq!(j["format"]["opcodes"], serde_json::json!([]));
    assert_eq!(p["format"]["encoding"], "pickle");
    assert_eq!(data_part(j), data_part(p), "{}", pickle.display());
}

/// Every fixture pickle of `../shared/fixtures/torch_snapshots` (13 files, both top-level
/// forms, protocols 2–4, 400 MB of JSON in all).
#[test]
fn every_fixture_pickle_as_json_gives_the_same_document() {
    let pickles: Vec<PathBuf> = fixture_names()
        .iter()
        .map(|n| fixture_dir().join(n))
        .collect();
    assert_eq!(pickles.len(), 13);
    let out = converted("fixtures", &pickles);
    for p in &pickles {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert_same_document(p, &out.join(format!("{name}.json")));
    }
}

/// The three real-world snapshots (verl, select_n, EoR_NN), and values SOURCES.md gives for
/// them (read there with CPython's pickle), asserted on the JSON form's document.
#[test]
fn the_real_world_snapshots_as_json() {
    let sets = [
        "volcengine__verl/mem.pickle",
        "Maphsge4__select_n/snapshot.pickle",
        "JasperSolt__EoR_NN/snapshot.pickle",
    ];
    let mut docs = Vec::new();
    for (i, rel) in sets.iter().enumerate() {
        let p = Path::new(REAL).join(rel);
        let out = converted(&format!("real{i}"), std::slice::from_ref(&p));
        let name = p.file_name().unwrap().to_str().unwrap();
        let j = out.join(format!("{name}.json"));
        assert_same_document(&p, &j);
        docs.push(document(&j));
    }
    // verl: 127 segments (84 large, 43 small), 68 in private pools, blocks 534
    // active_allocated / 9 active_pending_free / 95 inactive, one empty device trace.
    let v = &docs[0];
    assert_eq!(v["segments"]["count"], 127);
    assert_eq!(v["segments"]["private_pools"], 68);
    assert_eq!(v["segments"]["block_states"]["active_allocated"], 534);
    assert_eq!(v["segments"]["block_states"]["active_pending_free"], 9);
    assert_eq!(v["segments"]["block_states"]["inactive"], 95);
    assert_eq!(
        v["format"]["top_keys"],
        serde_json::json!([
            "segments",
            "device_traces",
            "allocator_settings",
            "external_annotations"
        ])
    );
    // select_n: 4 device slots, 136 segments, 10,327 entries on device 0 only.
    let s = &docs[1];
    assert_eq!(s["format"]["device_slots"], 4);
    assert_eq!(s["segments"]["count"], 136);
    assert_eq!(s["devices"].as_array().unwrap().len(), 1);
    assert_eq!(s["devices"][0]["entries"], 10_327);
    // EoR_NN: 10 segments, 5,803 entries with time_us.
    let e = &docs[2];
    assert_eq!(e["segments"]["count"], 10);
    assert_eq!(e["devices"][0]["entries"], 5_803);
    assert_eq!(e["format"]["has_time_us"], true);
}

/// The committed JSON forms of our sample pickle: through the CLI (`proflens snapshot --json`)
/// the dict form's document equals the pickle's; the segments-only list equals the same list
/// pickled by CPython.
#[test]
fn the_committed_json_snapshots_through_the_cli() {
    let cli = |input: &Path| -> Value {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "snapjson_cli_{}_{}.json",
            std::process::id(),
            input.file_name().unwrap().to_str().unwrap()
        ));
        let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
            .args([
                "snapshot",
                input.to_str().unwrap(),
                "--json",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
    };
    let pickle = Path::new(OURS).join("sample/sample_run/memory_snapshot.pickle");
    let json = Path::new(OURS).join("snapshot_json/memory_snapshot.json");
    let j = cli(&json);
    assert_eq!(j["format"]["encoding"], "json");
    assert_eq!(data_part(j), data_part(cli(&pickle)));
    // The list form: the same segments, pickled by CPython for the comparison.
    let list = Path::new(OURS).join("snapshot_json/memory_snapshot_segments.json");
    let l = cli(&list);
    assert_eq!(l["format"]["top_level"], "list (segments only)");
    let repickled = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snapjson_list_{}.pickle", std::process::id()));
    let script = format!(
        "import json, pickle; pickle.dump(json.load(open({:?})), open({:?}, 'wb'), protocol=4)",
        list.to_str().unwrap(),
        repickled.to_str().unwrap()
    );
    let st = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(data_part(l), data_part(cli(&repickled)));
}

/// Hostile JSON stays bounded: nesting past the bound and a file cut short are located
/// errors; a `.json` snapshot decodes from a trickle of 7-byte reads like from one read.
#[test]
fn bounds_and_chunking() {
    use proflens::parse::pickle::read_snapshot;
    let deep = format!(
        r#"{{"segments": [], "x": {}{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let e = snapshot_common::decode_bytes("deep.json", deep.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("nested JSON containers"), "{e}");
    let bytes = std::fs::read(Path::new(OURS).join("snapshot_json/memory_snapshot.json")).unwrap();
    let cut = &bytes[..bytes.len() - 10];
    let e = snapshot_common::decode_bytes("cut.json", cut).unwrap_err();
    assert!(
        e.to_string().contains("ends before the JSON is complete"),
        "{e}"
    );
    let whole = snapshot_common::decode_bytes("s.json", &bytes).unwrap();
    let mut trickle = snapshot_common::Trickle { data: &bytes, n: 7 };
    let slow = read_snapshot(
        "s.json",
        &mut trickle,
        Some(bytes.len() as u64),
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(whole.snapshot.features.encoding, Encoding::Json);
    assert_eq!(slow.snapshot.segments, whole.snapshot.segments);
    assert_eq!(slow.snapshot.devices.len(), whole.snapshot.devices.len());
    assert_eq!(
        slow.snapshot.devices[0].entries.len(),
        whole.snapshot.devices[0].entries.len()
    );
    // With a BOM and leading whitespace.
    let mut bom = b"\xEF\xBB\xBF \n".to_vec();
    bom.extend_from_slice(&bytes);
    let b = snapshot_common::decode_bytes("bom.json", &bom).unwrap();
    assert_eq!(b.snapshot.segments, whole.snapshot.segments);
}

/// In a drop, a JSON snapshot beside a trace is listed with the snapshots (its head read by
/// the inventory, formats.md §8.1) and analysed from one read of each byte: the head the
/// inventory read is handed to the run (`Resume`).
#[test]
fn a_json_snapshot_in_a_drop_is_analysed_from_one_read() {
    use proflens::engine::contract::no_progress;
    use proflens::engine::{Plan, Store};
    use proflens::ingest::inventory::Inventory;
    use proflens::ingest::replay::Resume;
    use proflens::ingest::Opener;
    use proflens::parse::metadata::read_side_files_keeping_heads;
    use std::io::Read;
    use std::sync::{Arc, Mutex};

    struct Counting<'a>(&'a MemOpener, Arc<Mutex<u64>>);
    struct Reader<'a>(Box<dyn Read + 'a>, Arc<Mutex<u64>>);
    impl Read for Reader<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            *self.1.lock().unwrap() += n as u64;
            Ok(n)
        }
    }
    impl Opener for Counting<'_> {
        fn open(&self, path: &str) -> std::io::Result<Box<dyn Read + '_>> {
            self.open_from(path, 0)
        }
        fn open_from(&self, path: &str, at: u64) -> std::io::Result<Box<dyn Read + '_>> {
            Ok(Box::new(Reader(
                self.0.open_from(path, at)?,
                self.1.clone(),
            )))
        }
    }

    let bytes = std::fs::read(Path::new(OURS).join("snapshot_json/memory_snapshot.json")).unwrap();
    let list =
        std::fs::read(Path::new(OURS).join("snapshot_json/memory_snapshot_segments.json")).unwrap();
    let mut o = MemOpener::new();
    o.add("run/memory_snapshot.json", bytes.clone());
    o.add("run/segments.json", list.clone());
    let read = Arc::new(Mutex::new(0u64));
    let c = Counting(&o, read.clone());
    let mut inv = Inventory::from_paths(&o.list());
    let heads = read_side_files_keeping_heads(&mut inv, &c);
    assert!(
        inv.ranks.is_empty() && inv.ignored.is_empty(),
        "{:?}",
        inv.ignored
    );
    let names: Vec<&str> = inv.snapshots.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["run/memory_snapshot.json", "run/segments.json"]);
    let plan = Plan {
        snapshot: Plan::defaults().snapshot,
        ..Plan::none()
    };
    let store: Store =
        proflens::engine::run(&inv, &Resume::new(&heads, &c), plan, &mut no_progress);
    let r = store.snapshot(0).unwrap().as_ref().unwrap();
    assert_eq!(r.snapshot.features.encoding, Encoding::Json);
    let l = store.snapshot(1).unwrap().as_ref().unwrap();
    assert_eq!(
        l.snapshot.features.top_level,
        proflens::model::snapshot::TopLevel::SegmentsList
    );
    assert_eq!(
        (bytes.len() + list.len()) as u64,
        *read.lock().unwrap(),
        "each byte read once"
    );
    let opts = SnapshotOptions::spec_defaults();
    let doc: Value = serde_json::from_str(&r.json_text(&opts.report).unwrap()).unwrap();
    let want = document(&Path::new(OURS).join("snapshot_json/memory_snapshot.json"));
    assert_eq!(data_part(doc), data_part(want));
}
