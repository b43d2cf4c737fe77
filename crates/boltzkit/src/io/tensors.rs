//! Model files: named tensors plus string metadata in the safetensors format.
//!
//! Files written by [`save_tensors`] are plain safetensors (little-endian, C order) and load in
//! Python with `safetensors.numpy.load_file(path)`; the metadata is the file's `__metadata__`
//! map (`safetensors.safe_open(path, "np").metadata()`). Every boltzkit model file carries a
//! metadata key `format` (e.g. `boltzkit/fsll/v1`) checked on load by
//! [`TensorFile::require_format`]. A file written with the metadata key [`CHECKSUM_KEY`]
//! carries the SHA-256 of its content and is refused on load when it no longer matches
//! (training checkpoints do).
//!
//! ```
//! use boltzkit::io::{load_tensors, save_tensors, NamedTensor, TensorData};
//! use std::collections::BTreeMap;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("model.safetensors");
//! let tensors = [NamedTensor::new("theta", vec![2], TensorData::F64(vec![0.5, -1.0])).unwrap()];
//! let meta = BTreeMap::from([("format".to_string(), "boltzkit/fsll/v1".to_string())]);
//! save_tensors(&path, &tensors, &meta).unwrap();
//!
//! let file = load_tensors(&path).unwrap();
//! file.require_format("boltzkit/fsll/v1").unwrap();
//! let (shape, theta) = file.f64("theta").unwrap();
//! assert_eq!((shape, theta), (&[2usize][..], &[0.5, -1.0][..]));
//! ```

use crate::error::{Error, Result};
use crate::io::atomic::write_atomic;
use safetensors::tensor::{Dtype, SafeTensorError, SafeTensors, TensorView};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The values of a tensor, flattened in C (row-major) order.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    /// 64-bit floats (safetensors dtype `F64`).
    F64(Vec<f64>),
    /// 32-bit floats (safetensors dtype `F32`).
    F32(Vec<f32>),
    /// 64-bit unsigned integers (safetensors dtype `U64`).
    U64(Vec<u64>),
}

impl TensorData {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            TensorData::F64(v) => v.len(),
            TensorData::F32(v) => v.len(),
            TensorData::U64(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dtype name as safetensors spells it (`F64`, `F32`, `U64`).
    pub fn dtype_name(&self) -> &'static str {
        match self {
            TensorData::F64(_) => "F64",
            TensorData::F32(_) => "F32",
            TensorData::U64(_) => "U64",
        }
    }

    fn dtype(&self) -> Dtype {
        match self {
            TensorData::F64(_) => Dtype::F64,
            TensorData::F32(_) => Dtype::F32,
            TensorData::U64(_) => Dtype::U64,
        }
    }

    pub(crate) fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            TensorData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TensorData::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

/// One tensor of a model file: a name, a shape and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensor {
    /// The tensor's name in the file (e.g. `theta`, `W`).
    pub name: String,
    /// The shape; the product of its entries is the number of values (`[]` is a scalar).
    pub shape: Vec<usize>,
    /// The values in C order.
    pub data: TensorData,
}

impl NamedTensor {
    /// A tensor whose shape is checked against the number of values.
    pub fn new(name: impl Into<String>, shape: Vec<usize>, data: TensorData) -> Result<Self> {
        let t = NamedTensor {
            name: name.into(),
            shape,
            data,
        };
        t.check_shape()?;
        Ok(t)
    }

    fn check_shape(&self) -> Result<()> {
        let n = self
            .shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| Error::Shape {
                op: format!("tensor `{}`", self.name),
                expected: "a shape whose element count fits in usize".into(),
                found: format!("{:?}", self.shape),
            })?;
        if n != self.data.len() {
            return Err(Error::Shape {
                op: format!("tensor `{}`", self.name),
                expected: format!("{n} values for shape {:?}", self.shape),
                found: format!("{} values", self.data.len()),
            });
        }
        Ok(())
    }
}

/// The metadata key holding a file's content checksum. A caller asks for one by putting this
/// key (any value) in the metadata given to [`save_tensors`], which writes the
/// checksum in its place.
pub const CHECKSUM_KEY: &str = "content_sha256";

