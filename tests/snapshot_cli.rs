//! `proflens snapshot` end to end: written JSON and Markdown, exit codes, §5.4 messages.

mod snapshot_common;

use std::process::Command;

use snapshot_common::{expected, fixture_dir, fixture_names, temp_path};

fn proflens(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_devices_carry_the_reference_quantities_of_every_fixture() {
    let exp = expected();
    for name in fixture_names() {
        let json = temp_path(&format!("{name}.json"));
        let md = temp_path(&format!("{name}.md"));
        let input = fixture_dir().join(&name);
        let (code, stderr) = proflens(&[
            "snapshot",
            input.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--report",
            md.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{name}: exit {code}: {stderr}");
        let got: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let want: Vec<&serde_json::Value> = exp[&name]["device_traces"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter(|d| d["entries"].as_u64() != Some(0))
                    .collect()
            })
            .unwrap_or_default();
        let devices = got["devices"].as_array().unwrap();
        assert_eq!(devices.len(), want.len(), "{name}");
        for (g, w) in devices.iter().zip(want.iter()) {
            assert_eq!(g["device"], w["device"]);
            assert_eq!(g["in_window_replay"], w["in_window_replay"], "{name}");
            assert_eq!(g["memoryviz_like"], w["memoryviz_like"], "{name}");
            // The active curve is MemoryViz's total (§7.3): same baseline, max and end.
            let mv = &w["memoryviz_like"];
            assert_eq!(g["baseline_active_bytes"], mv["baseline_bytes"], "{name}");
            let max_active = g["max_active"]["bytes"]
                .as_i64()
                .unwrap()
                .max(g["baseline_active_bytes"].as_i64().unwrap());
            assert_eq!(max_active, mv["max_bytes"].as_i64().unwrap(), "{name}");
            let end = g["points"].as_array().unwrap().last().unwrap();
            assert_eq!(end["kind"], "end");
            assert_eq!(end["active_bytes"], mv["end_bytes"], "{name}");
        }
        let text = std::fs::read_to_string(&md).unwrap();
        assert!(
            text.starts_with(&format!("# Memory peak analysis: `{name}`")),
            "{name}"
        );
        assert!(
            text.contains("does not appear in a snapshot"),
            "{name}: invisible-memory note"
        );
        if !want.is_empty() {
            assert!(text.contains(
                "| # | curve | bytes | index | time | prominence | recurring | annotations |"
            ));
            assert!(text.contains("global peak"), "{name}");
        }
    }
}

#[test]
fn report_links_follow_the_options() {
    let name = "ZidongLiu_DeComFL__memory.pickle";
    let md = temp_path("links.md");
    let input = fixture_dir().join(name);
    let (code, stderr) = proflens(&[
        "snapshot",
        input.to_str().unwrap(),
        "--report",
        md.to_str().unwrap(),
        "--link-style",
        "github",
        "--repo-url",
        "https://github.com/ZidongLiu/DeComFL",
        "--commit",
        "edd30e09",
        "--project-root",
        "C:/research/DeComFL",
        "--top-contributors",
        "3",
    ]);
    assert!(code <= 1, "{stderr}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains(
            "(https://github.com/ZidongLiu/DeComFL/blob/edd30e09/cezo_fl/client.py#L176)"
        ),
        "{}",
        &text[..3000.min(text.len())]
    );
    assert!(text.contains("more sites |"));
    assert!(!text.contains("vscode://"));
}

#[test]
fn refused_file_exits_2_with_the_spec_message() {
    let bad = temp_path("global.pickle");
    std::fs::write(&bad, b"\x80\x04cos\nsystem\n").unwrap();
    let (code, stderr) = proflens(&["snapshot", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("(GLOBAL at byte 2)"), "{stderr}");
    let (code, stderr) = proflens(&["snapshot", bad.to_str().unwrap(), "--link-style", "emacs"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--link-style"), "{stderr}");
}
