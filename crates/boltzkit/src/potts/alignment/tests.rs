use super::*;
use crate::testutil::shared_data;

fn parse(name: &str, text: &str, params: &AlignmentParams) -> Result<Alignment> {
    parse_alignment(Path::new(name), text.as_bytes(), params)
}

fn codes(a: &Alignment) -> Vec<String> {
    a.codes
        .outer_iter()
        .map(|r| r.iter().map(|&c| a.alphabet.letter(c)).collect())
        .collect()
}

fn err(name: &str, text: &str, params: &AlignmentParams) -> String {
    parse(name, text, params).unwrap_err().to_string()
}

#[test]
fn fasta_reads_lowercase_as_uppercase_and_dot_as_gap() {
    let a = parse(
        "x.fasta",
        ">s1\nAC-D\n>s2 more words\nac.E\n",
        &Default::default(),
    )
    .unwrap();
    assert_eq!(codes(&a), ["AC-D", "AC-E"]);
    assert_eq!(a.names, ["s1", "s2"]);
    assert_eq!(a.columns, [0, 1, 2, 3]);
    assert_eq!(a.positions, [1, 2, 3, 4]);
    assert_eq!(a.codes[[0, 0]], 1);
    assert_eq!((a.focus, a.n_read), (None, 2));
    assert_eq!(a.dataset().unwrap().cardinalities(), &[21; 4]);
}

#[test]
fn a2m_drops_insert_columns() {
    let text = ">s1\nAcD.E\n>s2\nA.DkE\n>s3\nA.D.-\n";
    let a = parse("x.a2m", text, &Default::default()).unwrap();
    assert_eq!(codes(&a), ["ADE", "ADE", "AD-"]);
    assert_eq!(a.columns, [0, 2, 4]);
    assert_eq!(a.positions, [1, 3, 5]);
    assert_eq!(a.removed.insert_columns, 2);
    // The same letters as FASTA keep every column.
    let fasta = AlignmentParams {
        format: Some(AlignmentFormat::Fasta),
        ..Default::default()
    };
    assert_eq!(parse("x.a2m", text, &fasta).unwrap().n_sites(), 5);
}