/// The hex SHA-256 of `tensors` (name, dtype, shape and little-endian values, in name order)
/// and of every metadata entry but [`CHECKSUM_KEY`] (in key order), each field
/// length-prefixed so no two contents hash alike by shifting bytes between fields.
pub(crate) fn content_checksum<'a>(
    tensors: impl IntoIterator<Item = &'a NamedTensor>,
    metadata: &BTreeMap<String, String>,
) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    let mut sorted: Vec<&NamedTensor> = tensors.into_iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for t in sorted {
        field(t.name.as_bytes());
        field(t.data.dtype_name().as_bytes());
        let shape: Vec<u8> = t
            .shape
            .iter()
            .flat_map(|&d| (d as u64).to_le_bytes())
            .collect();
        field(&shape);
        field(&t.data.to_le_bytes());
    }
    for (k, v) in metadata.iter().filter(|(k, _)| *k != CHECKSUM_KEY) {
        field(k.as_bytes());
        field(v.as_bytes());
    }
    crate::io::hash::to_hex(&h.finalize())
}

/// Writes `tensors` and `metadata` to `path` as a safetensors file, atomically. A metadata
/// key [`CHECKSUM_KEY`] (any value) asks for the content checksum, written in its place.
///
/// Fails with [`Error::Shape`] when a tensor's shape does not match its number of values,
/// [`Error::InvalidParam`] on an empty or repeated tensor name, and [`Error::Io`] when the file
/// cannot be written (the previous file, if any, is then left untouched).
pub fn save_tensors(
    path: &Path,
    tensors: &[NamedTensor],
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    let mut seen = HashSet::new();
    for t in tensors {
        if t.name.is_empty() {
            return Err(Error::param("tensor name", "must not be empty"));
        }
        if t.name == "__metadata__" {
            return Err(Error::param(
                "tensor name",
                "`__metadata__` is reserved by the safetensors format",
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(Error::param(
                "tensor name",
                format!("`{}` appears more than once", t.name),
            ));
        }
        t.check_shape()?;
    }
    let bytes: Vec<Vec<u8>> = tensors.iter().map(|t| t.data.to_le_bytes()).collect();
    let mut views = Vec::with_capacity(tensors.len());
    for (t, b) in tensors.iter().zip(&bytes) {
        let view =
            TensorView::new(t.data.dtype(), t.shape.clone(), b).map_err(|e| Error::Shape {
                op: format!("tensor `{}`", t.name),
                expected: format!("{:?} data for shape {:?}", t.data.dtype(), t.shape),
                found: describe(&e),
            })?;
        views.push((t.name.as_str(), view));
    }
    let mut meta: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(sum) = meta.get_mut(CHECKSUM_KEY) {
        *sum = content_checksum(tensors, metadata);
    }
    let buffer = safetensors::serialize(views, &Some(meta)).map_err(|e| Error::Model {
        path: path.to_path_buf(),
        reason: format!("cannot serialize: {}", describe(&e)),
    })?;
    write_atomic(path, &sorted_header(path, buffer)?)
}

/// `buffer` (a serialized safetensors file) with its JSON header rewritten in key order: the
/// `safetensors` crate writes the metadata from a `HashMap`, whose order changes from process
/// to process, so without this the same model gave different bytes. The data section and its
/// offsets are unchanged; the header is padded with spaces to a multiple of 8 bytes, as the
/// format asks.
fn sorted_header(path: &Path, buffer: Vec<u8>) -> Result<Vec<u8>> {
    let bad = |what: String| Error::Model {
        path: path.to_path_buf(),
        reason: format!("cannot order the header: {what}"),
    };
    let len_bytes: [u8; 8] = buffer[..8]
        .try_into()
        .map_err(|_| bad("too short".into()))?;
    let n = usize::try_from(u64::from_le_bytes(len_bytes)).map_err(|e| bad(e.to_string()))?;
    let header: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&buffer[8..8 + n]).map_err(|e| bad(e.to_string()))?;
    let mut sorted = serde_json::Map::new();
    for (key, value) in header {
        let value = if key == "__metadata__" {
            let meta: BTreeMap<String, String> =
                serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
            serde_json::to_value(meta).map_err(|e| bad(e.to_string()))?
        } else {
            value
        };
        sorted.insert(key, value);
    }
    let mut json = serde_json::to_vec(&sorted).map_err(|e| bad(e.to_string()))?;
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut out = Vec::with_capacity(8 + json.len() + buffer.len() - 8 - n);
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&buffer[8 + n..]);
    Ok(out)
}

