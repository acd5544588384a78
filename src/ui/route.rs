//! The current view in the URL hash, so a reload followed by dropping the same
//! folder again — or a colleague opening a pasted link and dropping the same folder — returns
//! to the same view.
//!
//! The fragment is a [`ViewState`] (`#tab=memory&rank=1&mem.x=12.5,40.1&mem.q=matmul`): ordered
//! `key=value` pairs, parsed robustly (malformed values are ignored, unknown keys are kept).
//!
//! # Life cycle
//! 1. At start-up the fragment is read into the live state and remembered as *pending*.
//! 2. While pending, nothing overwrites it (the landing page and a starting drop keep the link).
//! 3. When a load's inventory arrives, the pending state is applied: `tab` (if that tab applies
//!    to what was dropped) and `rank` (if that rank folder exists); every other key stays in the
//!    live state for the views to read when they mount. Pending is then cleared.
//! 4. From then on, state changes are written back with `history.replaceState` (debounced
//!    [`WRITE_DELAY_MS`]; no history entries). A later load of another folder clears the view
//!    keys (a new folder starts fresh).
//!
//! # Keys
//! Page-wide: [`TAB`] (lowercase tab name, e.g. `memory`), [`RANK`] (the memory view's rank
//! folder: its index in the inventory — stable for the same folder). Each view owns a
//! namespace `<view>.`:
//! memory `mem.` ([`MEM_X`] zoom window ms, [`MEM_Q`] text filter, [`MEM_KMIN`]/[`MEM_KMAX`] size
//! filters KB, [`MEM_SORT`] `Column` or `Column,desc`, [`MEM_ROW`] selected row id); steps &
//! bubbles `anom.` ([`ANOM_RANK`], [`ANOM_STEP`], [`ANOM_BUBBLE`]: the `AppState` selections,
//! bound with [`Route::bind_app`]); timeline `tl.` ([`TL_X`], scoped to its rank with
//! [`Route::bind_scoped`]); snapshots `snap.` ([`SNAP_FILE`], [`SNAP_X`]).
//!
//! # Extension API (for any view)
//! ```ignore
//! let route = use_route();
//! // Two-way binding: the signal starts from the hash (if present and well-formed) and every
//! // change of the signal is written back (None / "" removes the key).
//! let step = RwSignal::new(None::<u32>);
//! route.bind("anom.step", step);
//! let zoom = RwSignal::new(None::<(f64, f64)>);
//! route.bind("tl.x", zoom);
//! // Or by hand:
//! let peak: Option<u32> = route.read("snap.peak");   // untracked, typed
//! route.write("snap.peak", Some(&3u32));              // None removes
//! route.clear_prefix("snap.");                         // e.g. when the device changes
//! // A view that exists once per rank: `tl.x=1:12.5,40.1`, read back only by rank 1's view.
//! route.bind_scoped("tl.x", rank, zoom);
//! ```
//! Call `bind` when the view mounts (inside the component), so a view mounted after a restore
//! picks up its keys. A selection kept in [`AppState`] (reset by each load) uses
//! `route.bind_app(key, signal)` once at start-up (in [`install`]) instead: it is set again
//! from the link when the link is applied. Values are [`HashValue`]s (integers, `f64`, `String`, `bool`, `(f64, f64)`);
//! implement the trait for a view's own enums.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::state::{AppState, Phase, Tab};
use super::tabs::VIEWS;
use crate::views::view_state::{HashValue, ViewState};

