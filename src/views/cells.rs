//! The cells of a plain table as data, and their HTML: header cells, rows of text cells with
//! their class, tooltip, exact value and test id. Every plain table of the page (no control
//! inside, nothing to click) is built as these values and set as one HTML string
//! (`ui::widgets::table`), so the page holds one writer for all of them instead of the DOM
//! code of a `view!` per table. A table's header is a constant (it costs data, not code).
//! What a table shows (its columns, texts, order) stays where it is computed; this module
//! only carries and writes it. Every text and attribute value is escaped.

/// One header cell: `<th class title>label</th>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The header text.
    pub label: &'static str,
    /// `class` (e.g. `num` for right-aligned numbers).
    pub class: Option<&'static str>,
    /// `title`: the tooltip.
    pub title: Option<&'static str>,
}

impl Head {
    /// A header of text `label`.
    pub const fn new(label: &'static str) -> Head {
        Head {
            label,
            class: None,
            title: None,
        }
    }

    /// A header of a number column (`class="num"`).
    pub const fn num(label: &'static str) -> Head {
        Head {
            label,
            class: Some("num"),
            title: None,
        }
    }

    /// With the tooltip `title`.
    pub const fn title(self, title: &'static str) -> Head {
        Head {
            title: Some(title),
            ..self
        }
    }
}

/// A table's own attributes and header: `<table class data-testid><thead><tr>heads</tr></thead>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// `class` of the `<table>`.
    pub class: &'static str,
    /// `data-testid` of the `<table>`.
    pub testid: Option<&'static str>,
    /// The header cells.
    pub heads: &'static [Head],
}

impl Table {
    /// A table of class `class` with `heads`.
    pub const fn new(class: &'static str, heads: &'static [Head]) -> Table {
        Table {
            class,
            testid: None,
            heads,
        }
    }

    /// With `data-testid`.
    pub const fn testid(self, id: &'static str) -> Table {
        Table {
            testid: Some(id),
            ..self
        }
    }
}

/// How a cell's text is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Text {
    /// As the cell's text.
    Plain,
    /// In a `<code>` element (names, paths, ids).
    Code,
    /// In a `<code>` element whose tooltip is the text itself (long names cut by the layout).
    CodeTitled,
}

/// One body cell: `<td class title data-v data-testid colspan>text</td>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The shown text.
    pub text: String,
    /// How the text is set.
    pub kind: Text,
    /// `class`.
    pub class: Option<&'static str>,
    /// `title`: the tooltip.
    pub title: Option<String>,
    /// `data-v`: the exact value behind a rounded number.
    pub value: Option<String>,
    /// `data-testid`.
    pub testid: Option<&'static str>,
    /// `colspan`.
    pub colspan: Option<&'static str>,
}

impl Cell {
    /// A text cell.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            kind: Text::Plain,
            class: None,
            title: None,
            value: None,
            testid: None,
            colspan: None,
        }
    }

    /// A number cell (`class="num"`).
    pub fn num(text: impl Into<String>) -> Cell {
        Cell::text(text).class("num")
    }

    /// A cell whose text is in `<code>`.
    pub fn code(text: impl Into<String>) -> Cell {
        Cell {
            kind: Text::Code,
            ..Cell::text(text)
        }
    }

    /// A cell whose text is in `<code>` with the text as its tooltip.
    pub fn code_titled(text: impl Into<String>) -> Cell {
        Cell {
            kind: Text::CodeTitled,
            ..Cell::text(text)
        }
    }

    /// With `class`.
    pub fn class(mut self, class: &'static str) -> Cell {
        self.class = Some(class);
        self
    }

    /// With the tooltip `title`.
    pub fn title(mut self, title: impl Into<String>) -> Cell {
        self.title = Some(title.into());
        self
    }

    /// With the exact value `v` in `data-v` (as Rust prints the `f64`).
    pub fn value(mut self, v: f64) -> Cell {
        self.value = Some(v.to_string());
        self
    }

    /// With `data-testid`.
    pub fn testid(mut self, id: &'static str) -> Cell {
        self.testid = Some(id);
        self
    }

    /// Spanning `n` columns.
    pub fn colspan(mut self, n: &'static str) -> Cell {
        self.colspan = Some(n);
        self
    }
}

/// One body row: `<tr data-testid class>cells</tr>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The cells, in column order.
    pub cells: Vec<Cell>,
    /// `data-testid`.
    pub testid: Option<&'static str>,
    /// `class`.
    pub class: Option<&'static str>,
}

impl Row {
    /// A row of `cells`.
    pub fn new(cells: Vec<Cell>) -> Row {
        Row {
            cells,
            testid: None,
            class: None,
        }
    }

    /// With `data-testid`.
    pub fn testid(mut self, id: &'static str) -> Row {
        self.testid = Some(id);
        self
    }

