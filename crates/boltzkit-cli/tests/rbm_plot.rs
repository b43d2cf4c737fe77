//! End-to-end tests of `boltzkit rbm plot`: every mode writes a PNG whose pixels show what was
//! asked for; bad shapes and missing inputs are one-line usage errors.

use assert_cmd::Command;
use boltzkit::data::synth::{BarsAndStripes, ShiftingBar};
use boltzkit::data::{read_dataset, write_dataset, Dataset, ReadOptions};
use std::path::{Path, PathBuf};

fn boltzkit() -> Command {
    Command::cargo_bin("boltzkit").unwrap()
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("one JSON object on stdout")
}

/// A decoded RGB PNG.
struct Png {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Png {
    fn read(path: &Path) -> Png {
        let file = std::fs::File::open(path).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        pixels.truncate(info.buffer_size());
        Png {
            width: info.width,
            height: info.height,
            pixels,
        }
    }

    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        let i = 3 * (y * self.width + x) as usize;
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }

    fn count(&self, f: impl Fn(&[u8]) -> bool) -> usize {
        self.pixels.chunks_exact(3).filter(|p| f(p)).count()
    }
}

/// Writes `data` as CSV into `dir`, trains a 4-hidden-unit RBM on it (CD-1, 60 epochs, a
/// JSONL log every 10 epochs), returns (data, model, log) paths.
fn train(dir: &Path, data: &Dataset) -> (PathBuf, PathBuf, PathBuf) {
    let (csv, model, log) = (
        dir.join("data.csv"),
        dir.join("m.safetensors"),
        dir.join("log.jsonl"),
    );
    write_dataset(&csv, data).unwrap();
    boltzkit()
        .args([
            "rbm", "fit", "--hidden", "4", "--epochs", "60", "--lr", "0.2",
        ])
        .args([
            "--batch-size",
            "0",
            "--eval-every",
            "10",
            "--seed",
            "3",
            "-q",
        ])
        .arg("--data")
        .arg(&csv)
        .arg("--log")
        .arg(&log)
        .arg("-o")
        .arg(&model)
        .assert()
        .success();
    (csv, model, log)
}

/// A 4-hidden-unit RBM trained on the 14 bars-and-stripes 3×3 patterns, in a temporary folder.
struct Bas {
    dir: tempfile::TempDir,
    data: PathBuf,
    model: PathBuf,
    log: PathBuf,
}

impl Bas {
    fn new() -> Bas {
        let dir = tempfile::tempdir().unwrap();
        let bas = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let (data, model, log) = train(dir.path(), &bas);
        Bas {
            dir,
            data,
            model,
            log,
        }
    }

    /// `rbm plot --model` with `args` into a fresh PNG: the summary and the image.
    fn plot_model(&self, args: &[&str]) -> (serde_json::Value, Png) {
        let out = self.dir.path().join("model.png");
        let s = plot(args, ("--model", &self.model), &out);
        (s, Png::read(&out))
    }
}

/// Runs `rbm plot` with `args` and `--json -q`, returns the summary.
fn plot(args: &[&str], model_or_log: (&str, &Path), out: &Path) -> serde_json::Value {
    let done = boltzkit()
        .args(["rbm", "plot", "--json", "-q"])
        .arg(model_or_log.0)
        .arg(model_or_log.1)
        .args(args)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
    json(&done.get_output().stdout)
}

const SEPARATOR: [u8; 3] = [70, 90, 120];

/// Top-left corner of tile `t` at scale 1 (1-pixel separators) with `cols` tiles of 3×3 per
/// row, grouped in `group`s (3-pixel gaps between groups when `group` > 1).
fn tile_origin(t: u32, cols: u32, group: u32) -> (u32, u32) {
    let (pad, gap) = (1, if group > 1 { 3 } else { 1 });
    let cell_w = group * 3 + (group - 1) * pad;
    let (cell, k) = (t / group, t % group);
    (
        gap + (cell % cols) * (cell_w + gap) + k * (3 + pad),
        gap + (cell / cols) * (3 + gap),
    )
}

