//! Collecting `File`s with their relative paths from the three ways in: a directory input
//! (`webkitRelativePath`), a files input (bare names), and a drop (recursive traversal of
//! dropped directories with `webkitGetAsEntry`, paths rebuilt from the entries; ascend-memory.md
//! §2.2). Only handles are collected: no byte is read here.

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry,
};

/// The files of an `<input type=file>` (folder or files), with `webkitRelativePath` when the
/// input is a directory picker, else the bare file name.
pub fn from_file_list(list: &FileList) -> Vec<(String, File)> {
    (0..list.length())
        .filter_map(|i| list.get(i))
        .map(|f| {
            let rel = js_sys::Reflect::get(&f, &"webkitRelativePath".into())
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            let path = if rel.is_empty() { f.name() } else { rel };
            (path, f)
        })
        .collect()
}

/// The files chosen in the `<input type=file>` that fired `ev` (see [`from_file_list`]); the
/// input is cleared so that choosing the same files again fires again.
pub fn picked(ev: &web_sys::Event) -> Option<Vec<(String, File)>> {
    let input: web_sys::HtmlInputElement = ev.target()?.dyn_into().ok()?;
    let list = input.files()?;
    let picked = from_file_list(&list);
    input.set_value("");
    Some(picked)
}

/// The entries of a drop, taken synchronously (items are only valid during the event).
pub fn drop_entries(dt: &DataTransfer) -> (Vec<FileSystemEntry>, Vec<(String, File)>) {
    let items = dt.items();
    let mut entries = Vec::new();
    let mut loose = Vec::new();
    for i in 0..items.length() {
        let Some(item) = items.get(i) else { continue };
        if item.kind() != "file" {
            continue;
        }
        match item.webkit_get_as_entry() {
            Ok(Some(entry)) => entries.push(entry),
            _ => {
                if let Ok(Some(f)) = item.get_as_file() {
                    loose.push((f.name(), f));
                }
            }
        }
    }
    (entries, loose)
}

/// Walks dropped entries recursively; paths are relative to the drop (the dropped folder's
/// name is the first segment, as with a directory input).
pub async fn walk_entries(entries: Vec<FileSystemEntry>) -> Result<Vec<(String, File)>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<FileSystemEntry> = entries;
    while let Some(entry) = stack.pop() {
        if entry.is_directory() {
            let dir: FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            // readEntries returns at most ~100 entries per call: repeat until empty.
            loop {
                let p = Promise::new(&mut |resolve: Function, reject: Function| {
                    let _ = reader.read_entries_with_callback_and_callback(&resolve, &reject);
                });
                let batch = JsFuture::from(p).await.map_err(|e| format!("{e:?}"))?;
                let batch: Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                for e in batch.iter() {
                    stack.push(e.unchecked_into());
                }
            }
        } else if entry.is_file() {
            let path = entry.full_path().trim_start_matches('/').to_string();
            let fe: FileSystemFileEntry = entry.unchecked_into();
            let p = Promise::new(&mut |resolve: Function, reject: Function| {
                fe.file_with_callback_and_callback(&resolve, &reject);
            });
            let file = JsFuture::from(p).await.map_err(|e| format!("{e:?}"))?;
            out.push((path, file.unchecked_into()));
        }
    }
    Ok(out)
}

/// Builds in-memory `File`s (the built-in sample) with the given relative paths.
pub fn files_from_bytes(items: &[(&str, &[u8])]) -> Result<Vec<(String, File)>, JsValue> {
    items
        .iter()
        .map(|(path, bytes)| {
            let parts = Array::new();
            parts.push(&js_sys::Uint8Array::from(*bytes));
            let name = path.rsplit('/').next().unwrap_or(path);
            let f = File::new_with_u8_array_sequence(&parts, name)?;
            Ok((path.to_string(), f))
        })
        .collect()
}
