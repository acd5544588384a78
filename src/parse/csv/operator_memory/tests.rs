use super::*;

const H15: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type";

struct Out {
    strings: StringPool,
    table: MemoryEventTable,
    problems: Problems,
    res: Result<CsvStats, ParseError>,
}

fn run(text: &[u8], mode: CsvMode) -> Out {
    let mut strings = StringPool::new();
    let mut table = MemoryEventTable::new();
    let mut problems = Problems::new();
    let res = read(
        &mut &text[..],
        "r/operator_memory.csv",
        Some(text.len() as u64),
        mode,
        &mut strings,
        &mut table,
        &mut problems,
        &mut |_| ControlFlow::Continue(()),
    );
    Out {
        strings,
        table,
        problems,
        res,
    }
}

fn codes(p: &Problems) -> Vec<(&'static str, Option<u64>)> {
    p.kept().iter().map(|p| (p.code, p.at.line)).collect()
}

#[test]
fn quoted_and_unquoted_tab_cells_give_identical_rows() {
    let q = format!("{H15}\naten::add,512.0,\"1736408883694624.810\t\",\"1736408883695624.810\t\",\"1736408883695624.800\t\",\"1000.000\t\",\"999.990\t\",19079.6,21084,19079.6,19079.1,21084,19079.1,6,NPU:0\n");
    let u = q.replace('"', "");
    let a = run(q.as_bytes(), CsvMode::Default);
    let b = run(u.as_bytes(), CsvMode::Default);
    assert!(a.problems.is_empty() && b.problems.is_empty());
    for t in [&a.table, &b.table] {
        assert_eq!(t.len(), 1);
        assert_eq!(t.alloc_time_ns()[0], 1_736_408_883_694_624_810);
        assert_eq!(t.release_time_ns(0), Some(1_736_408_883_695_624_810));
        assert_eq!(t.duration_us(0), Some(1000.0));
        assert_eq!(t.alloc_totals(0).reserved, Some(21084.0));
        assert_eq!(t.line()[0], 2);
    }
    assert_eq!(a.strings.get(a.table.stream_ptr()[0]), "6");
    assert_eq!(a.strings.get(a.table.device_type()[0]), "NPU:0");
    let p = run(q.as_bytes(), CsvMode::Parity);
    assert_eq!(p.table.alloc_time_us()[0], 1736408883694624.810f64);
}

#[test]
fn bom_parses_in_default_and_fails_in_parity() {
    let text = format!("\u{feff}{H15}\r\naten::add,1.5,10.0,,,,,1,2,3,,,,6,NPU:0\r\n");
    let d = run(text.as_bytes(), CsvMode::Default);
    assert_eq!(d.table.len(), 1);
    assert_eq!(codes(&d.problems), vec![("MEM-CSV-006", Some(1))]);
    let p = run(text.as_bytes(), CsvMode::Parity);
    assert!(matches!(
        p.res.unwrap_err().kind(),
        ParseErrorKind::Header { .. }
    ));
    assert_eq!(p.problems.kept()[0].code, "MEM-CSV-001");
    assert_eq!(
        p.problems.kept()[0].message,
        "operator_memory.csv: missing column 'Name'"
    );
}

#[test]
fn ten_column_form_warns_and_has_no_active_total() {
    let text = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\r\n\
aten::empty,4.0,1695115378723902.5,1695115378724902.5,1000.0,10.5,20,10.4,20,NPU:0\r\n";
    let d = run(text.as_bytes(), CsvMode::Default);
    assert_eq!(d.table.len(), 1);
    assert_eq!(d.table.alloc_totals(0).active, None);
    assert_eq!(d.table.alloc_time_ns()[0], 1_695_115_378_723_902_500);
    let missing: Vec<_> = d
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "MEM-CSV-002")
        .map(|p| p.at.column.clone().unwrap().to_string())
        .collect();
    assert_eq!(
        missing,
        [
            "Active Release Time(us)",
            "Active Duration(us)",
            "Allocation Total Active(MB)",
            "Release Total Active(MB)",
            "Stream Ptr"
        ]
    );
    assert_eq!(d.problems.kept()[2].message, "operator_memory.csv: column 'Allocation Total Active(MB)' absent (older format); related fields left empty");
    let p = run(text.as_bytes(), CsvMode::Parity);
    assert!(p.res.is_ok());
    assert_eq!(p.table.alloc_totals(0).active, None); // written as 0.0 by the parity columns
}