#[test]
fn focus_keeps_its_uppercase_non_gap_columns_with_plmc_offsets() {
    let text = ">other/3-9\nMKVLAaW\n>P1/10-15\nM-VLaAW\n>x\nmkv.AAW\n";
    let params = AlignmentParams {
        focus: Some("P1".into()),
        ..Default::default()
    };
    let a = parse("x.a2m", text, &params).unwrap();
    assert_eq!(a.columns, [0, 2, 3, 5, 6]);
    // plmc: column + region start (10), i.e. 1-based column + 9.
    assert_eq!(a.positions, [10, 12, 13, 15, 16]);
    assert_eq!(a.focus, Some(1));
    assert_eq!(a.focus_letters().unwrap(), ['M', 'V', 'L', 'A', 'W']);
    assert_eq!(codes(&a), ["MVLAW", "MVLAW", "MV-AW"]);
    // The full name works too; a name without region starts at 1.
    let params = AlignmentParams {
        focus: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(parse("x.a2m", text, &params).unwrap().positions, [5, 6, 7]);
}

#[test]
fn stockholm_with_inserts() {
    let text = "# STOCKHOLM 1.0\n#=GF ID t\n\ns1/1-5 AC.DE\ns2/2-6 ACgDE\n\n\
                s1/1-5 -Y\ns2/2-6 WY\n#=GC RF xx.xxxx\n//\n";
    let a = parse("x.sto", text, &Default::default()).unwrap();
    assert_eq!(codes(&a), ["ACDE-Y", "ACDEWY"]);
    assert_eq!(a.columns, [0, 1, 3, 4, 5, 6]);
}

#[test]
fn gap_filters_sequences_then_columns() {
    let text = ">a\nAC-DE\n>b\n---DE\n>c\nA--DE\n>d\nAC-D-\n";
    let params = AlignmentParams {
        max_sequence_gaps: 0.5,
        max_column_gaps: 0.25,
        ..Default::default()
    };
    let a = parse("x.fa", text, &params).unwrap();
    // b has 3/5 gaps > 0.5: dropped. Then column 2 (3/3 gaps) and 1 (1/3 > 0.25) and 4 go.
    assert_eq!(a.names, ["a", "c", "d"]);
    assert_eq!(a.rows, [0, 2, 3]);
    assert_eq!(a.columns, [0, 3]);
    assert_eq!(a.removed.gappy_sequences, 1);
    assert_eq!(a.removed.gappy_columns, 3);
    assert_eq!(
        a.spread(&[1.0, 2.0, 3.0], 0.0).unwrap(),
        [1.0, 0.0, 2.0, 3.0]
    );
    assert_eq!(a.gather(&[1.0, 9.0, 2.0, 3.0]).unwrap(), [1.0, 2.0, 3.0]);
    assert!(a.spread(&[1.0], 0.0).is_err());
}

#[test]
fn given_alphabet_without_gap() {
    let params = AlignmentParams {
        alphabet: Alphabet::parse("_*^").unwrap(),
        ..Default::default()
    };
    let a = parse("p.a2m", ">1\n_*^\n>2\n^^_\n", &params).unwrap();
    assert_eq!(a.codes.as_slice().unwrap(), &[0, 1, 2, 2, 2, 0]);
    let e = err("p.a2m", ">1\n_-^\n", &params);
    assert!(
        e.contains("p.a2m:2: column 2: expected a letter of the alphabet _*^"),
        "{e}"
    );
    let gappy = AlignmentParams {
        max_column_gaps: 0.5,
        ..params
    };
    let e = parse("p.a2m", ">1\n_*^\n", &gappy).unwrap_err().to_string();
    assert!(e.starts_with("invalid setting `max_column_gaps`"), "{e}");
}

#[test]
fn unknown_letters_refused_or_skipped() {
    let text = ">a\nACDE\n>b\nAC\nXE\n>c\nACDE\n";
    let e = err("x.fa", text, &Default::default());
    assert!(
        e.starts_with("x.fa:5: column 3: expected a letter of the protein alphabet"),
        "{e}"
    );
    assert!(e.contains("found \"X\" in sequence b"), "{e}");
    let skip = AlignmentParams {
        skip_unknown: true,
        ..Default::default()
    };
    let a = parse("x.fa", text, &skip).unwrap();
    assert_eq!(
        (a.names.clone(), a.rows.clone()),
        (vec!["a".into(), "c".into()], vec![0, 2])
    );
    assert_eq!(a.removed.unknown_sequences, 1);
    // A focus with unknown letters is refused even when skipping.
    let focus_b = AlignmentParams {
        focus: Some("b".into()),
        ..skip
    };
    let e = err("x.fa", text, &focus_b);
    assert!(
        e.contains("focus sequence") && e.contains("outside it in b"),
        "{e}"
    );
}

#[test]
fn every_bad_alignment_is_one_clear_error() {
    let p = AlignmentParams::default();
    let cases: &[(&str, &str, &str)] = &[
        ("", "x.fa: expected at least one sequence, found none", ""),
        ("\n\n", "x.fa: expected at least one sequence", ""),
        (
            ">a\n>b\nAC\n",
            "x.fa:1: expected at least one letter",
            "none in sequence a",
        ),
        (
            ">a\nACD\n>b\nAC\n>c\nACD\n",
            "x.fa:4: expected 3 letters in every sequence (as in a, line 1)",
            "found 2 in sequence b",
        ),
        (
            ">a\nAC\n>a\nAC\n",
            "x.fa:3: expected a name used by one sequence only",
            "named a",
        ),
        ("ACDE\n", "x.fa:1: expected a FASTA header", "\"ACDE\""),
        (
            "# STOCKHOLM 1.0\ns AC\n",
            "x.fa:2: expected the end line '//'",
            "truncated",
        ),
    ];
    for (text, start, has) in cases {
        let e = err("x.fa", text, &p);
        assert!(e.starts_with(start), "{text:?}: {e}");
        assert!(e.contains(has), "{text:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let focus = |id: &str| AlignmentParams {
        focus: Some(id.into()),
        ..Default::default()
    };
    let e = err("x.fa", ">a\nAC\n", &focus("zz"));
    assert!(
        e.starts_with("x.fa: expected a sequence named zz (the focus)")
            && e.contains("none among its 1"),
        "{e}"
    );
    let e = err("x.fa", ">a/1-2\nAC\n>a/5-6\nAC\n", &focus("a"));
    assert!(
        e.contains("expected one sequence named a") && e.contains("a/1-2, a/5-6"),
        "{e}"
    );
    let e = err("x.fa", ">a\nac\n>b\nAC\n", &focus("a"));
    assert!(e.contains("the focus a has no uppercase letter"), "{e}");
}

#[test]
fn binary_data_and_unfittable_alignments_are_one_clear_error() {
    let e = err("x.fa", ">a\nAC\n\u{1}\n", &Default::default());
    assert!(
        e.starts_with("x.fa:3: expected a text alignment")
            && e.contains("binary data (byte 0x01 at offset 6)"),
        "{e}"
    );
    let p = Path::new("x.fa");
    let fit = |text: &str| {
        parse("x.fa", text, &Default::default())
            .unwrap()
            .check_fittable(p)
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        fit(">a\nA-C\n>b\nC-C\n>c\nD-C\n").unwrap_err(),
        "x.fa: expected columns holding at least one letter (a column gap filter below 1, \
         --max-column-gaps / max_column_gaps, drops all-gap columns), found column 2 (position 2) \
         holding only gaps in all 3 sequences"
    );
    assert!(fit(">a\nA--\n>b\nC--\n")
        .unwrap_err()
        .contains("column 2 (position 2) and 1 more"));
    assert!(fit(">a\nAC\n")
        .unwrap_err()
        .contains("at least 2 sequences to fit a model, found 1"));
    assert!(fit(">a\nA-\n>b\nCC\n").is_ok());
    // the same check on codes, as fit_codes runs it
    let codes = ndarray::array![[1u8, 0], [2, 0]];
    let (_, found) = unfittable(codes.view(), Some(0), |c| format!("column {}", c + 1)).unwrap();
    assert_eq!(found, "column 2 holding only gaps in all 2 sequences");
    assert!(unfittable(codes.view(), None, |c| c.to_string()).is_none());
}

#[test]
fn format_detection() {
    let d = |name: &str, text: &str| AlignmentFormat::detect(Path::new(name), text.as_bytes());
    assert_eq!(d("x.fa", ">a\n"), AlignmentFormat::Fasta);
    assert_eq!(d("x.A2M.gz", ">a\n"), AlignmentFormat::A2m);
    assert_eq!(
        d("x.txt", "\n# STOCKHOLM 1.0\n"),
        AlignmentFormat::Stockholm
    );
    let p: AlignmentParams =
        serde_json::from_str(r#"{"alphabet": "rna", "format": "a2m", "focus": "x"}"#).unwrap();
    assert_eq!(p.alphabet.letters(), "-ACGU");
    assert_eq!(p.format, Some(AlignmentFormat::A2m));
    assert!(serde_json::from_str::<AlignmentParams>(r#"{"alphabett": "rna"}"#).is_err());
}

#[test]
fn gzip_is_read_transparently() {
    use flate2::write::GzEncoder;
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.fasta.gz");
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b">a\nACDE\n>b\nAC-E\n").unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let a = read_alignment(&path, &Default::default()).unwrap();
    assert_eq!(codes(&a), ["ACDE", "AC-E"]);
    // gzip by content, whatever the name
    let plain_name = dir.path().join("x.fasta");
    std::fs::write(&plain_name, &bytes).unwrap();
    assert_eq!(read_alignment(&plain_name, &Default::default()).unwrap(), a);
    let e = read_alignment(&dir.path().join("none.fa"), &Default::default()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
}

#[test]
fn dhfr_focus_matches_plmc_sites_and_offsets() {
    let Some(dir) = shared_data() else { return };
    let params = AlignmentParams {
        focus: Some("DYR_ECOLI".into()),
        skip_unknown: true,
        ..Default::default()
    };
    let a = read_alignment(&dir.join("dca/DHFR.a2m"), &params).unwrap();
    // plmc: "3616 valid sequences out of 3629", "159 sites out of 171".
    assert_eq!((a.n_read, a.n_sequences(), a.n_sites()), (3629, 3616, 159));
    assert_eq!(a.focus, Some(0));
    // Its couplings file's (i, A_i) pairs, in order, are our positions and focus letters.
    let text = std::fs::read_to_string(dir.join("dca/DHFR.plmc.couplings")).unwrap();
    let mut plmc: Vec<(i64, char)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        for (i, c) in [(f[0], f[1]), (f[2], f[3])] {
            let site = (i.parse().unwrap(), c.chars().next().unwrap());
            if !plmc.contains(&site) {
                plmc.push(site);
            }
        }
    }
    plmc.sort();
    let ours: Vec<(i64, char)> = a
        .positions
        .iter()
        .copied()
        .zip(a.focus_letters().unwrap())
        .collect();
    assert_eq!(ours, plmc);
    // Without skipping, the first unknown letter is named.
    let e = read_alignment(
        &dir.join("dca/DHFR.a2m"),
        &AlignmentParams {
            skip_unknown: false,
            ..params
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("found \"X\" in sequence"), "{e}");
}

#[test]
fn pf00014_reads_gzipped() {
    let Some(dir) = shared_data() else { return };
    let a = read_alignment(&dir.join("dca/PF00014_mgap6.fasta.gz"), &Default::default()).unwrap();
    assert_eq!((a.n_sequences(), a.n_sites()), (13_600, 53));
}
