//! Shared helpers of the `snapshot_*` integration tests.
#![allow(dead_code)]

pub mod hostile;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use proflens::parse::pickle::{read_snapshot, Decoded, PickleError};

/// `../shared/fixtures/torch_snapshots` (asserted to exist: a missing fixture fails, never skips).
pub fn fixture_dir() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/torch_snapshots");
    assert!(p.is_dir(), "fixture folder missing: {}", p.display());
    p
}

/// The fixture pickles, sorted.
pub fn fixture_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pkl") || n.ends_with(".pickle"))
        .collect();
    v.sort();
    v
}

/// `EXPECTED.json`.
pub fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(fixture_dir().join("EXPECTED.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Decodes `bytes` whole.
pub fn decode_bytes(name: &str, bytes: &[u8]) -> Result<Decoded, PickleError> {
    read_snapshot(name, &mut &bytes[..], Some(bytes.len() as u64), &mut |_| {
        ControlFlow::Continue(())
    })
}

/// A reader returning at most `n` bytes per read.
pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub n: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

/// Runs `python3 tests/reference/<script> args…`, panicking with its stderr on failure.
pub fn python(script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .expect("python3 is required by the tests");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

static REPICKLE: Mutex<()> = Mutex::new(());

/// Every fixture re-pickled with `protocol` by CPython, in a temp folder (made once per run).
pub fn repickled_dir(protocol: u8) -> PathBuf {
    let _guard = REPICKLE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("snapshot_p{protocol}_{}", std::process::id()));
    if !dir.join("done").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        python(
            "snapshot_repickle.py",
            &[
                &protocol.to_string(),
                fixture_dir().to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        std::fs::write(dir.join("done"), b"").unwrap();
    }
    dir
}

/// A temp file path for one test.
pub fn temp_path(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("snapshot_tmp_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `{"segments": [], "device_traces": [[<entries>]]}` (protocol 4) with `entries` written by `f`.
pub fn snapshot_with(
    f: impl FnOnce(&mut proflens::parse::pickle::writer::PickleWriter<Vec<u8>>),
) -> Vec<u8> {
    let mut w = hostile::open_top(4);
    w.list().unwrap();
    w.list().unwrap();
    f(&mut w);
    w.append().unwrap();
    hostile::close_top(w)
}