/// Writes a model file: `tensors`, the caller's `extra` metadata, then `format` and the
/// model's own `fields` (which take precedence over `extra`), atomically.
pub fn save_model(
    path: &Path,
    format: &str,
    tensors: &[NamedTensor],
    extra: &BTreeMap<String, String>,
    fields: &[(&str, String)],
) -> Result<()> {
    let mut meta = extra.clone();
    meta.insert("format".into(), format.into());
    for (k, v) in fields {
        meta.insert((*k).into(), v.clone());
    }
    save_tensors(path, tensors, &meta)
}

/// A model file read into memory: its tensors and its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorFile {
    /// The file it was read from (named in every error).
    pub path: PathBuf,
    /// Tensors by name.
    pub tensors: BTreeMap<String, NamedTensor>,
    /// The `__metadata__` map of the file.
    pub metadata: BTreeMap<String, String>,
}

/// Reads a safetensors file.
///
/// Fails with [`Error::Io`] when the file cannot be read and with [`Error::Model`] when it is
/// truncated, corrupt, or holds a tensor of a dtype other than F64, F32 or U64.
pub fn load_tensors(path: &Path) -> Result<TensorFile> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let model_err = |reason: String| Error::Model {
        path: path.to_path_buf(),
        reason,
    };
    let st = SafeTensors::deserialize(&bytes)
        .map_err(|e| model_err(format!("not a readable safetensors file: {}", describe(&e))))?;
    let (_, header) = SafeTensors::read_metadata(&bytes)
        .map_err(|e| model_err(format!("not a readable safetensors file: {}", describe(&e))))?;
    let metadata: BTreeMap<String, String> = header
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut tensors = BTreeMap::new();
    for (name, view) in st.iter() {
        let raw = view.data();
        let data = match view.dtype() {
            Dtype::F64 => TensorData::F64(
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("chunk of 8")))
                    .collect(),
            ),
            Dtype::F32 => TensorData::F32(
                raw.chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().expect("chunk of 4")))
                    .collect(),
            ),
            Dtype::U64 => TensorData::U64(
                raw.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("chunk of 8")))
                    .collect(),
            ),
            other => {
                return Err(model_err(format!(
                    "tensor `{name}` has dtype {other:?}; boltzkit reads F64, F32 and U64"
                )))
            }
        };
        let tensor = NamedTensor {
            name: name.to_string(),
            shape: view.shape().to_vec(),
            data,
        };
        // The safetensors reader validated offsets against shape and dtype; recheck cheaply.
        tensor.check_shape().map_err(|e| model_err(e.to_string()))?;
        tensors.insert(name.to_string(), tensor);
    }
    if let Some(sum) = metadata.get(CHECKSUM_KEY) {
        let found = content_checksum(tensors.values(), &metadata);
        if *sum != found {
            return Err(model_err(format!(
                "its content no longer matches the checksum written with it (a flipped bit, \
                 a truncated or edited copy): it cannot be trusted; use an earlier copy \
                 (content_sha256 {sum}, found {found})"
            )));
        }
    }
    Ok(TensorFile {
        path: path.to_path_buf(),
        tensors,
        metadata,
    })
}

