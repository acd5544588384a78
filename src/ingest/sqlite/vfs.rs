//! The read-only VFS ("proflens-ro"): SQLite's file calls served from a [`Windowed`] source.
//! Only the main database file is ever opened (the connection is `immutable=1` with
//! in-memory temp storage, so SQLite asks for no journal, WAL or temp file; any other open is
//! refused). Every write, truncate or delete is refused with `SQLITE_READONLY`, so the input
//! file cannot change whatever SQLite would want to do.
//!
//! The source of a connection is handed over through a thread-local slot keyed by a unique
//! file name, taken by `xOpen` during `sqlite3_open_v2` (on the same thread) and dropped by
//! `xClose`.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use rusqlite::ffi;
use rusqlite::OpenFlags;

use super::window::Windowed;
use super::ByteSource;

const VFS_NAME: &CStr = c"proflens-ro";

thread_local! {
    static PENDING: RefCell<Vec<(String, Windowed<'static>)>> = const { RefCell::new(Vec::new()) };
    static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[repr(C)]
struct RoFile {
    base: ffi::sqlite3_file,
    src: *mut Windowed<'static>,
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_lock),
    xCheckReservedLock: Some(x_check_reserved),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// Registers the VFS once (process-wide); the pointer is kept as an address.
fn register() -> Result<(), rusqlite::Error> {
    static REGISTERED: OnceLock<c_int> = OnceLock::new();
    let rc = *REGISTERED.get_or_init(|| {
        let vfs = Box::new(ffi::sqlite3_vfs {
            iVersion: 1,
            szOsFile: std::mem::size_of::<RoFile>() as c_int,
            mxPathname: 512,
            pNext: std::ptr::null_mut(),
            zName: VFS_NAME.as_ptr(),
            pAppData: std::ptr::null_mut(),
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: None,
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        // SAFETY: the VFS object is leaked, so it lives as long as SQLite may use it; its
        // name is a static C string; registering never makes it the default VFS.
        unsafe { ffi::sqlite3_vfs_register(Box::into_raw(vfs), 0) }
    });
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

/// Opens a read-only, immutable connection over `source`.
pub fn open<'a>(source: Box<dyn ByteSource + 'a>) -> Result<rusqlite::Connection, rusqlite::Error> {
    register()?;
    let n = NEXT.with(|c| {
        let v = c.get();
        c.set(v + 1);
        v
    });
    let name = format!("proflens-ro-{n}.db");
    let win = Windowed::new(source);
    // SAFETY: only the lifetime is erased. The source is owned by the connection's file
    // from `xOpen` to `xClose`; `super::Db<'a>` owns the connection and cannot outlive `'a`,
    // and a source `xOpen` did not take is removed below before returning.
    let win: Windowed<'static> =
        unsafe { std::mem::transmute::<Windowed<'a>, Windowed<'static>>(win) };
    PENDING.with(|p| p.borrow_mut().push((name.clone(), win)));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let uri = format!("file:{name}?immutable=1");
    let res = rusqlite::Connection::open_with_flags_and_vfs(uri, flags, VFS_NAME);
    PENDING.with(|p| p.borrow_mut().retain(|(k, _)| *k != name));
    res
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    z_name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let f = file as *mut RoFile;
    // SAFETY: SQLite hands a block of `szOsFile` bytes; methods stay null unless we succeed,
    // so SQLite never calls xClose on a file we did not open.
    unsafe { (*f).base.pMethods = std::ptr::null() };
    if z_name.is_null() || flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
        return ffi::SQLITE_CANTOPEN;
    }
    // SAFETY: a non-null file name is a NUL-terminated string owned by SQLite.
    let name = unsafe { CStr::from_ptr(z_name) }
        .to_string_lossy()
        .into_owned();
    let Some(win) = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        let i = p.iter().position(|(k, _)| *k == name)?;
        Some(p.swap_remove(i).1)
    }) else {
        return ffi::SQLITE_CANTOPEN;
    };
    // SAFETY: `f` points to our `RoFile`-sized block (see above).
    unsafe {
        (*f).src = Box::into_raw(Box::new(win));
        (*f).base.pMethods = &IO_METHODS;
        if !out_flags.is_null() {
            *out_flags = ffi::SQLITE_OPEN_READONLY;
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut RoFile;
    // SAFETY: set by x_open; taken once (SQLite closes a file once).
    unsafe {
        if !(*f).src.is_null() {
            drop(Box::from_raw((*f).src));
            (*f).src = std::ptr::null_mut();
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    ofs: i64,
) -> c_int {
    let f = file as *mut RoFile;
    let (Ok(n), Ok(ofs)) = (usize::try_from(amt), u64::try_from(ofs)) else {
        return ffi::SQLITE_IOERR_READ;
    };
    // SAFETY: SQLite gives a buffer of `amt` bytes and our open file.
    let (win, out) = unsafe {
        (
            &mut *(*f).src,
            std::slice::from_raw_parts_mut(buf as *mut u8, n),
        )
    };
    match win.read(ofs, out) {
        Ok(got) if got == n => ffi::SQLITE_OK,
        Ok(got) => {
            out[got..].fill(0);
            ffi::SQLITE_IOERR_SHORT_READ
        }
        Err(_) => ffi::SQLITE_IOERR_READ,
    }
}

unsafe extern "C" fn x_write(
    _: *mut ffi::sqlite3_file,
    _: *const c_void,
    _: c_int,
    _: i64,
) -> c_int {
    ffi::SQLITE_READONLY
}
unsafe extern "C" fn x_truncate(_: *mut ffi::sqlite3_file, _: i64) -> c_int {
    ffi::SQLITE_READONLY
}
unsafe extern "C" fn x_sync(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    let f = file as *mut RoFile;
    // SAFETY: our open file; `size` is SQLite's out pointer.
    unsafe { *size = (*(*f).src).len() as i64 };
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_lock(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_check_reserved(_: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: SQLite's out pointer.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_file_control(_: *mut ffi::sqlite3_file, _: c_int, _: *mut c_void) -> c_int {
    ffi::SQLITE_NOTFOUND
}
unsafe extern "C" fn x_sector_size(_: *mut ffi::sqlite3_file) -> c_int {
    4096
}
unsafe extern "C" fn x_device_characteristics(_: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_IMMUTABLE
}

unsafe extern "C" fn x_delete(_: *mut ffi::sqlite3_vfs, _: *const c_char, _: c_int) -> c_int {
    ffi::SQLITE_READONLY
}
unsafe extern "C" fn x_access(
    _: *mut ffi::sqlite3_vfs,
    _: *const c_char,
    _: c_int,
    out: *mut c_int,
) -> c_int {
    // No side file (journal, WAL) exists for an immutable read.
    // SAFETY: SQLite's out pointer.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_full_pathname(
    _: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: `name` is NUL-terminated; `out` holds `n_out` bytes.
    unsafe {
        let src = CStr::from_ptr(name).to_bytes_with_nul();
        if src.len() > n_out as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        std::ptr::copy_nonoverlapping(src.as_ptr() as *const c_char, out, src.len());
    }
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_randomness(_: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    // Nothing read-only needs randomness; zeros are a valid answer.
    // SAFETY: `out` holds `n` bytes.
    unsafe { std::ptr::write_bytes(out, 0, n.max(0) as usize) };
    n
}
unsafe extern "C" fn x_sleep(_: *mut ffi::sqlite3_vfs, _: c_int) -> c_int {
    0
}
unsafe extern "C" fn x_current_time(_: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    // The Unix epoch as a Julian day: the core reads no clock, and no query here needs one.
    // SAFETY: SQLite's out pointer.
    unsafe { *out = 2_440_587.5 };
    ffi::SQLITE_OK
}
unsafe extern "C" fn x_get_last_error(_: *mut ffi::sqlite3_vfs, _: c_int, _: *mut c_char) -> c_int {
    0
}
