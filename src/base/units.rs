//! Units (spec README "Units"): time in the core is `i64` nanoseconds parsed
//! exactly from decimal text; sizes are bytes. `ms = µs / 1000`,
//! `MB = MiB = 1,048,576 bytes`, `KB = KiB = 1024 bytes`.

/// Nanoseconds per microsecond.
pub const NS_PER_US: i64 = 1_000;
/// Nanoseconds per millisecond.
pub const NS_PER_MS: i64 = 1_000_000;
/// Bytes per KiB ("KB" in the specs).
pub const BYTES_PER_KB: f64 = 1024.0;
/// Bytes per MiB ("MB" in the specs).
pub const BYTES_PER_MB: f64 = 1_048_576.0;

/// Nanoseconds → microseconds (f64).
pub fn ns_to_us(ns: i64) -> f64 {
    ns as f64 / NS_PER_US as f64
}
/// Nanoseconds → milliseconds (f64): the one ns → ms conversion of the core (durations and
/// times relative to an origin; exact below 2^53 ns). An absolute timestamp beyond 2^53 ns
/// written to an export takes `report::float`'s exact text conversions instead.
pub fn ns_to_ms(ns: i64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}
/// Bytes → MiB.
pub fn bytes_to_mb(bytes: f64) -> f64 {
    bytes / BYTES_PER_MB
}