/// The 9 gray levels of 3×3 tile `t` (see [`tile_origin`]), row by row.
fn tile(img: &Png, t: u32, cols: u32, group: u32) -> Vec<u8> {
    let (x0, y0) = tile_origin(t, cols, group);
    (0..9)
        .map(|p| {
            let [r, g, b] = img.at(x0 + p % 3, y0 + p / 3);
            assert!(r == g && g == b, "tile {t} is gray");
            r
        })
        .collect()
}

/// A 0/1 data row as the gray levels it is drawn with.
fn as_gray(data: &Dataset, row: u32) -> Vec<u8> {
    data.sample(row as usize).iter().map(|&v| 255 * v).collect()
}

#[test]
fn filters_are_drawn_one_tile_per_hidden_unit() {
    let bas = Bas::new();
    let args = [
        "--what", "filters", "-n", "10", "--scale", "1", "--cols", "2",
    ];
    let (s, img) = bas.plot_model(&args);
    assert_eq!(s["what"], "filters");
    assert_eq!(s["count"], 4, "clamped to the 4 hidden units: {s}");
    assert_eq!(s["shape"], "3x3");
    assert!(s["seed"].is_null(), "filters use no randomness: {s}");
    assert_eq!((img.width, img.height), (1 + 2 * 4, 1 + 2 * 4));
    assert_eq!(
        (u64::from(img.width), u64::from(img.height)),
        (s["width"].as_u64().unwrap(), s["height"].as_u64().unwrap())
    );
    assert_eq!(img.at(0, 0), SEPARATOR);
    for t in 0..4 {
        let levels = tile(&img, t, 2, 1);
        // per-tile min-max: the smallest weight is black, the largest white
        assert!(levels.contains(&0) && levels.contains(&255), "{levels:?}");
    }
}

#[test]
fn samples_are_the_states_rbm_sample_draws_with_the_same_seed() {
    let bas = Bas::new();
    let (s, _) = bas.plot_model(&["--what", "samples", "-n", "8", "--gibbs-steps", "20"]);
    assert!(s["seed"].is_u64(), "a clock seed is recorded: {s}");
    // the same chains as `rbm sample` with these flags
    let draw = ["-n", "8", "--gibbs-steps", "20", "--seed", "11"];
    let layout = ["--what", "samples", "--scale", "1", "--cols", "4"];
    let (s, img) = bas.plot_model(&[&draw[..], &layout].concat());
    assert_eq!(s["seed"], 11);
    assert_eq!(s["gibbs_steps"], 20);
    let npy = bas.dir.path().join("s.npy");
    boltzkit()
        .args(["rbm", "sample", "-q"])
        .args(draw)
        .arg("--model")
        .arg(&bas.model)
        .arg("-o")
        .arg(&npy)
        .assert()
        .success();
    let samples = read_dataset(&npy, &ReadOptions::default()).unwrap();
    assert_eq!((img.width, img.height), (1 + 4 * 4, 1 + 2 * 4));
    for t in 0..8u32 {
        assert_eq!(tile(&img, t, 4, 1), as_gray(&samples, t), "sample {t}");
    }
}

