//! `boltzkit data list|fetch|path`: the data sets by name (`boltzkit::data::registry`), and
//! [`with_data_names`], which lets every `--data FILE` (and `--test`, `--valid`) of every
//! command also take `NAME[:split]`.

use crate::args::CommonArgs;
use crate::report::Summary;
use boltzkit::data::registry::{self, fetch_file, DataSet, Sources};
use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `boltzkit data <verb>`.
#[derive(Debug, Args)]
pub struct DataArgs {
    #[command(subcommand)]
    verb: DataVerb,
}

#[derive(Debug, Subcommand)]
enum DataVerb {
    /// The data sets of the registry (one line each), or one set's files with their URL, size,
    /// SHA-256 and licence
    List(ListArgs),
    /// Put verified copies of data sets (or one split: NAME:split) in the cache
    Fetch(FetchArgs),
    /// The local path of NAME[:split] (its rows; fetched first when not cached), for scripts
    Path(PathArgs),
}

/// Where files come from: the cache, a mirror folder, the network.
#[derive(Debug, Clone, Args)]
struct SourceArgs {
    /// A mirror folder in the registry's layout (e.g. ../shared/data, or another machine's
    /// cache), searched before the network [default: BOLTZKIT_DATA_MIRROR, else shared/data
    /// beside or above the working directory or the executable]
    #[arg(long, value_name = "DIR")]
    mirror: Option<PathBuf>,
    /// Never use the network (as BOLTZKIT_OFFLINE=1)
    #[arg(long)]
    offline: bool,
}

impl SourceArgs {
    fn sources(&self) -> anyhow::Result<Sources> {
        let s = Sources::from_env(self.mirror.as_deref())?;
        let network = s.network && !self.offline;
        Ok(s.with_network(network))
    }
}

#[derive(Debug, Args)]
struct ListArgs {
    /// One data set: its files, URLs, sizes, checksums, licence and citation
    name: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct FetchArgs {
    /// Data sets (NAME: every file; NAME:split: that split's rows and labels)
    #[arg(required = true, value_name = "NAME[:split]")]
    names: Vec<String>,
    #[command(flatten)]
    sources: SourceArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct PathArgs {
    /// The data set and split (default: train, or the only split)
    #[arg(value_name = "NAME[:split]")]
    name: String,
    #[command(flatten)]
    sources: SourceArgs,
    #[command(flatten)]
    common: CommonArgs,
}

impl DataArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            DataVerb::List(a) => a.run(),
            DataVerb::Fetch(a) => a.run(),
            DataVerb::Path(a) => a.run(),
        }
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1e6)
}

impl ListArgs {
    fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        let mut summary = Summary::new("data list", None);
        let mut text = String::new();
        match &self.name {
            None => {
                let sets = registry::datasets();
                let w = sets.iter().map(|s| s.name.len()).max().unwrap_or(4);
                text.push_str(&format!(
                    "{:<w$}  {:>6}  {:<16}  what\n",
                    "name", "MB", "splits"
                ));
                for s in sets {
                    let size: u64 = s.files.iter().map(|f| f.size).sum();
                    let splits = s.splits().join(",");
                    text.push_str(&format!(
                        "{:<w$}  {:>6}  {:<16}  {}\n",
                        s.name,
                        mb(size),
                        if splits.is_empty() { "-" } else { &splits },
                        s.title
                    ));
                }
                summary.set("datasets", serde_json::to_value(sets)?);
            }
            Some(name) => {
                let s = registry::find(name)?;
                text.push_str(&describe(s));
                summary.set("dataset", serde_json::to_value(s)?);
            }
        }
        if self.common.json {
            summary.emit(&self.common)
        } else {
            print(&text)
        }
    }
}

