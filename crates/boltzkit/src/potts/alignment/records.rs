//! The records of an alignment file (name and letters as written), with the line of every
//! letter, so that each later fault names its line: FASTA / A2M (`>name` then sequence lines)
//! and Stockholm (`# STOCKHOLM 1.0`, `name letters` lines in blocks, `#` annotations, `//`).

pub(crate) use crate::data::parse_error as fault;
use crate::error::Result;
use std::collections::HashMap;
use std::path::Path;

/// One sequence as written in the file.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The name: the first word of a FASTA header, the first field of a Stockholm line.
    pub name: String,
    /// The 1-based line where the record starts (its header, or its first Stockholm line).
    pub line: usize,
    /// The letters, whitespace removed.
    pub letters: Vec<u8>,
    /// `(first column, line)` of each line the letters came from, in order.
    pieces: Vec<(usize, usize)>,
}

impl Record {
    fn new(name: String, line: usize) -> Self {
        Record {
            name,
            line,
            letters: Vec::new(),
            pieces: Vec::new(),
        }
    }

    /// Appends the non-whitespace bytes of `text`, read on `line`.
    fn push(&mut self, text: &[u8], line: usize) {
        self.pieces.push((self.letters.len(), line));
        self.letters
            .extend(text.iter().copied().filter(|b| !b.is_ascii_whitespace()));
    }

    /// The 1-based line holding the letter at (0-based) `column`; the last line for a column
    /// past the end.
    pub fn line_of(&self, column: usize) -> usize {
        let k = self.pieces.partition_point(|&(start, _)| start <= column);
        if k == 0 {
            self.line
        } else {
            self.pieces[k - 1].1
        }
    }

    /// The last line of the record.
    pub fn last_line(&self) -> usize {
        self.pieces.last().map_or(self.line, |p| p.1)
    }
}

/// The lines of `bytes` with their 1-based numbers, `\r` endings removed.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes.split(|&b| b == b'\n').enumerate().map(|(i, l)| {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        (i + 1, l)
    })
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// `text` shortened for a message.
pub(crate) fn shown(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// Refuses a second record named like an earlier one.
struct Names(HashMap<String, usize>);

impl Names {
    fn check(&mut self, path: &Path, name: &str, line: usize) -> Result<()> {
        if let Some(first) = self.0.insert(name.to_string(), line) {
            return Err(fault(
                path,
                Some(line),
                None,
                "a name used by one sequence only",
                format!("a second sequence named {name} (the first is at line {first})"),
            ));
        }
        Ok(())
    }
}

/// The records of a FASTA or A2M file.
pub(crate) fn fasta(path: &Path, bytes: &[u8]) -> Result<Vec<Record>> {
    let mut records: Vec<Record> = Vec::new();
    let mut names = Names(HashMap::new());
    for (n, line) in lines(bytes) {
        if let Some(header) = line.strip_prefix(b">") {
            let name = header
                .split(u8::is_ascii_whitespace)
                .find(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .ok_or_else(|| fault(path, Some(n), None, "a name after '>'", "an empty header"))?;
            names.check(path, &name, n)?;
            records.push(Record::new(name, n));
        } else if is_blank(line) {
            continue;
        } else {
            match records.last_mut() {
                Some(r) => r.push(line, n),
                None => {
                    return Err(fault(
                        path,
                        Some(n),
                        None,
                        "a FASTA header line starting with '>' (or '# STOCKHOLM 1.0')",
                        format!("{:?}", shown(line)),
                    ))
                }
            }
        }
    }
    Ok(records)
}

/// The records of a Stockholm file (one alignment; interleaved blocks joined by name).
pub(crate) fn stockholm(path: &Path, bytes: &[u8]) -> Result<Vec<Record>> {
    let mut records: Vec<Record> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut in_block: Names = Names(HashMap::new());
    let mut header = false;
    let mut ended: Option<usize> = None;
    let mut last = 1;
    for (n, line) in lines(bytes) {
        if is_blank(line) {
            in_block.0.clear();
            continue;
        }
        last = n;
        if let Some(end) = ended {
            return Err(fault(
                path,
                Some(n),
                None,
                format!("nothing after the end line '//' of line {end} (one alignment per file)"),
                format!("{:?}", shown(line)),
            ));
        }
        if !header {
            if !line.starts_with(b"# STOCKHOLM") {
                return Err(fault(
                    path,
                    Some(n),
                    None,
                    "the header '# STOCKHOLM 1.0'",
                    format!("{:?}", shown(line)),
                ));
            }
            header = true;
            continue;
        }
        if line.starts_with(b"//") {
            ended = Some(n);
            continue;
        }
        if line.starts_with(b"#") {
            continue;
        }
        let mut fields = line
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty());
        let (name, letters) = match (fields.next(), fields.next(), fields.next()) {
            (Some(name), Some(letters), None) => (String::from_utf8_lossy(name), letters),
            _ => {
                return Err(fault(
                    path,
                    Some(n),
                    None,
                    "a sequence line 'name letters' (two fields)",
                    format!("{:?}", shown(line)),
                ))
            }
        };
        in_block.check(path, &name, n)?;
        let k = *index.entry(name.to_string()).or_insert_with(|| {
            records.push(Record::new(name.to_string(), n));
            records.len() - 1
        });
        records[k].push(letters, n);
    }
    if header && ended.is_none() {
        return Err(fault(
            path,
            Some(last),
            None,
            "the end line '//' of the Stockholm alignment",
            "the end of the file (truncated?)",
        ));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fasta_joins_lines_and_remembers_them() {
        let text = b">a desc\nAC\nDE\n\n>b\r\nACDE\r\n";
        let r = fasta(Path::new("x.fa"), text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].name.as_str(), r[0].letters.as_slice()),
            ("a", &b"ACDE"[..])
        );
        assert_eq!(
            (
                r[0].line_of(0),
                r[0].line_of(1),
                r[0].line_of(2),
                r[0].line_of(3)
            ),
            (2, 2, 3, 3)
        );
        assert_eq!((r[1].name.as_str(), r[1].line), ("b", 5));
        assert_eq!(r[1].letters, b"ACDE");
    }

    #[test]
    fn stockholm_joins_blocks_by_name() {
        let text =
            b"# STOCKHOLM 1.0\n#=GF ID x\na/1-4 AC\nb AC\n\na/1-4 DE\nb D.\n#=GC RF xxxx\n//\n";
        let r = stockholm(Path::new("x.sto"), text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "a/1-4");
        assert_eq!(r[0].letters, b"ACDE");
        assert_eq!(r[1].letters, b"ACD.");
        assert_eq!(r[1].line_of(3), 7);
    }

    #[test]
    fn faults_name_the_line() {
        let e = fasta(Path::new("x.fa"), b"AC\n>a\nAC\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.fa:1: expected a FASTA header"), "{e}");
        let e = fasta(Path::new("x.fa"), b">a\nAC\n>a\nAC\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.fa:3:") && e.contains("first is at line 1"),
            "{e}"
        );
        let e = fasta(Path::new("x.fa"), b">\nAC\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.fa:1: expected a name"), "{e}");
        let e = stockholm(Path::new("x.sto"), b"# STOCKHOLM 1.0\na AC\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'//'") && e.contains("truncated"), "{e}");
        let e = stockholm(Path::new("x.sto"), b"# STOCKHOLM 1.0\na AC\na AC\n//\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.sto:3:") && e.contains("second sequence named a"),
            "{e}"
        );
        let e = stockholm(Path::new("x.sto"), b"# STOCKHOLM 1.0\na A C\n//\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.sto:2: expected a sequence line"), "{e}");
    }
}
