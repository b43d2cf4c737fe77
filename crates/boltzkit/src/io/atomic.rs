//! Atomic file writes: write to a temporary file beside the target, sync, then rename.
//!
//! A reader never sees a half-written model or log, and a failed write leaves the previous
//! file untouched. The temporary file is `.NAME.PID.tmp`; one left behind by a process that was
//! killed mid-write is removed by the next write to `NAME` (when that process is gone).

use crate::error::{Error, Result};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes to `path` atomically through `fill`, which receives a buffered writer.
pub fn write_atomic_with<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    remove_orphans(path);
    let tmp = temp_path(path);
    let result = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Removes `.NAME.PID.tmp` files beside `path` whose process `PID` no longer runs (left by a
/// write that was killed). Best effort: errors are ignored, and without `/proc` nothing is
/// removed.
fn remove_orphans(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp_name = format!(".{name}.{}.tmp", std::process::id());
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp_name),
        _ => PathBuf::from(tmp_name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary file of a dead process (a killed write) goes at the next write; one of a
    /// live process (this one, another write in flight) and unrelated files stay.
    #[test]
    fn orphan_temporaries_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let dead = dir.path().join(".m.safetensors.4000000000.tmp");
        let alive = dir
            .path()
            .join(format!(".m.safetensors.{}.tmp.keep", std::process::id()));
        let other = dir.path().join(".x.safetensors.4000000000.tmp");
        for f in [&dead, &alive, &other] {
            fs::write(f, b"partial").unwrap();
        }
        write_atomic(&p, b"model").unwrap();
        assert!(!dead.exists());
        assert!(alive.exists() && other.exists());
        assert_eq!(fs::read(&p).unwrap(), b"model");
    }

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left behind"
        );
    }

    #[test]
    fn failed_write_keeps_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"good").unwrap();
        let err = write_atomic_with(&p, |_| Err(std::io::Error::other("boom")));
        assert!(err.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"good");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_directory_is_an_error_naming_the_file() {
        let e = write_atomic(Path::new("/nonexistent-dir/x.bin"), b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/x.bin"), "{e}");
    }
}