    /// With `class` (`None`: no class attribute).
    pub fn class(mut self, class: Option<&'static str>) -> Row {
        self.class = class;
        self
    }
}

/// `s` with `&`, `<`, `>` and `"` as character references: safe as element text and as a
/// double-quoted attribute value.
fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// ` name="value"` when `value` is set.
fn attr_into(out: &mut String, name: &str, value: Option<&str>) {
    if let Some(v) = value {
        out.push(' ');
        out.push_str(name);
        out.push_str("=\"");
        escape_into(out, v);
        out.push('"');
    }
}

/// The rows of a `<tbody>`, as HTML.
pub fn rows_html(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str("<tr");
        attr_into(&mut out, "data-testid", r.testid);
        attr_into(&mut out, "class", r.class);
        out.push('>');
        for c in &r.cells {
            out.push_str("<td");
            attr_into(&mut out, "class", c.class);
            attr_into(&mut out, "title", c.title.as_deref());
            attr_into(&mut out, "data-v", c.value.as_deref());
            attr_into(&mut out, "data-testid", c.testid);
            attr_into(&mut out, "colspan", c.colspan);
            out.push('>');
            match c.kind {
                Text::Plain => escape_into(&mut out, &c.text),
                Text::Code | Text::CodeTitled => {
                    out.push_str("<code");
                    let tip = (c.kind == Text::CodeTitled).then_some(c.text.as_str());
                    attr_into(&mut out, "title", tip);
                    out.push('>');
                    escape_into(&mut out, &c.text);
                    out.push_str("</code>");
                }
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out
}

/// The inside of a `<table>`: `t`'s header and `rows`, as HTML.
pub fn table_html(t: &Table, rows: &[Row]) -> String {
    let mut out = String::from("<thead><tr>");
    for h in t.heads {
        out.push_str("<th");
        attr_into(&mut out, "class", h.class);
        attr_into(&mut out, "title", h.title);
        out.push('>');
        escape_into(&mut out, h.label);
        out.push_str("</th>");
    }
    out.push_str("</tr></thead><tbody>");
    out.push_str(&rows_html(rows));
    out.push_str("</tbody>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_set_each_attribute() {
        let c = Cell::num("1.50 ms")
            .value(1.5)
            .title("exact")
            .testid("t")
            .colspan("3");
        assert_eq!(c.text, "1.50 ms");
        assert_eq!(c.kind, Text::Plain);
        assert_eq!(c.class, Some("num"));
        assert_eq!(c.value.as_deref(), Some("1.5"));
        assert_eq!(c.title.as_deref(), Some("exact"));
        assert_eq!(c.testid, Some("t"));
        assert_eq!(c.colspan, Some("3"));
        assert_eq!(Cell::code("a::b").kind, Text::Code);
        assert_eq!(Cell::code_titled("k").kind, Text::CodeTitled);
        assert_eq!(Cell::code("x").class, None);
        assert_eq!(Cell::num("1e-7").value(1e-7).value.as_deref(), Some("0.0000001"));

        let r = Row::new(vec![Cell::text("x")])
            .testid("row")
            .class(Some("slow"));
        assert_eq!(r.class, Some("slow"));
        assert_eq!(r.testid, Some("row"));
        assert_eq!(Row::new(vec![]).class, None);

        const T: Table = Table::new("grid", &[Head::num("n").title("count"), Head::new("name")])
            .testid("t");
        assert_eq!(T.heads[0].class, Some("num"));
        assert_eq!(T.heads[0].title, Some("count"));
        assert_eq!(T.heads[1].class, None);
        assert_eq!(T.heads[1].title, None);
        assert_eq!(T.testid, Some("t"));
    }

    #[test]
    fn writes_escaped_html() {
        const T: Table = Table::new("grid", &[Head::new("op"), Head::num("ms").title("a \"b\" <c>")]);
        let rows = vec![
            Row::new(vec![
                Cell::code("aten::<lambda>&x"),
                Cell::num("1.5").value(1.5).testid("t"),
            ])
            .testid("r")
            .class(Some("slow")),
            Row::new(vec![
                Cell::code_titled("k\"1"),
                Cell::text("").colspan("2").title("x>y"),
            ]),
        ];
        assert_eq!(
            table_html(&T, &rows),
            concat!(
                "<thead><tr><th>op</th><th class=\"num\" title=\"a &quot;b&quot; &lt;c&gt;\">ms</th></tr></thead>",
                "<tbody><tr data-testid=\"r\" class=\"slow\"><td><code>aten::&lt;lambda&gt;&amp;x</code></td>",
                "<td class=\"num\" data-v=\"1.5\" data-testid=\"t\">1.5</td></tr>",
                "<tr><td><code title=\"k&quot;1\">k&quot;1</code></td><td title=\"x&gt;y\" colspan=\"2\"></td></tr></tbody>",
            )
        );
        assert_eq!(rows_html(&[]), "");
    }
}
