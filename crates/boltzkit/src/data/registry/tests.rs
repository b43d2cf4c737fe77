use super::*;
use crate::io::sha256_bytes;
use flate2::write::GzEncoder;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// The mirror of this checkout (`../shared/data`), when it is there.
fn shared_data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    dir.is_dir().then_some(dir)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A one-file data set whose file holds `bytes` (stored gzipped when `gz`), served as `serves`
/// from `url`.
fn toy(bytes: &[u8], gz: bool, serves: UrlServes, url: &str) -> DataSet {
    let stored = if gz { gzip(bytes) } else { bytes.to_vec() };
    let file = DataFile {
        path: format!("toy/rows.csv{}", if gz { ".gz" } else { "" }),
        kind: FileKind::Rows,
        split: Some("train".into()),
        size: stored.len() as u64,
        sha256: sha256_bytes(&stored),
        content_size: gz.then_some(bytes.len() as u64),
        content_sha256: gz.then(|| sha256_bytes(bytes)),
        url: url.into(),
        alt_urls: Vec::new(),
        url_serves: serves,
        derivation: None,
    };
    DataSet {
        name: "toy".into(),
        title: "a toy".into(),
        licence: "none".into(),
        citation: "none".into(),
        files: vec![file],
    }
}

/// Serves one HTTP response with `body` on a loopback port; the URL of `/name`.
fn serve_once(body: Vec<u8>, status: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            // the request line and headers, up to the blank line
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://127.0.0.1:{port}/rows.csv")
}

#[test]
fn the_registry_parses_and_every_file_is_described() {
    let sets = datasets();
    assert!(sets.len() >= 20, "{}", sets.len());
    let mut names = HashSet::new();
    for set in sets {
        assert!(names.insert(set.name.as_str()), "duplicate {}", set.name);
        assert!(!set.name.contains(':'), "{}", set.name);
        assert!(!set.licence.is_empty() && !set.citation.is_empty() && !set.title.is_empty());
        assert!(
            set.primary(None).is_ok(),
            "{} has no primary file",
            set.name
        );
        for f in &set.files {
            assert_eq!(f.sha256.len(), 64, "{}", f.path);
            assert!(f.url.starts_with("http://") || f.url.starts_with("https://"));
            assert_eq!(
                f.path.ends_with(".gz"),
                f.content_sha256.is_some(),
                "{}",
                f.path
            );
            assert_eq!(f.url_serves == UrlServes::Source, f.derivation.is_some());
            assert_eq!(
                matches!(f.kind, FileKind::Rows | FileKind::Labels),
                f.split.is_some(),
                "{}",
                f.path
            );
        }
    }
    for name in [
        "binarized_mnist",
        "mnist",
        "caltech101",
        "alphadigits",
        "nltcs",
        "dna_nade",
        "pf00014",
        "dhfr",
    ] {
        assert!(find(name).is_ok(), "{name}");
    }
    let e = find("mnits").unwrap_err().to_string();
    assert!(e.contains("binarized_mnist") && e.contains("mnits"), "{e}");
}

#[test]
fn specs_name_a_split_or_the_default_one() {
    let (set, split) = parse_spec("nltcs:test").unwrap();
    assert_eq!((set.name.as_str(), split), ("nltcs", Some("test")));
    assert_eq!(
        set.primary(None).unwrap().path,
        "debd/nltcs/nltcs.train.data.gz"
    );
    assert_eq!(
        set.primary(split).unwrap().path,
        "debd/nltcs/nltcs.test.data.gz"
    );
    let e = set.primary(Some("tset")).unwrap_err().to_string();
    assert!(
        e.contains("train, valid, test") && e.contains("tset"),
        "{e}"
    );
    assert!(parse_spec("data/x.csv").is_none());
    assert!(parse_spec("C:/data/x.csv").is_none());
    let alphadigits = find("alphadigits").unwrap();
    assert_eq!(
        alphadigits.primary(None).unwrap().split.as_deref(),
        Some("all")
    );
    let dhfr = find("dhfr").unwrap();
    assert_eq!(dhfr.primary(None).unwrap().kind, FileKind::Alignment);
    assert!(dhfr.primary(Some("train")).is_err());
}

/// Every file of the registry against the mirror: size and SHA-256 as stored, and of the
/// uncompressed content of each `.gz` file (the bytes its URL serves).
#[test]
fn every_file_matches_the_mirror() {
    let Some(mirror) = shared_data() else {
        eprintln!("skipped: no ../shared/data beside the repository");
        return;
    };
    for set in datasets() {
        for f in &set.files {
            let bytes = std::fs::read(mirror.join(&f.path)).unwrap();
            assert_eq!(bytes.len() as u64, f.size, "{}", f.path);
            assert_eq!(sha256_bytes(&bytes), f.sha256, "{}", f.path);
            if let Some(sha) = &f.content_sha256 {
                let content = super::fetch::tests_gunzip(&bytes);
                assert_eq!(Some(content.len() as u64), f.content_size, "{}", f.path);
                assert_eq!(&sha256_bytes(&content), sha, "{}", f.path);
            }
        }
    }
}

