//! Atomic file writes and the check of an output path before any work.
//!
//! [`write_atomic`] writes to a temporary file beside the target, syncs it, then renames it
//! over the target: a reader never sees a half-written model or log, and a failed write leaves
//! the previous file untouched. The target must be a regular file (or not exist yet): a rename
//! over a device (`/dev/null`), a FIFO or a directory would replace it with a regular file, so
//! such a target is refused and nothing is renamed. A symbolic link is followed: the file it
//! points to is replaced and the link stays.
//!
//! [`check_output`] makes the same checks before the work, and one more: it creates and
//! removes the temporary file the write will use, so a missing or read-only directory, a
//! directory the user cannot write and a name too long for the file system are all found
//! before a training run starts, not after it ends.
//!
//! The temporary is `.NAME.PID.tmp`; when that would pass [`NAME_MAX`] bytes (a valid name of
//! 252 bytes would), it is `.PREFIX~HASH.PID.tmp` with `PREFIX` the longest start of `NAME`
//! that fits and `HASH` a 64-bit hash of the whole name, so any name that fits the file system
//! has a temporary that fits too. One left behind by a process that was killed mid-write is
//! removed by the next write to `NAME` (when that process is gone).

use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// The longest file name (bytes) of Linux's common file systems (ext4, xfs, btrfs, tmpfs);
/// names and temporaries are kept within it.
pub const NAME_MAX: usize = 255;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes to `path` atomically through `fill`, which receives a buffered writer.
///
/// Fails, writing nothing, when `path` exists and is not a regular file (a device, a FIFO, a
/// directory): see the module documentation.
pub fn write_atomic_with<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let target = resolve_link(path);
    regular_or_absent(&target).map_err(|e| Error::io(path, explain(e, &target)))?;
    remove_orphans(&target);
    let tmp = temp_path(&target);
    let result = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        // checked again: the target may have been replaced while the file was written
        regular_or_absent(&target)?;
        fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, explain(e, &target)));
    }
    Ok(())
}

/// Checks, before any work, that [`write_atomic`] can write `path`: its directory exists and
/// is a directory, its name and its temporary fit the file system's name limit, an existing
/// target is a regular file (a device, a FIFO or a directory is refused), and the temporary
/// file can be created in the directory (which finds a read-only file system, a directory
/// the user may not write, a full disk with no room for a name). The probe is removed; nothing
/// else is touched, and an existing target is left as it is.
///
/// The error is an [`Error::Io`] naming `path` and saying what is wrong in one line.
///
/// ```
/// use boltzkit::io::check_output;
/// let dir = tempfile::tempdir().unwrap();
/// assert!(check_output(&dir.path().join("m.safetensors")).is_ok());
/// let e = check_output(&dir.path().join("nodir/m.safetensors")).unwrap_err();
/// assert!(e.to_string().contains("does not exist"), "{e}");
/// assert!(check_output(std::path::Path::new("/dev/null")).is_err());
/// ```
pub fn check_output(path: &Path) -> Result<()> {
    let fail = |e: std::io::Error| Error::io(path, e);
    let Some(name) = path.file_name() else {
        return Err(fail(std::io::Error::new(
            ErrorKind::InvalidInput,
            "the path names a directory, not a file; add a file name",
        )));
    };
    let len = name.as_encoded_bytes().len();
    if len > NAME_MAX {
        return Err(fail(std::io::Error::new(
            ErrorKind::InvalidFilename,
            format!("the file name is {len} bytes long, the file system allows at most {NAME_MAX}; choose a shorter name"),
        )));
    }
    let target = resolve_link(path);
    let dir = directory_of(&target);
    match fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(fail(std::io::Error::new(
                ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            )))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(fail(std::io::Error::new(
                ErrorKind::NotFound,
                format!(
                    "the directory {} does not exist; create it first",
                    dir.display()
                ),
            )))
        }
        Err(e) => return Err(fail(explain(e, &target))),
    }
    regular_or_absent(&target).map_err(fail)?;
    let tmp = temp_path(&target);
    match OpenOptions::new().write(true).create_new(true).open(&tmp) {
        Ok(file) => {
            drop(file);
            fs::remove_file(&tmp).map_err(|e| fail(explain(e, &target)))
        }
        // a write of this process to the same target is in flight: the directory is writable
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(fail(explain(e, &target))),
    }
}