impl TensorFile {
    /// An [`Error::Model`] naming this file, for readers that find its content invalid.
    pub fn invalid(&self, reason: impl Into<String>) -> Error {
        Error::Model {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn err(&self, reason: String) -> Error {
        self.invalid(reason)
    }

    /// Fails unless metadata `format` equals `expected` (e.g. `boltzkit/fsll/v1`).
    pub fn require_format(&self, expected: &str) -> Result<()> {
        match self.metadata.get("format") {
            Some(found) if found == expected => Ok(()),
            Some(found) => Err(self.err(format!("expected format `{expected}`, found `{found}`"))),
            None => Err(self.err(format!(
                "expected format `{expected}`, found no `format` metadata"
            ))),
        }
    }

    /// The metadata value of `key`.
    pub fn meta(&self, key: &str) -> Result<&str> {
        self.metadata
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| self.err(format!("missing metadata key `{key}`")))
    }

    fn tensor(&self, name: &str) -> Result<&NamedTensor> {
        self.tensors
            .get(name)
            .ok_or_else(|| self.err(format!("missing tensor `{name}`")))
    }

    fn mistyped(&self, t: &NamedTensor, expected: &str) -> Error {
        self.err(format!(
            "tensor `{}` should have dtype {expected}, found {}",
            t.name,
            t.data.dtype_name()
        ))
    }

    /// Shape and values of the F64 tensor `name`.
    pub fn f64(&self, name: &str) -> Result<(&[usize], &[f64])> {
        let t = self.tensor(name)?;
        match &t.data {
            TensorData::F64(v) => Ok((&t.shape, v)),
            _ => Err(self.mistyped(t, "F64")),
        }
    }

    /// Shape and values of the F32 tensor `name`.
    pub fn f32(&self, name: &str) -> Result<(&[usize], &[f32])> {
        let t = self.tensor(name)?;
        match &t.data {
            TensorData::F32(v) => Ok((&t.shape, v)),
            _ => Err(self.mistyped(t, "F32")),
        }
    }

    /// Shape and values of the U64 tensor `name`.
    pub fn u64(&self, name: &str) -> Result<(&[usize], &[u64])> {
        let t = self.tensor(name)?;
        match &t.data {
            TensorData::U64(v) => Ok((&t.shape, v)),
            _ => Err(self.mistyped(t, "U64")),
        }
    }
}

/// A readable sentence for a safetensors error (its own Display is its Debug form).
fn describe(e: &SafeTensorError) -> String {
    match e {
        SafeTensorError::InvalidHeader => "the header is not valid UTF-8".into(),
        SafeTensorError::InvalidHeaderStart => "the header does not start with `{`".into(),
        SafeTensorError::InvalidHeaderDeserialization => "the header is not valid JSON".into(),
        SafeTensorError::HeaderTooLarge => "the declared header size is too large".into(),
        SafeTensorError::HeaderTooSmall => "the file is shorter than the 8-byte header size".into(),
        SafeTensorError::InvalidHeaderLength => {
            "the declared header size runs past the end of the file (truncated?)".into()
        }
        SafeTensorError::TensorNotFound(n) => format!("tensor `{n}` not found"),
        SafeTensorError::TensorInvalidInfo => {
            "a tensor's byte range does not match its shape and dtype".into()
        }
        SafeTensorError::InvalidOffset(n) => format!("tensor `{n}` has invalid data offsets"),
        SafeTensorError::IoError(e) => e.to_string(),
        SafeTensorError::JsonError(e) => format!("JSON error: {e}"),
        SafeTensorError::InvalidTensorView(d, s, n) => {
            format!("{n} bytes do not fit dtype {d:?} with shape {s:?}")
        }
        SafeTensorError::MetadataIncompleteBuffer => {
            "the data section does not match the header (truncated or padded file?)".into()
        }
        SafeTensorError::ValidationOverflow => "a tensor's declared size overflows".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_tensors() -> Vec<NamedTensor> {
        vec![
            NamedTensor::new("basis", vec![3], TensorData::U64(vec![0, 5, u64::MAX])).unwrap(),
            NamedTensor::new(
                "theta",
                vec![3],
                TensorData::F64(vec![0.25, -1.5e300, f64::MIN_POSITIVE]),
            )
            .unwrap(),
            NamedTensor::new(
                "W",
                vec![2, 3],
                TensorData::F32(vec![1.0, 2.0, 3.0, -4.0, 0.5, 6.25]),
            )
            .unwrap(),
            NamedTensor::new("scalar", vec![], TensorData::F64(vec![7.0])).unwrap(),
            NamedTensor::new("empty", vec![0, 4], TensorData::F32(vec![])).unwrap(),
        ]
    }

    fn meta(format: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("format".to_string(), format.to_string()),
            ("cardinalities".to_string(), "[2,3,2]".to_string()),
        ])
    }

