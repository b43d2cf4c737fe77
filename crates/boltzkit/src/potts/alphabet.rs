//! [`Alphabet`]: the letters of a sequence alignment and their integer codes.
//!
//! Codes are positions in the alphabet's string: with the protein alphabet
//! `-ACDEFGHIKLMNPQRSTVWY` (plmc's, gap first) `-` is 0, `A` is 1, …, `Y` is 20. Reading a
//! letter also says whether it was written in the insert convention of A2M and Stockholm files
//! (a lowercase letter, or `.`), which decides which columns an alignment keeps
//! ([`super::alignment`]).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The protein alphabet, gap first (plmc's order): 21 states.
pub const PROTEIN: &str = "-ACDEFGHIKLMNPQRSTVWY";
/// The RNA alphabet, gap first: 5 states.
pub const RNA: &str = "-ACGU";
/// The DNA alphabet, gap first: 5 states.
pub const DNA: &str = "-ACGT";

/// The largest number of letters an alphabet may have.
pub const MAX_LETTERS: usize = 127;

/// A letter that is not in the alphabet.
const UNKNOWN: u8 = 0xFF;
/// The flag [`Alphabet::lookup`] sets on a letter written as an insert (lowercase or `.`).
pub const INSERT: u8 = 0x80;

/// The letters of an alignment, their codes, and which one (if any) is the gap.
///
/// Letters are ASCII and not lowercase (plmc's rule: uppercase letters and symbols), so a
/// lowercase letter in a file is always the insert form of its uppercase letter. The gap is the
/// first letter when that letter is `-` or `.`; `-` and `.` in a file both read as that gap
/// (`.` as an insert). An alphabet whose first letter is neither (such as `_*^`, the synthetic
/// Potts chain's) has no gap, and `-` or `.` in its files are unknown letters.
///
/// ```
/// use boltzkit::potts::Alphabet;
/// let a = Alphabet::parse("protein")?;
/// assert_eq!((a.len(), a.gap()), (21, Some(0)));
/// assert_eq!(a.letter(1), 'A');
/// assert_eq!(Alphabet::parse("_*^")?.gap(), None);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Alphabet {
    letters: String,
    /// What [`Alphabet::parse`] was given: a name (`protein`, `rna`, `dna`) or the letters.
    spec: String,
    /// Byte → code, with [`INSERT`] set for the insert forms; [`UNKNOWN`] for anything else.
    table: [u8; 256],
}

impl std::fmt::Debug for Alphabet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Alphabet({:?})", self.letters)
    }
}

impl std::fmt::Display for Alphabet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.spec.as_str() {
            "protein" => write!(f, "the protein alphabet {}", self.letters),
            "rna" | "dna" => write!(
                f,
                "the {} alphabet {}",
                self.spec.to_uppercase(),
                self.letters
            ),
            _ => write!(f, "the alphabet {}", self.letters),
        }
    }
}

impl Default for Alphabet {
    fn default() -> Self {
        Alphabet::parse("protein").expect("the protein alphabet is valid")
    }
}

impl TryFrom<String> for Alphabet {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        Alphabet::parse(&s)
    }
}

impl From<Alphabet> for String {
    fn from(a: Alphabet) -> String {
        a.spec().to_string()
    }
}

impl Alphabet {
    /// An alphabet by name (`protein`, `rna`, `dna`) or by its letters in code order (e.g.
    /// `-ACGU`, `_*^`): ASCII, no lowercase letter, no whitespace, no letter twice, 2 to
    /// [`MAX_LETTERS`] letters. An invalid one is [`Error::InvalidParam`] naming `alphabet`.
    pub fn parse(spec: &str) -> Result<Self> {
        let letters = match spec {
            "protein" => PROTEIN,
            "rna" => RNA,
            "dna" => DNA,
            other => other,
        };
        let bad = |reason: String| Error::param("alphabet", reason);
        if letters.chars().count() < 2 || letters.len() > MAX_LETTERS {
            return Err(bad(format!(
                "expected `protein`, `rna`, `dna` or 2 to {MAX_LETTERS} letters, found {spec:?}"
            )));
        }
        let mut table = [UNKNOWN; 256];
        for (code, c) in letters.chars().enumerate() {
            if !c.is_ascii() || c.is_ascii_whitespace() || c.is_ascii_control() {
                return Err(bad(format!(
                    "letters must be printable ASCII, found {c:?} in {spec:?}"
                )));
            }
            if c.is_ascii_lowercase() {
                return Err(bad(format!(
                    "letters must not be lowercase (lowercase marks inserts), found {c:?} in \
                     {spec:?}; write {:?}",
                    c.to_ascii_uppercase()
                )));
            }
            let b = c as u8;
            if table[b as usize] != UNKNOWN {
                return Err(bad(format!("the letter {c:?} appears twice in {spec:?}")));
            }
            table[b as usize] = code as u8;
            if c.is_ascii_uppercase() {
                table[c.to_ascii_lowercase() as usize] = code as u8 | INSERT;
            }
        }
        let first = letters.as_bytes()[0];
        if first == b'-' || first == b'.' {
            let other = if first == b'-' { b'.' } else { b'-' };
            if table[other as usize] == UNKNOWN {
                table[other as usize] = if other == b'.' { INSERT } else { 0 };
            }
            if first == b'.' {
                table[b'.' as usize] = INSERT;
            }
        }
        Ok(Alphabet {
            letters: letters.to_string(),
            spec: spec.to_string(),
            table,
        })
    }