/// Checks, before any work, that files can be written into the folder `dir` (created by the
/// command when missing): an existing `dir` must be a directory, a missing one must have an
/// existing directory above it, and that directory must take a new file ([`check_output`] of
/// a probe name inside it). Nothing is created or left behind.
///
/// ```
/// use boltzkit::io::check_output_dir;
/// let dir = tempfile::tempdir().unwrap();
/// assert!(check_output_dir(&dir.path().join("figures")).is_ok());
/// assert!(check_output_dir(&dir.path().join("a/b/figures")).is_ok());
/// assert!(check_output_dir(std::path::Path::new("/dev/null/figures")).is_err());
/// ```
pub fn check_output_dir(dir: &Path) -> Result<()> {
    let mut existing = dir;
    loop {
        match fs::metadata(existing) {
            Ok(m) if m.is_dir() => break,
            Ok(m) => {
                return Err(Error::io(
                    dir,
                    std::io::Error::new(
                        ErrorKind::NotADirectory,
                        format!(
                            "{} is {}, not a directory; name a folder for the output files",
                            existing.display(),
                            kind_of(&m)
                        ),
                    ),
                ))
            }
            // (a file on the way up answers "not a directory": go on up to find it)
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                match existing.parent() {
                    Some(p) if !p.as_os_str().is_empty() => existing = p,
                    _ => {
                        existing = Path::new(".");
                        break;
                    }
                }
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
    }
    check_output(&existing.join(".boltzkit-probe")).map_err(|e| match e {
        Error::Io { source, .. } => Error::io(dir, source),
        e => e,
    })
}

/// `Ok` when `path` does not exist or is a regular file (after links); otherwise an error
/// naming what it is.
fn regular_or_absent(path: &Path) -> std::io::Result<()> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file; boltzkit replaces an output by renaming a \
                 finished file over it, which would replace it: name a regular file",
                kind_of(&m)
            ),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// What a non-regular file is, in words.
fn kind_of(m: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if m.is_dir() {
        "a directory"
    } else if m.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// An OS error with the likely cause in words (the raw text alone, "Read-only file system",
/// does not say which directory).
fn explain(e: std::io::Error, target: &Path) -> std::io::Error {
    let dir = directory_of(target);
    let why = match e.kind() {
        ErrorKind::NotFound if !dir.exists() => {
            format!(
                "the directory {} does not exist; create it first",
                dir.display()
            )
        }
        ErrorKind::ReadOnlyFilesystem => format!("{} is on a read-only file system", dir.display()),
        ErrorKind::PermissionDenied => {
            format!("no permission to create files in {}", dir.display())
        }
        ErrorKind::StorageFull => format!("no space left on the device of {}", dir.display()),
        ErrorKind::QuotaExceeded => format!("disk quota exceeded in {}", dir.display()),
        ErrorKind::InvalidFilename => {
            "the file name is too long for this file system; choose a shorter name".to_string()
        }
        _ => return e,
    };
    std::io::Error::new(e.kind(), why)
}

/// The file a symbolic link at `path` points to (so the write replaces it and keeps the
/// link); `path` itself when it is not a link or the link dangles.
fn resolve_link(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or(path.into()),
        _ => path.to_path_buf(),
    }
}

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The stem of the temporaries of `name`: `.NAME`, or `.PREFIX~HASH` when `.NAME.PID.tmp`
/// would not fit [`NAME_MAX`] bytes.
fn temp_stem(name: &str) -> String {
    // room for ".", ".", the longest u32 pid (10 digits) and ".tmp"
    const PID_AND_SUFFIX: usize = 1 + 10 + 4;
    if 1 + name.len() + PID_AND_SUFFIX <= NAME_MAX {
        return format!(".{name}");
    }
    let hash = format!("~{:016x}", fnv1a(name.as_bytes()));
    let room = NAME_MAX - 1 - hash.len() - PID_AND_SUFFIX;
    let mut cut = room.min(name.len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}{hash}", &name[..cut])
}