/// Key of the selected tab.
pub const TAB: &str = "tab";
/// Key of the selected rank folder (inventory index).
pub const RANK: &str = "rank";
/// Memory chart zoom window `a,b` (ms, absolute as in the curve).
pub const MEM_X: &str = "mem.x";
/// Memory table text filter.
pub const MEM_Q: &str = "mem.q";
/// Memory table minimum size, KB.
pub const MEM_KMIN: &str = "mem.kmin";
/// Memory table maximum size, KB.
pub const MEM_KMAX: &str = "mem.kmax";
/// Memory table sort: `Column` or `Column,desc`.
pub const MEM_SORT: &str = "mem.sort";
/// Memory table selected row id.
pub const MEM_ROW: &str = "mem.row";
/// Memory allocator pool shown (`PTA`, `GE`, `OTHER`).
pub const MEM_POOL: &str = "mem.pool";
/// Namespace of the memory view's keys.
pub const MEM_PREFIX: &str = "mem.";
/// Steps & bubbles view: selected rank folder (inventory index).
pub const ANOM_RANK: &str = "anom.rank";
/// Steps & bubbles view: selected step (index in the rank).
pub const ANOM_STEP: &str = "anom.step";
/// Steps & bubbles view: selected bubble (index in the rank).
pub const ANOM_BUBBLE: &str = "anom.bubble";
/// Snapshot view: selected snapshot file (index among the dropped pickles).
pub const SNAP_FILE: &str = "snap.file";
/// Snapshot chart: zoom window `scope:a,b` (scope = file × 100 + device slot; axis units).
pub const SNAP_X: &str = "snap.x";
/// GPU panel kernel table: name filter.
pub const GPU_Q: &str = "gpu.q";
/// GPU panel kernel table: sort (`count`, `mean`, `name`; absent = Σ duration).
pub const GPU_SORT: &str = "gpu.sort";
/// Steps & bubbles timeline: zoom window `rank:a,b` (relative ms), see [`Route::bind_scoped`].
pub const TL_X: &str = "tl.x";

/// Communication tab: step key.
pub const COMM_STEP: &str = "comm.step";
/// Communication tab: group hash.
pub const COMM_GROUP: &str = "comm.group";
/// Communication tab: heatmap op kind (`Total Op Info`, `allreduce-total`, …).
pub const COMM_KIND: &str = "comm.kind";
/// Communication tab: heatmap metric (`bandwidth`, `size`, `time`).
pub const COMM_METRIC: &str = "comm.metric";
/// Communication tab: heatmap window `x0,y0,span` (axis positions).
pub const COMM_WIN: &str = "comm.win";
/// Communication tab: time table sort (`column` or `column,desc`).
pub const COMM_SORT: &str = "comm.sort";
/// Communication tab: per-op table sort.
pub const COMM_OSORT: &str = "comm.osort";
/// Communication tab: per-op table op name filter.
pub const COMM_Q: &str = "comm.q";

/// Delay before a change is written to the address bar, ms.
pub const WRITE_DELAY_MS: u32 = 250;

/// The route context (cheap to copy). Provided by [`install`].
#[derive(Clone, Copy)]
pub struct Route {
    /// The live view state.
    pub state: RwSignal<ViewState>,
    /// The state read from the address bar at start-up, until applied after a load.
    pending: RwSignal<Option<ViewState>>,
    /// Page-level signals bound with [`Route::bind_app`], re-applied when a link is restored.
    appliers: StoredValue<Vec<Applier>, LocalStorage>,
}

type Applier = Rc<dyn Fn(&ViewState)>;

/// The page's route (panics if [`install`] was not called: a programming error).
pub fn use_route() -> Route {
    expect_context::<Route>()
}

thread_local! {
    static WRITE_TIMER: RefCell<Option<Timeout>> = const { RefCell::new(None) };
}

fn current_fragment() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

fn write_fragment(fragment: &str) {
    let Some(w) = web_sys::window() else { return };
    let loc = w.location();
    if loc
        .hash()
        .ok()
        .as_deref()
        .map(|h| h.trim_start_matches('#'))
        == Some(fragment)
    {
        return;
    }
    let path = format!(
        "{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    let url = if fragment.is_empty() {
        path
    } else {
        format!("#{fragment}")
    };
    if let Ok(h) = w.history() {
        if h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
            .is_ok()
        {
            return;
        }
    }
    // replaceState refused (some file:// pages): fall back to setting the hash.
    let _ = loc.set_hash(fragment);
}

/// The lowercase name of a tab in the fragment (`memory`, same as its `data-testid` suffix).
pub fn tab_name(tab: Tab) -> String {
    format!("{tab:?}").to_lowercase()
}

fn tab_by_name(name: &str) -> Option<Tab> {
    VIEWS.iter().map(|v| v.tab).find(|t| tab_name(*t) == name)
}

impl Route {
    /// The typed value of `key` (untracked); `None` when absent or malformed.
    pub fn read<T: HashValue>(&self, key: &str) -> Option<T> {
        self.state.with_untracked(|s| s.get_as(key))
    }