#[test]
fn bad_rows_are_skipped_with_their_line_and_the_rest_loads() {
    let text = format!(
        "{H15}\n\
a,1.0,100.0,,,,,1,2,3,,,,6,NPU:0\n\
short,1.0,100.0\n\
b,abc,100.0,,,,,1,2,3,,,,6,NPU:0\n\
c,2.0,1.69512E+15,,,,,1,2,3,,,,6,NPU:0\n\
d,N/A,100.0,,,,,1,2,3,,,,6,NPU:0\n\
e,3.0,200.0,,,,,N/A,2,3,,,,6,NPU:0,extra\n\
f,4.0,\"300.0\",,,\"5000\t\",,N/A,,,,,,,NPU:0\n\
g,5.0,nan,,,,,1,2,3,,,,6,NPU:0\n"
    );
    let d = run(text.as_bytes(), CsvMode::Default);
    assert_eq!(
        codes(&d.problems),
        vec![
            ("MEM-CSV-004", Some(3)),
            ("MEM-CSV-003", Some(4)),
            ("MEM-CSV-005", Some(5)),
            ("MEM-CSV-003", Some(6)),
            ("MEM-CSV-004", Some(7)),
            ("MEM-CSV-003", Some(9)),
        ]
    );
    let msgs: Vec<&str> = d
        .problems
        .kept()
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(msgs[0], "operator_memory.csv:3: expected 15 cells, found 3");
    assert_eq!(
        msgs[1],
        "operator_memory.csv:4: column 'Size(KB)': cannot read 'abc' as a number"
    );
    assert_eq!(
        msgs[2],
        "operator_memory.csv:5: '1.69512E+15' has lost precision (spreadsheet export?)"
    );
    assert_eq!(
        msgs[3],
        "operator_memory.csv:6: column 'Size(KB)': cannot read 'N/A' as a number"
    );
    assert_eq!(
        msgs[5],
        "operator_memory.csv:9: column 'Allocation Time(us)': cannot read 'nan' as a number"
    );
    let names: Vec<&str> = d.table.name().iter().map(|n| d.strings.get(*n)).collect();
    assert_eq!(names, ["a", "c", "f"]);
    assert_eq!(d.table.alloc_time_ns()[1], 1_695_120_000_000_000_000);
    assert!(d.table.precision_lost()[1]);
    assert_eq!(d.table.duration_us(2), Some(5000.0));
    assert_eq!(d.table.alloc_totals(2).allocated, None);
    assert_eq!(d.table.line(), &[2, 5, 8]);
    let s = d.res.unwrap();
    assert_eq!((s.rows_in, s.rows_kept, s.rows_skipped), (8, 3, 5));

    // parity: the short row fails the file
    let p = run(text.as_bytes(), CsvMode::Parity);
    assert!(p.res.is_err());
    assert_eq!(codes(&p.problems), vec![("MEM-CSV-004", Some(3))]);
}

#[test]
fn parity_accepts_python_float_spellings_only() {
    let ok = format!("{H15}\na, 1_0 ,100.0,,,,,inf,,,,,,,NPU:0\nb,1.0,100.0,,,,,1,2,3,,,,6,NPU:0,long rows are fine upstream\n");
    let p = run(ok.as_bytes(), CsvMode::Parity);
    assert!(p.res.is_ok(), "{:?}", p.problems.kept());
    assert_eq!(p.table.size_kb(), &[10.0, 1.0]);
    assert_eq!(p.table.alloc_totals(0).allocated, Some(f64::INFINITY));
    let bad = format!("{H15}\na,N/A,100.0,,,,,1,2,3,,,,6,NPU:0\n");
    let p = run(bad.as_bytes(), CsvMode::Parity);
    assert!(p.res.is_err());
    assert_eq!(p.problems.kept()[0].code, "MEM-CSV-003");
}

#[test]
fn empty_file_and_missing_required_columns() {
    let e = run(b"", CsvMode::Default);
    assert!(matches!(e.res.unwrap_err().kind(), ParseErrorKind::Empty));
    let m = run(b"Name,Size(KB)\na,1\n", CsvMode::Default);
    assert!(m.res.is_err());
    assert_eq!(codes(&m.problems), vec![("MEM-CSV-001", Some(1))]);
    assert_eq!(
        m.problems.kept()[0].message,
        "operator_memory.csv: missing column 'Allocation Time(us)'"
    );
}

#[test]
fn cancel_stops_reading() {
    let mut text = String::from(H15);
    for i in 0..(PROGRESS_ROWS * 2) {
        text.push_str(&format!("\na,1.0,{i}.0,,,,,1,2,3,,,,6,NPU:0"));
    }
    let mut strings = StringPool::new();
    let mut table = MemoryEventTable::new();
    let mut problems = Problems::new();
    let s = read(
        &mut text.as_bytes(),
        "f",
        None,
        CsvMode::Default,
        &mut strings,
        &mut table,
        &mut problems,
        &mut |_| ControlFlow::Break(()),
    )
    .unwrap();
    assert!(s.stopped);
    assert_eq!(table.len() as u64, PROGRESS_ROWS);
}