/// 64-bit FNV-1a: a stable hash that tells long names with a common start apart.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Removes `.NAME.PID.tmp` files beside `path` whose process `PID` no longer runs (left by a
/// write that was killed). Best effort: errors are ignored, and without `/proc` nothing is
/// removed.
fn remove_orphans(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let dir = directory_of(path);
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!("{}.", temp_stem(&name));
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
    directory_of(path).join(format!("{}.{}.tmp", temp_stem(&name), std::process::id()))
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

    fn fifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A valid 252-byte name is written (its temporary is shortened and hashed, never past
    /// 255 bytes), leaves nothing behind, and passes the check; 256 bytes is refused up front.
    #[test]
    fn long_names_fit_with_their_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        for len in [240, 252, 255] {
            let name = format!("{}.npy", "m".repeat(len - 4));
            let p = dir.path().join(&name);
            check_output(&p).unwrap();
            write_atomic(&p, b"x").unwrap();
            assert_eq!(names_in(dir.path()), vec![name.clone()]);
            fs::remove_file(&p).unwrap();
            assert!(temp_path(&p).file_name().unwrap().len() <= NAME_MAX);
        }
        // two long names with a common start get different temporaries
        let a = format!("{}a", "m".repeat(250));
        let b = format!("{}b", "m".repeat(250));
        assert_ne!(temp_stem(&a), temp_stem(&b));
        let e = check_output(&dir.path().join("n".repeat(256))).unwrap_err();
        assert!(e.to_string().contains("256 bytes long"), "{e}");
        assert!(names_in(dir.path()).is_empty());
    }

    /// A killed write of a long name leaves a shortened temporary; the next write removes it.
    #[test]
    fn orphans_of_long_names_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let name = "q".repeat(252);
        let p = dir.path().join(&name);
        let orphan = dir
            .path()
            .join(format!("{}.4000000000.tmp", temp_stem(&name)));
        fs::write(&orphan, b"partial").unwrap();
        write_atomic(&p, b"x").unwrap();
        assert_eq!(names_in(dir.path()), vec![name]);
    }

    /// Devices, FIFOs and directories are refused by the check and by the write, and stay
    /// what they were; a link to a device is refused too (the device is never replaced).
    #[test]
    fn non_regular_targets_are_refused_and_untouched() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe.npy");
        fifo(&pipe);
        let link = dir.path().join("null.jsonl");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let sub = dir.path().join("sub.safetensors");
        fs::create_dir(&sub).unwrap();
        for (p, what) in [
            (&pipe, "a FIFO"),
            (&link, "a character device"),
            (&sub, "a directory"),
        ] {
            let e = check_output(p).unwrap_err().to_string();
            assert!(e.contains(what) && e.contains("not a regular file"), "{e}");
            let e = write_atomic(p, b"x").unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
        assert!(fs::metadata(&pipe).unwrap().file_type().is_fifo());
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(sub.is_dir());
        assert_eq!(
            names_in(dir.path()),
            vec!["null.jsonl", "pipe.npy", "sub.safetensors"],
            "no temporary left"
        );
    }

    /// A link to a regular file: the file is replaced, the link stays a link.
    #[test]
    fn links_to_regular_files_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.jsonl");
        fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        check_output(&link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    /// Output folders: existing, to be created (under an existing one), or blocked by a file.
    #[test]
    fn output_folders() {
        let dir = tempfile::tempdir().unwrap();
        check_output_dir(dir.path()).unwrap();
        check_output_dir(&dir.path().join("new/deeper")).unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"data").unwrap();
        let e = check_output_dir(&file.join("sub")).unwrap_err().to_string();
        assert!(e.contains("is a regular file, not a directory"), "{e}");
        assert!(check_output_dir(&file).is_err());
        assert_eq!(names_in(dir.path()), vec!["f"]);
    }

    /// A missing directory, a file where the directory should be, and a path naming no file
    /// are refused with their reason; an existing regular target is left as it was.
    #[test]
    fn check_names_the_fault_and_touches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_output(&dir.path().join("nodir/m.safetensors")).unwrap_err();
        assert!(e.to_string().contains("nodir does not exist"), "{e}");
        let file = dir.path().join("f");
        fs::write(&file, b"data").unwrap();
        let e = check_output(&file.join("m.safetensors")).unwrap_err();
        assert!(e.to_string().contains("is not a directory"), "{e}");
        assert!(check_output(Path::new("/")).is_err());
        check_output(&file).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"data");
        assert_eq!(names_in(dir.path()), vec!["f"]);
    }

    #[test]
    fn missing_directory_is_an_error_naming_the_file() {
        let e = write_atomic(Path::new("/nonexistent-dir/x.bin"), b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/x.bin"), "{e}");
    }
}