    /// The typed value of `key`, tracked (re-runs the caller when the state changes).
    pub fn get<T: HashValue>(&self, key: &str) -> Option<T> {
        self.state.with(|s| s.get_as(key))
    }

    /// Writes `key` (`None` removes it). Ignored while a restore is pending.
    pub fn write<T: HashValue>(&self, key: &str, value: Option<&T>) {
        if self.is_pending() {
            return;
        }
        let changed = self
            .state
            .try_update_untracked(|s| s.put(key, value))
            .unwrap_or(false);
        if changed {
            self.state.notify();
        }
    }

    /// Removes every key of a view's namespace (e.g. `"mem."`).
    pub fn clear_prefix(&self, prefix: &str) {
        if self.is_pending() {
            return;
        }
        if self
            .state
            .try_update_untracked(|s| s.remove_prefix(prefix))
            .unwrap_or(false)
        {
            self.state.notify();
        }
    }

    /// Whether a state from the address bar still waits for a load.
    pub fn is_pending(&self) -> bool {
        self.pending.with_untracked(|p| p.is_some())
    }

    /// Two-way binding of `signal` to `key`: sets the signal from the hash now (when present
    /// and well-formed), then writes each change of the signal back. `T = Option<V>` or any
    /// [`HashValue`]; `None` removes the key. Call inside the view's component.
    pub fn bind<T>(&self, key: &'static str, signal: RwSignal<T>)
    where
        T: BindValue + Clone + Send + Sync + PartialEq + 'static,
    {
        if let Some(v) = self.state.with_untracked(|s| s.get(key).and_then(T::read)) {
            signal.set(v);
        }
        let route = *self;
        Effect::new(move |_| {
            let v = signal.get();
            route.write_raw(key, v.write());
        });
    }

    /// Like [`Route::bind`] for a view that exists once per `scope` (e.g. a rank's timeline):
    /// the value is stored as `scope:value` and read back only by the same scope, so a view of
    /// another rank starts fresh (and its first write replaces the old value).
    pub fn bind_scoped<V>(&self, key: &'static str, scope: u32, signal: RwSignal<Option<V>>)
    where
        V: HashValue + Clone + Send + Sync + PartialEq + 'static,
    {
        let restored = self.state.with_untracked(|s| {
            let (sc, v) = s.get(key)?.split_once(':')?;
            (u32::from_hash(sc)? == scope)
                .then(|| V::from_hash(v))
                .flatten()
        });
        if let Some(v) = restored {
            signal.set(Some(v));
        }
        let route = *self;
        Effect::new(move |_| {
            let v = signal.with(|v| v.as_ref().and_then(|v| v.to_hash()));
            route.write_raw(key, v.map(|v| format!("{scope}:{v}")));
        });
    }

    /// Like [`Route::bind`] for a page-level signal that outlives the views (e.g. a selection in
    /// [`AppState`] that a load resets): besides the write-back, the value is set from the
    /// link again when the link is applied after the load. Call once, at start-up.
    pub fn bind_app<T>(&self, key: &'static str, signal: RwSignal<T>)
    where
        T: BindValue + Clone + Send + Sync + PartialEq + 'static,
    {
        let apply: Applier = Rc::new(move |v: &ViewState| {
            if let Some(x) = v.get(key).and_then(T::read) {
                signal.set(x);
            }
        });
        self.appliers.update_value(|a| a.push(apply));
        let route = *self;
        Effect::new(move |_| {
            let v = signal.get();
            route.write_raw(key, v.write());
        });
    }

    fn write_raw(&self, key: &str, value: Option<String>) {
        match value {
            Some(v) => self.write::<String>(key, Some(&v)),
            None => self.write::<String>(key, None),
        }
    }
}

/// What [`Route::bind`] accepts: any [`HashValue`] (a plain value: the key is set while the
/// value has a text form; `String`: empty = key absent), or one wrapped in `Option`
/// (`None` = key absent).
pub trait BindValue: Sized {
    /// Reads the signal's value from the raw fragment value.
    fn read(s: &str) -> Option<Self>;
    /// The text to store; `None` removes the key.
    fn write(&self) -> Option<String>;
}

impl<V: HashValue> BindValue for Option<V> {
    fn read(s: &str) -> Option<Self> {
        V::from_hash(s).map(Some)
    }
    fn write(&self) -> Option<String> {
        self.as_ref().and_then(|v| v.to_hash())
    }
}

impl<V: HashValue> BindValue for V {
    fn read(s: &str) -> Option<Self> {
        V::from_hash(s)
    }
    fn write(&self) -> Option<String> {
        self.to_hash()
    }
}

/// Creates the route context: reads the address bar, applies it after the next load, keeps
/// `tab` and `rank` in sync, and writes changes back (debounced). Call once in `<App/>`.
pub fn install(app: AppState) -> Route {
    let initial = ViewState::parse(&current_fragment());
    let route = Route {
        pending: RwSignal::new((!initial.is_empty()).then(|| initial.clone())),
        state: RwSignal::new(initial),
        appliers: StoredValue::new_local(Vec::new()),
    };
    provide_context(route);
    // Selections of the steps & bubbles view live in AppState (shared with its timeline).
    route.bind_app(ANOM_RANK, app.anomaly_rank);
    route.bind_app(ANOM_STEP, app.anomaly_step);
    route.bind_app(ANOM_BUBBLE, app.anomaly_bubble);
    route.bind_app(SNAP_FILE, app.selected_snapshot);

    // A new load (the phase goes back to Inventory): a pending link waits for its inventory;
    // otherwise the previous folder's view keys are dropped.
    Effect::new(move |prev: Option<bool>| {
        let loading = matches!(app.phase.get(), Phase::Inventory);
        if loading && prev == Some(false) && !route.is_pending() {
            route.state.set(ViewState::new());
        }
        loading
    });

    // Apply the pending state once the inventory of a load exists.
    Effect::new(move |_| {
        let Some(inv) = app.inventory.get() else {
            return;
        };
        let Some(want) = route.pending.get_untracked() else {
            return;
        };
        route.pending.set(None);
        // A rank key names a rank folder of this inventory, or a rank of a split merged trace
        // in one of them (`protocol::view_index`).
        let known = |r: u32| {
            let folder = crate::protocol::view_index::split_index(r).0;
            inv.ranks.iter().any(|x| x.index == folder)
        };
        if let Some(rank) = want.get_as::<u32>(RANK) {
            if known(rank) {
                app.selected_rank.set(Some(rank));
            }
        }
        if let Some(tab) = want.get(TAB).and_then(tab_by_name) {
            if VIEWS.iter().any(|v| v.tab == tab && (v.applies)(&inv)) {
                app.tab.set(tab);
            }
        }
        // A rank key (`rank`, `anom.rank`, …) must name a rank of this inventory.
        let mut want = want;
        let bad: Vec<String> = want
            .pairs()
            .filter(|(k, _)| *k == RANK || k.ends_with(".rank"))
            .filter(|(_, v)| !u32::from_hash(v).is_some_and(known))
            .map(|(k, _)| k.to_string())
            .collect();
        let mut bad = bad;
        if want
            .get_as::<u32>(SNAP_FILE)
            .is_some_and(|t| t as usize >= inv.snapshots.len())
        {
            bad.push(SNAP_FILE.to_string());
        }
        for k in bad {
            want.remove(&k);
        }
        for apply in route.appliers.get_value() {
            apply(&want);
        }
        let (tab, rank) = (app.tab.get_untracked(), app.selected_rank.get_untracked());
        route.state.update(|s| {
            s.merge(&want);
            s.set(TAB, tab_name(tab));
            s.put(RANK, rank.as_ref());
        });
    });

    // Page-wide keys follow the signals.
    Effect::new(move |_| {
        let tab = app.tab.get();
        if app.inventory.with(|i| i.is_some()) {
            route.write::<String>(TAB, Some(&tab_name(tab)));
        }
    });
    Effect::new(move |_| {
        let rank = app.selected_rank.get();
        if app.inventory.with(|i| i.is_some()) {
            route.write::<u32>(RANK, rank.as_ref());
        }
    });

    // Write to the address bar, debounced; never while a link waits to be applied.
    Effect::new(move |_| {
        let fragment = route.state.with(|s| s.to_fragment());
        if route.pending.get().is_some() {
            return;
        }
        let t = Timeout::new(WRITE_DELAY_MS, move || write_fragment(&fragment));
        WRITE_TIMER.with(|slot| *slot.borrow_mut() = Some(t));
    });
    route
}