    /// The name given to [`Alphabet::parse`] (`protein`, `rna`, `dna`), else the letters.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The letters in code order.
    pub fn letters(&self) -> &str {
        &self.letters
    }

    /// The number of letters `q` (the number of states of each site).
    pub fn len(&self) -> usize {
        self.letters.len()
    }

    /// Always false: an alphabet has at least two letters.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The code of the gap (0), when the first letter is `-` or `.`.
    pub fn gap(&self) -> Option<u8> {
        let first = self.letters.as_bytes()[0];
        (first == b'-' || first == b'.').then_some(0)
    }

    /// The letter of `code` (`code < len()`).
    pub fn letter(&self, code: u8) -> char {
        self.letters.as_bytes()[code as usize] as char
    }

    /// The code of byte `b` as written in a file, with [`INSERT`] set for a lowercase letter
    /// or `.`; `None` for a byte outside the alphabet.
    #[inline]
    pub fn lookup(&self, b: u8) -> Option<u8> {
        let v = self.table[b as usize];
        (v != UNKNOWN).then_some(v)
    }

    /// The codes of a string of letters (inserts read as their letters); `None` at the first
    /// letter outside the alphabet.
    pub fn encode(&self, text: &str) -> Option<Vec<u8>> {
        text.bytes()
            .map(|b| self.lookup(b).map(|v| v & !INSERT))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_alphabets_put_the_gap_first() {
        for (name, letters) in [("protein", PROTEIN), ("rna", RNA), ("dna", DNA)] {
            let a = Alphabet::parse(name).unwrap();
            assert_eq!(a.letters(), letters);
            assert_eq!(a.gap(), Some(0));
            assert_eq!(a.spec(), name);
        }
        let p = Alphabet::default();
        assert_eq!(p.lookup(b'A'), Some(1));
        assert_eq!(p.lookup(b'a'), Some(1 | INSERT));
        assert_eq!(p.lookup(b'-'), Some(0));
        assert_eq!(p.lookup(b'.'), Some(INSERT));
        assert_eq!(p.lookup(b'Y'), Some(20));
        assert_eq!(p.lookup(b'X'), None);
        assert_eq!(p.lookup(b'x'), None);
        assert_eq!(p.encode("-AcY"), Some(vec![0, 1, 2, 20]));
    }

    #[test]
    fn given_letters_without_gap() {
        let a = Alphabet::parse("_*^").unwrap();
        assert_eq!((a.len(), a.gap()), (3, None));
        assert_eq!(a.lookup(b'^'), Some(2));
        assert_eq!(a.lookup(b'-'), None);
        assert_eq!(a.lookup(b'.'), None);
        let dot = Alphabet::parse(".ACGU").unwrap();
        assert_eq!(dot.gap(), Some(0));
        assert_eq!(dot.lookup(b'-'), Some(0));
        assert_eq!(dot.lookup(b'.'), Some(INSERT));
    }

    #[test]
    fn bad_alphabets_name_the_setting() {
        for bad in ["", "A", "AA", "-acgt", "AC GT", "AÇ"] {
            let e = Alphabet::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("invalid setting `alphabet`"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn serde_round_trip_keeps_the_name() {
        let a = Alphabet::parse("rna").unwrap();
        let s = serde_json::to_string(&a).unwrap();
        assert_eq!(s, "\"rna\"");
        let b: Alphabet = serde_json::from_str(&s).unwrap();
        assert_eq!(a, b);
        assert!(serde_json::from_str::<Alphabet>("\"ab\"").is_err());
    }
}