#[test]
fn a_mirror_file_is_verified_cached_and_then_used_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, mirror) = (dir.path().join("cache"), dir.path().join("mirror"));
    let set = toy(
        b"0,1\n1,1\n",
        true,
        UrlServes::Content,
        "http://127.0.0.1:9/x",
    );
    let file = &set.files[0];
    std::fs::create_dir_all(mirror.join("toy")).unwrap();
    std::fs::write(mirror.join(&file.path), gzip(b"0,1\n1,1\n")).unwrap();
    let sources = Sources::new(&cache)
        .with_mirrors(vec![dir.path().join("empty"), mirror.clone()])
        .with_network(false);

    let first = fetch_file(&set, file, &sources).unwrap();
    assert_eq!(first.origin, Origin::Mirror(mirror.clone()));
    assert_eq!(first.path, cache.join(&file.path));
    assert_eq!(first.replaced, None);
    // the mirror may go: the cache serves the file from now on
    std::fs::remove_dir_all(&mirror).unwrap();
    let again = fetch_file(&set, file, &sources).unwrap();
    assert_eq!(
        (again.origin, again.path),
        (Origin::Cache, first.path.clone())
    );

    // a corrupted cached copy (same size, one byte changed) is detected and fetched again
    std::fs::create_dir_all(mirror.join("toy")).unwrap();
    std::fs::write(mirror.join(&file.path), gzip(b"0,1\n1,1\n")).unwrap();
    let mut bytes = std::fs::read(&first.path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&first.path, &bytes).unwrap();
    let fixed = fetch_file(&set, file, &sources).unwrap();
    assert_eq!(fixed.origin, Origin::Mirror(mirror.clone()));
    let why = fixed.replaced.unwrap();
    assert!(
        why.contains("sha256") && why.contains(&file.sha256),
        "{why}"
    );
    assert_eq!(
        sha256_bytes(&std::fs::read(&fixed.path).unwrap()),
        file.sha256
    );
}

#[test]
fn a_wrong_mirror_file_and_an_offline_machine_give_one_line_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let set = toy(b"0,1\n", false, UrlServes::File, "http://127.0.0.1:9/x");
    let file = &set.files[0];
    std::fs::create_dir_all(mirror.join("toy")).unwrap();
    std::fs::write(mirror.join(&file.path), b"1,1\n").unwrap();
    let sources = Sources::new(dir.path().join("cache"))
        .with_mirrors(vec![mirror.clone()])
        .with_network(false);
    let e = fetch_file(&set, file, &sources).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    for part in [
        "toy/rows.csv",
        "sha256",
        &file.sha256,
        "BOLTZKIT_OFFLINE",
        "BOLTZKIT_DATA_MIRROR=DIR",
        &mirror.display().to_string(),
    ] {
        assert!(e.contains(part), "{part} not in: {e}");
    }
    assert!(!dir.path().join("cache").join(&file.path).exists());
}

#[test]
fn downloads_are_checked_in_the_form_their_url_serves() {
    let content = b"0,1,1\n1,0,1\n".to_vec();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");

    // the URL serves the file itself
    let url = serve_once(content.clone(), "200 OK");
    let set = toy(&content, false, UrlServes::File, &url);
    let got = fetch_file(&set, &set.files[0], &Sources::new(&cache)).unwrap();
    assert_eq!(got.origin, Origin::Network(url));
    assert_eq!(std::fs::read(&got.path).unwrap(), content);

    // the URL serves the content of a .gz file: cached uncompressed, then found there
    let url = serve_once(content.clone(), "200 OK");
    let set = toy(&content, true, UrlServes::Content, &url);
    let sources = Sources::new(dir.path().join("cache2"));
    let got = fetch_file(&set, &set.files[0], &sources).unwrap();
    assert_eq!(got.path, dir.path().join("cache2/toy/rows.csv"));
    assert_eq!(std::fs::read(&got.path).unwrap(), content);
    let again = fetch_file(&set, &set.files[0], &sources).unwrap();
    assert_eq!((again.origin, again.path), (Origin::Cache, got.path));

    // the URL serves another gzip of the content
    let url = serve_once(gzip(&content), "200 OK");
    let set = toy(&content, true, UrlServes::Gzip, &url);
    let got = fetch_file(&set, &set.files[0], &Sources::new(dir.path().join("c3"))).unwrap();
    assert_eq!(std::fs::read(&got.path).unwrap(), content);

    // wrong bytes, a server error and a closed port are refused, nothing cached
    let url = serve_once(b"0,1,1\n1,0,0\n".to_vec(), "200 OK");
    let set = toy(&content, false, UrlServes::File, &url);
    let e = fetch_file(&set, &set.files[0], &Sources::new(dir.path().join("c4")))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("{url} gave sha256")), "{e}");
    assert!(!dir.path().join("c4/toy/rows.csv").exists());
    let url = serve_once(Vec::new(), "404 Not Found");
    let set = toy(&content, false, UrlServes::File, &url);
    let e = fetch_file(&set, &set.files[0], &Sources::new(dir.path().join("c5")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("404") && !e.contains('\n'), "{e}");
}

#[test]
fn a_converted_file_is_never_downloaded() {
    let set = find("caltech101").unwrap();
    let file = set.primary(Some("test")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = fetch_file(set, file, &Sources::new(dir.path()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no URL serves this file") && e.contains("marlin"),
        "{e}"
    );
}

#[test]
fn names_resolve_to_verified_copies_of_the_mirror() {
    let Some(mirror) = shared_data() else {
        eprintln!("skipped: no ../shared/data beside the repository");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sources = Sources::new(dir.path())
        .with_mirrors(vec![mirror.clone()])
        .with_network(false);
    let path = resolve("nltcs:test", &sources).unwrap();
    assert_eq!(path, dir.path().join("debd/nltcs/nltcs.test.data.gz"));
    let data = crate::data::read_dataset(&path, &Default::default()).unwrap();
    assert_eq!((data.n_samples(), data.n_vars()), (3236, 16));
    let e = resolve("nltcs:tst", &sources).unwrap_err().to_string();
    assert!(e.contains("train, valid, test"), "{e}");
}
