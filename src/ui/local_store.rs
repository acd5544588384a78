//! `localStorage` access for the page's small preferences (theme, recent folder names).
//! Every call tolerates a missing or refused storage (private windows, `file://` pages with
//! storage disabled): reads give `None`, writes are dropped.

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The stored string under `key`.
pub fn get(key: &str) -> Option<String> {
    storage()?.get_item(key).ok().flatten()
}

/// Stores `value` under `key` (ignored when storage is unavailable or full).
pub fn set(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(key, value);
    }
}

/// Removes `key`.
pub fn remove(key: &str) {
    if let Some(s) = storage() {
        let _ = s.remove_item(key);
    }
}