    /// The same tensors and metadata give the same bytes, the header in key order (the
    /// safetensors crate's `HashMap` order changes from map to map), and the file still loads.
    #[test]
    fn the_same_model_gives_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = meta("boltzkit/fsll/v1");
        for i in 0..20 {
            m.insert(format!("key{i:02}"), format!("value {i}"));
        }
        let bytes: Vec<Vec<u8>> = (0..4)
            .map(|i| {
                let p = dir.path().join(format!("m{i}.safetensors"));
                save_tensors(&p, &sample_tensors(), &m).unwrap();
                assert_eq!(load_tensors(&p).unwrap().metadata, m);
                std::fs::read(&p).unwrap()
            })
            .collect();
        assert!(bytes.windows(2).all(|w| w[0] == w[1]));
        let n = u64::from_le_bytes(bytes[0][..8].try_into().unwrap()) as usize;
        assert_eq!(n % 8, 0);
        let header = String::from_utf8(bytes[0][8..8 + n].to_vec()).unwrap();
        let at = |k: &str| header.find(k).unwrap();
        assert!(
            at("key00") < at("key01") && at("key01") < at("key19"),
            "{header}"
        );
    }

    #[test]
    fn round_trip_all_dtypes_shapes_and_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let tensors = sample_tensors();
        save_tensors(&p, &tensors, &meta("boltzkit/fsll/v1")).unwrap();
        let f = load_tensors(&p).unwrap();
        assert_eq!(f.path, p);
        assert_eq!(f.metadata, meta("boltzkit/fsll/v1"));
        assert_eq!(f.tensors.len(), tensors.len());
        for t in &tensors {
            assert_eq!(&f.tensors[&t.name], t);
        }
        f.require_format("boltzkit/fsll/v1").unwrap();
        assert_eq!(f.meta("cardinalities").unwrap(), "[2,3,2]");
        let (s, v) = f.u64("basis").unwrap();
        assert_eq!((s, v), (&[3usize][..], &[0, 5, u64::MAX][..]));
        let (s, v) = f.f32("W").unwrap();
        assert_eq!(s, &[2, 3]);
        assert_eq!(v[5], 6.25);
        let (s, v) = f.f64("scalar").unwrap();
        assert!(s.is_empty());
        assert_eq!(v, &[7.0]);
    }

    #[test]
    fn bytes_are_little_endian_safetensors_layout() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let t = NamedTensor::new("x", vec![1], TensorData::U64(vec![0x0102_0304])).unwrap();
        save_tensors(&p, &[t], &BTreeMap::new()).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(n % 8, 0, "header padded to 8 bytes");
        let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
        assert_eq!(header["x"]["dtype"], "U64");
        assert_eq!(header["x"]["shape"], serde_json::json!([1]));
        assert_eq!(&bytes[8 + n..], &[4, 3, 2, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn wrong_format_names_file_expected_and_found() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rbm.safetensors");
        save_tensors(&p, &sample_tensors(), &meta("boltzkit/rbm/v1")).unwrap();
        let f = load_tensors(&p).unwrap();
        let e = f.require_format("boltzkit/fsll/v1").unwrap_err();
        assert!(matches!(e, Error::Model { .. }));
        let msg = e.to_string();
        assert!(msg.contains("rbm.safetensors"), "{msg}");
        assert!(msg.contains("boltzkit/fsll/v1"), "{msg}");
        assert!(msg.contains("boltzkit/rbm/v1"), "{msg}");

        save_tensors(&p, &sample_tensors(), &BTreeMap::new()).unwrap();
        let msg = load_tensors(&p)
            .unwrap()
            .require_format("boltzkit/fsll/v1")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("no `format`"), "{msg}");
    }

    #[test]
    fn missing_and_mistyped_tensors_and_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        save_tensors(&p, &sample_tensors(), &meta("boltzkit/fsll/v1")).unwrap();
        let f = load_tensors(&p).unwrap();
        let msg = f.f64("nope").unwrap_err().to_string();
        assert!(
            msg.contains("missing tensor `nope`") && msg.contains("m.safetensors"),
            "{msg}"
        );
        let msg = f.f64("W").unwrap_err().to_string();
        assert!(
            msg.contains("`W`") && msg.contains("F64") && msg.contains("F32"),
            "{msg}"
        );
        let msg = f.u64("theta").unwrap_err().to_string();
        assert!(msg.contains("`theta`") && msg.contains("U64"), "{msg}");
        let msg = f.f32("basis").unwrap_err().to_string();
        assert!(msg.contains("`basis`"), "{msg}");
        let msg = f.meta("seed").unwrap_err().to_string();
        assert!(msg.contains("metadata key `seed`"), "{msg}");
    }

    #[test]
    fn truncated_and_corrupt_files_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        save_tensors(&p, &sample_tensors(), &meta("boltzkit/fsll/v1")).unwrap();
        let good = std::fs::read(&p).unwrap();
        let bad = dir.path().join("bad.safetensors");
        // Every truncation, including the empty file.
        for len in 0..good.len() {
            std::fs::write(&bad, &good[..len]).unwrap();
            let e = load_tensors(&bad).unwrap_err();
            assert!(matches!(e, Error::Model { .. }), "len {len}: {e}");
            assert!(e.to_string().contains("bad.safetensors"), "{e}");
        }
        // Extra trailing bytes.
        let mut longer = good.clone();
        longer.extend_from_slice(&[0; 3]);
        std::fs::write(&bad, &longer).unwrap();
        assert!(load_tensors(&bad).is_err());
        // A header size claiming more than the file.
        let mut huge = good.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&bad, &huge).unwrap();
        assert!(load_tensors(&bad).is_err());
        // Garbage in the header.
        let mut garbled = good.clone();
        for b in &mut garbled[8..24] {
            *b = 0xff;
        }
        std::fs::write(&bad, &garbled).unwrap();
        let e = load_tensors(&bad).unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
        // Flipping any single byte never panics.
        for i in 0..good.len() {
            let mut flipped = good.clone();
            flipped[i] ^= 0x5a;
            std::fs::write(&bad, &flipped).unwrap();
            let _ = load_tensors(&bad);
        }
    }

    #[test]
    fn unsupported_dtype_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("i32.safetensors");
        let data = [1i32, 2]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<_>>();
        let view = TensorView::new(Dtype::I32, vec![2], &data).unwrap();
        std::fs::write(&p, safetensors::serialize([("ints", view)], &None).unwrap()).unwrap();
        let msg = load_tensors(&p).unwrap_err().to_string();
        assert!(msg.contains("`ints`") && msg.contains("I32"), "{msg}");
    }

    /// A file saved with a checksum loads; any flipped bit of its tensors or a changed
    /// metadata value is refused with the path; a file without one loads as before.
    #[test]
    fn checksums_refuse_a_corrupted_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ck.safetensors");
        let t = NamedTensor::new("w", vec![3], TensorData::F32(vec![0.5, -1.0, 2.0])).unwrap();
        let meta = BTreeMap::from([
            (CHECKSUM_KEY.to_string(), String::new()),
            ("epoch".to_string(), "7".to_string()),
        ]);
        save_tensors(&p, std::slice::from_ref(&t), &meta).unwrap();
        let back = load_tensors(&p).unwrap();
        assert_eq!(back.metadata[CHECKSUM_KEY].len(), 64);
        let good = std::fs::read(&p).unwrap();
        let data_start = good.len() - 12;
        for bit in [0, 9, 31, 95] {
            let mut bad = good.clone();
            bad[data_start + bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&p, &bad).unwrap();
            let e = load_tensors(&p).unwrap_err().to_string();
            assert!(
                e.contains("ck.safetensors") && e.contains("no longer matches"),
                "{e}"
            );
        }
        let at = good
            .windows(11)
            .position(|w| w == b"\"epoch\":\"7\"")
            .unwrap();
        let mut edited = good.clone();
        edited[at + 9] = b'8';
        std::fs::write(&p, &edited).unwrap();
        let e = load_tensors(&p).unwrap_err().to_string();
        assert!(e.contains("no longer matches"), "{e}");
        save_tensors(&p, &[t], &BTreeMap::new()).unwrap();
        assert!(load_tensors(&p).unwrap().metadata.is_empty());
    }

    #[test]
    fn missing_file_is_io_error() {
        let e = load_tensors(Path::new("/nonexistent-dir/m.safetensors")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }));
        assert!(e.to_string().contains("/nonexistent-dir/m.safetensors"));
    }

    #[test]
    fn invalid_inputs_are_rejected_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        assert!(matches!(
            NamedTensor::new("x", vec![2, 2], TensorData::F64(vec![1.0; 3])),
            Err(Error::Shape { .. })
        ));
        let bad_shape = NamedTensor {
            name: "x".into(),
            shape: vec![5],
            data: TensorData::F64(vec![1.0]),
        };
        assert!(save_tensors(&p, &[bad_shape], &BTreeMap::new()).is_err());
        let t = NamedTensor::new("x", vec![1], TensorData::F64(vec![1.0])).unwrap();
        let e = save_tensors(&p, &[t.clone(), t], &BTreeMap::new()).unwrap_err();
        assert!(e.to_string().contains("more than once"), "{e}");
        assert!(!p.exists(), "nothing written on invalid input");
    }
}