/// A data set's title, licence, citation and files, for `data list NAME`.
fn describe(s: &DataSet) -> String {
    let mut out = format!(
        "{}: {}\nlicence: {}\ncite: {}\nfiles (path in the cache or a mirror, kind, split, bytes, sha256, source):\n",
        s.name, s.title, s.licence, s.citation
    );
    for f in &s.files {
        out.push_str(&format!(
            "  {}  {:?}{}  {} B  {}\n    {}{}\n",
            f.path,
            f.kind,
            f.split
                .as_deref()
                .map(|x| format!(" {x}"))
                .unwrap_or_default(),
            f.size,
            f.sha256,
            f.url,
            f.derivation
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        ));
    }
    out
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

impl FetchArgs {
    fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        let sources = self.sources.sources()?;
        let mut files = Vec::new();
        let mut text = String::new();
        for spec in &self.names {
            let (set, split) = registry::parse_spec(spec)
                .map(Ok)
                .unwrap_or_else(|| registry::find(spec).map(|s| (s, None)))?;
            let chosen: Vec<_> = match split {
                None => set.files.iter().collect(),
                Some(_) => {
                    let rows = set.primary(split)?;
                    set.files
                        .iter()
                        .filter(|f| std::ptr::eq(*f, rows) || (f.split == rows.split))
                        .collect()
                }
            };
            for file in chosen {
                let got = fetch_file(set, file, &sources)?;
                text.push_str(&format!("{}  ({got})\n", got.path.display()));
                files.push(json!({
                    "dataset": set.name,
                    "file": file.path,
                    "path": got.path.display().to_string(),
                    "origin": got.to_string(),
                }));
            }
        }
        let mut summary = Summary::new("data fetch", None);
        summary
            .set("cache", sources.cache.display().to_string())
            .set("files", Value::from(files));
        if self.common.json {
            summary.emit(&self.common)
        } else if self.common.quiet {
            Ok(())
        } else {
            print(&text)
        }
    }
}

impl PathArgs {
    fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        let sources = self.sources.sources()?;
        let path = registry::resolve(&self.name, &sources)?;
        if self.common.json {
            let mut summary = Summary::new("data path", None);
            summary
                .set("name", self.name.as_str())
                .set("path", path.display().to_string());
            summary.emit(&self.common)
        } else {
            print(&format!("{}\n", path.display()))
        }
    }
}

/// The flags whose value is a data file, so also a `NAME[:split]` of the registry.
const DATA_FLAGS: [&str; 4] = ["data", "test", "valid", "base_data"];

/// The command tree with every data-file flag ([`DATA_FLAGS`]) of every command taking
/// `NAME[:split]` too: the one place the command line turns names into paths. A value that
/// is an existing path stays a path; one whose part before `:` is a registry name becomes
/// the verified cached copy of that split's rows (fetched from a mirror or the network the
/// first time, [`registry::resolve`]); anything else is left for the reader to report.
pub fn with_data_names(cmd: clap::Command) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| DATA_FLAGS.contains(&id.as_str()))
        .collect();
    let cmd = ids.iter().fold(cmd, |cmd, id| {
        cmd.mut_arg(id, |a| {
            let help = a
                .get_help()
                .map(|h| format!("{h}; or NAME[:split], a data set of `boltzkit data list`"));
            let a = a.value_parser(DataPath);
            match help {
                Some(h) => a.help(h),
                None => a,
            }
        })
    });
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    subs.iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, with_data_names))
}

/// The value parser of a data-file flag: a path, or a registry name resolved to one.
#[derive(Debug, Clone, Copy)]
struct DataPath;

impl TypedValueParser for DataPath {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<PathBuf, clap::Error> {
        let path = PathBuf::from(value);
        let flag = arg
            .and_then(|a| a.get_long())
            .map(|l| format!("--{l} "))
            .unwrap_or_default();
        resolve_value(&path)
            .map_err(|(kind, e)| clap::Error::raw(kind, format!("{flag}{}: {e}\n", path.display())))
    }
}

/// `path` itself when it exists or names no data set; else the cached copy of the data set's
/// file. A bad split is a usage error, a file no source gives a run-time one.
fn resolve_value(path: &Path) -> Result<PathBuf, (ErrorKind, String)> {
    let Some(text) = path.to_str() else {
        return Ok(path.to_path_buf());
    };
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let Some((set, split)) = registry::parse_spec(text) else {
        return Ok(path.to_path_buf());
    };
    let file = set
        .primary(split)
        .map_err(|e| (ErrorKind::ValueValidation, e.to_string()))?;
    let sources = Sources::from_env(None).map_err(|e| (ErrorKind::Io, e.to_string()))?;
    fetch_file(set, file, &sources)
        .map(|f| f.path)
        .map_err(|e| (ErrorKind::Io, e.to_string()))
}
