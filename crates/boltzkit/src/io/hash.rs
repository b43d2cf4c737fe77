//! File digests, recorded in model metadata so a model names the exact data it was fit on.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The SHA-256 of the file at `path` as 64 lowercase hex digits, read in 64 KiB chunks.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("abc.txt");
/// std::fs::write(&p, "abc").unwrap();
/// assert_eq!(
///     boltzkit::io::sha256_file(&p).unwrap(),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(to_hex(&hasher.finalize()))
}

/// The SHA-256 of `bytes` as 64 lowercase hex digits (what [`sha256_file`] gives for a file
/// holding them).
///
/// ```
/// assert_eq!(
///     boltzkit::io::sha256_bytes(b"abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn sha256_bytes(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(
            sha256_file(&empty).unwrap(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // Larger than one read buffer: one million 'a' (a FIPS 180-2 test vector).
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 1_000_000]).unwrap();
        assert_eq!(
            sha256_file(&big).unwrap(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn missing_file_names_path() {
        let e = sha256_file(Path::new("/nonexistent-dir/data.npy")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir/data.npy"), "{e}");
    }
}
