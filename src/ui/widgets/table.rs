//! The one renderer of the page's plain tables: a [`Table`] header and rows of cells
//! (`views::cells`) are written as HTML and set as the `<table>`'s (or `<tbody>`'s) content.
//! Every table built this way shares this code; a `view!` per table held the DOM code of each
//! of its cells (the write-up docs/perf/2026-12-07-wasm-size-4.md measures both). For tables
//! with nothing to click: rows that select or hold controls stay `view!`s.

use leptos::prelude::*;

use crate::views::cells::{rows_html, table_html, Row, Table};

/// A whole table: `t`'s header and `rows`.
pub fn data_table(t: &Table, rows: Vec<Row>) -> impl IntoView {
    view! { <table class=t.class data-testid=t.testid inner_html=table_html(t, &rows)></table> }
}

/// A whole table whose rows `rows` computes, redrawn when what it reads changes.
pub fn live_table(
    t: &'static Table,
    rows: impl FnMut() -> Vec<Row> + Send + 'static,
) -> impl IntoView {
    live_table_boxed(t, Box::new(rows))
}

fn live_table_boxed(
    t: &'static Table,
    mut rows: Box<dyn FnMut() -> Vec<Row> + Send>,
) -> impl IntoView {
    view! { <table class=t.class data-testid=t.testid inner_html=move || table_html(t, &rows())></table> }
}

/// A `<tbody>` of `rows` (for a table whose header and caption its caller draws).
pub fn tbody(rows: Vec<Row>) -> impl IntoView {
    view! { <tbody inner_html=rows_html(&rows)></tbody> }
}
