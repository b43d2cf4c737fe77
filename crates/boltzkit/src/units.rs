//! Sizes and durations in words, for the one-line messages of [`crate::error`] and
//! [`crate::budget`] (a module of its own, so neither imports the other back).

/// Bytes in binary units with three significant figures: `48.0 GiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Seconds in the largest unit that keeps a number ≥ 1: `3.2 hours`, `41 years`.
pub fn human_duration(seconds: f64) -> String {
    const UNITS: [(&str, f64); 5] = [
        ("years", 365.25 * 86_400.0),
        ("days", 86_400.0),
        ("hours", 3_600.0),
        ("minutes", 60.0),
        ("seconds", 1.0),
    ];
    for (name, size) in UNITS {
        if seconds >= size {
            let v = seconds / size;
            return if v >= 100.0 {
                format!("{v:.1e} {name}")
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{seconds:.2} seconds")
}