#[test]
fn reconstructions_put_each_data_row_beside_its_gray_reconstruction() {
    let bas = Bas::new();
    let data = bas.data.display().to_string();
    let args = ["--what", "reconstructions", "--data", &data, "-n", "6"];
    let (s, img) = bas.plot_model(&[&args[..], &["--scale", "1", "--cols", "3"]].concat());
    assert_eq!(s["count"], 6);
    // 3 pairs per row: cells of 3 + 1 + 3 = 7 pixels, 3-pixel gaps
    assert_eq!((img.width, img.height), (3 + 3 * 10, 3 + 2 * 6));
    let rows = read_dataset(&bas.data, &ReadOptions::default()).unwrap();
    let mut gray = 0;
    for r in 0..6u32 {
        let (x0, y0) = tile_origin(2 * r, 3, 2);
        assert_eq!(
            tile_origin(2 * r + 1, 3, 2),
            (x0 + 4, y0),
            "the reconstruction sits right of its row"
        );
        assert_eq!(tile(&img, 2 * r, 3, 2), as_gray(&rows, r));
        let recon = tile(&img, 2 * r + 1, 3, 2);
        gray += recon.iter().filter(|&&g| g > 0 && g < 255).count();
    }
    assert!(
        gray > 40,
        "reconstructions are probabilities ({gray} gray pixels)"
    );
}

#[test]
fn learning_curves_draw_a_panel_per_metric() {
    let bas = Bas::new();
    let out = bas.dir.path().join("curves.png");
    let s = plot(&[], ("--log", &bas.log), &out);
    assert_eq!(s["what"], "curves");
    assert_eq!(s["records"], 7, "epochs 0, 10, .., 60: {s}");
    assert_eq!(s["metrics"], serde_json::json!(["train_ll", "lr"]));
    let img = Png::read(&out);
    assert_eq!((img.width, img.height), (2 * 800, 500));
    let line = |p: &[u8]| p == [31, 119, 180];
    let left = (0..500)
        .flat_map(|y| (0..800).map(move |x| (x, y)))
        .filter(|&(x, y)| line(&img.at(x, y)))
        .count();
    assert!(left > 300, "train_ll curve drawn ({left} pixels)");
    assert!(img.count(line) > left + 300, "lr curve drawn");
    assert!(
        img.count(|p| p.iter().all(|&v| v < 60)) > 1000,
        "axes and text"
    );

    let log_x = bas.dir.path().join("curves-log.png");
    let s = plot(&["--log-x"], ("--log", &bas.log), &log_x);
    assert_eq!(s["metrics"], serde_json::json!(["train_ll", "lr"]));
    assert!(Png::read(&log_x).count(line) > 600);
}

/// Runs `rbm plot` expecting a usage error; returns stderr.
fn usage_error(args: &[&str], model: &Path) -> String {
    let done = boltzkit()
        .args(["rbm", "plot", "--model"])
        .arg(model)
        .args(args)
        .assert()
        .code(2);
    String::from_utf8(done.get_output().stderr.clone()).unwrap()
}

#[test]
fn bad_shapes_and_missing_inputs_are_one_line_usage_errors() {
    let bas = Bas::new();
    let out = bas.dir.path().join("x.png").display().to_string();
    for (args, says) in [
        (
            vec!["--what", "filters", "--shape", "2x5"],
            "--shape 2x5 has 10 pixels, the model has 9 visible units",
        ),
        (vec!["--what", "filters", "--shape", "abc"], "--shape `abc`"),
        (
            vec!["--what", "reconstructions"],
            "--what reconstructions needs --data FILE",
        ),
    ] {
        let err = usage_error(&[args.as_slice(), &["-o", &out]].concat(), &bas.model);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(says), "{err}");
    }
    assert!(!Path::new(&out).exists(), "nothing written on error");

    // 6 visible units: no default shape; --shape 2x3 works
    let sub = bas.dir.path().join("bar");
    std::fs::create_dir(&sub).unwrap();
    let (_, bar_model, _) = train(&sub, &ShiftingBar::new(6, 2).unwrap().dataset().unwrap());
    let err = usage_error(&["--what", "filters", "-o", &out], &bar_model);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a perfect square: give --shape HxW (e.g. --shape 2x3)"),
        "{err}"
    );
    let s = plot(
        &["--what", "filters", "--shape", "2x3"],
        ("--model", &bar_model),
        Path::new(&out),
    );
    assert_eq!(s["shape"], "2x3");
}
