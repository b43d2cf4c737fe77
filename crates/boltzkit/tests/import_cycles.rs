//! No module imports one that imports it back (ARCHITECTURE.md, "Import rules"): the `use`
//! statements of every Rust source file of the workspace's crates and the imports of every
//! module of the Python package, read as a graph of modules, have no pair `a → b → a`.
//!
//! A Rust module is a file (`a.rs`, `a/mod.rs`, a crate root) or an inline `mod name { .. }`
//! in one (a `mod tests` is its own module). `use p::q::r` (`pub use` too) is an edge to the
//! longest prefix of the path that names a module of the workspace: `use super::Gradient`
//! from `rbm/train/cd.rs` is an edge to `rbm/train/mod.rs` (the face), and `pub use
//! cd::Cd` in that face an edge back, a circle. `mod x;` declarations are not imports. A
//! Python module's edges are its `import` and `from … import` statements (those inside
//! functions included), resolved to the package's modules. There are none (issue 32 undid
//! the last 39); a new one fails the test with both modules named.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` ending in `ext`, sorted.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Rust source with comments, string and char literals blanked (braces and `;` inside them
/// must not count), lines kept.
fn strip_rust(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (b.get(i + 1) == Some(&'"') || b.get(i + 1) == Some(&'#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // raw string r"..." / r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                out.push(blank(ch));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            let close = if b.get(i + 1) == Some(&'\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(j) => {
                    for _ in i..=j {
                        out.push(' ');
                    }
                    i = j + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The module path of a source file of a crate whose sources are under `src`: a crate root
/// is `[]`, `a/b.rs` and `a/b/mod.rs` are `[a, b]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(parts.is_empty() && (stem == "lib" || stem == "main") || stem == "mod") {
        parts.push(stem.to_string());
    }
    parts
}

/// A flattened `use` path: the path, whether it ends in `*`, its `as` name.
type UsePath = (Vec<String>, bool, Option<String>);

/// One `use` tree flattened into full paths (`a::{b, c::{d, self}}` → `a::b`, `a::c::d`,
/// `a::c`), each with its glob mark and rename.
fn flatten_use(tree: &str) -> Vec<UsePath> {
    fn go(prefix: &[String], s: &str, out: &mut Vec<UsePath>) {
        let s = s.trim();
        if s.is_empty() {
            return;
        }
        // split at top-level commas
        let mut depth = 0;
        let mut start = 0;
        let mut items = Vec::new();
        for (i, ch) in s.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&s[start..]);
        if items.len() > 1 {
            for it in items {
                go(prefix, it, out);
            }
            return;
        }
        let s = items[0].trim();
        if let Some(open) = s.find('{') {
            let head = s[..open].trim().trim_end_matches("::");
            let inner = &s[open + 1..s.rfind('}').unwrap_or(s.len())];
            let mut p = prefix.to_vec();
            p.extend(
                head.split("::")
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(String::from),
            );
            go(&p, inner, out);
            return;
        }
        let (s, alias) = match s.split_once(" as ") {
            Some((s, a)) => (s.trim(), Some(a.trim().to_string())),
            None => (s, None),
        };
        let mut p = prefix.to_vec();
        let mut glob = false;
        for seg in s.split("::").map(str::trim).filter(|x| !x.is_empty()) {
            match seg {
                "*" => glob = true,
                "self" => {}
                _ => p.push(seg.to_string()),
            }
        }
        out.push((p, glob, alias));
    }
    let mut out = Vec::new();
    go(&[], tree, &mut out);
    out
}

/// A Rust crate: its name as other crates write it, and its modules (files and inline).
struct Crate {
    name: String,
}

/// A node of the graph: `crate::a::b` (Rust) or `boltzkit.x` (Python).
type Node = String;

fn node(krate: &str, path: &[String]) -> Node {
    if path.is_empty() {
        krate.to_string()
    } else {
        format!("{krate}::{}", path.join("::"))
    }
}

/// How a file names another module.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `use a::b`.
    Use,
    /// `pub use a::b` (any `pub(..)`): a re-export.
    PubUse,
    /// A path in code: `super::bslm::fit(..)`.
    Path,
}

/// What a stripped file says: its `use` statements (each with the inline module it sits in
/// and whether it is a `pub` re-export), its inline modules, and the names it defines.
struct Parsed {
    uses: Vec<(Vec<String>, String, Kind)>,
    inline: BTreeSet<Vec<String>>,
    defines: BTreeSet<String>,
}

fn parse(src: &str) -> Parsed {
    let chars: Vec<char> = src.chars().collect();
    let mut uses = Vec::new();
    let mut inline = BTreeSet::new();
    let mut defines = BTreeSet::new();
    // the stack of open braces: Some(name) for an inline module's
    let mut stack: Vec<Option<String>> = Vec::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_at = |i: usize, w: &str| -> bool {
        let n = w.len();
        chars[i] == w.as_bytes()[0] as char
            && chars
                .get(i..i + n)
                .is_some_and(|s| s.iter().copied().eq(w.chars()))
            && (i == 0 || !is_ident(chars[i - 1]))
            && chars.get(i + n).is_none_or(|c| !is_ident(*c))
    };
    let name_after = |j: usize| -> (String, usize) {
        let mut k = j;
        while chars.get(k).is_some_and(|c| c.is_whitespace()) {
            k += 1;
        }
        let start = k;
        while chars.get(k).is_some_and(|c| is_ident(*c)) {
            k += 1;
        }
        (chars[start..k].iter().collect(), k)
    };
    let current =
        |stack: &Vec<Option<String>>| -> Vec<String> { stack.iter().flatten().cloned().collect() };
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if word_at(i, "mod") {
            // `mod name {` (inline) or `mod name;` (a file)
            let (name, j) = name_after(i + 3);
            let after = chars[j..].iter().find(|c| !c.is_whitespace());
            if after == Some(&'{') && !name.is_empty() {
                pending_mod = Some(name);
            }
            i = j;
            continue;
        }
        if let Some(kw) = [
            "fn", "struct", "enum", "trait", "type", "const", "static", "union",
        ]
        .into_iter()
        .find(|kw| word_at(i, kw))
        {
            let (name, j) = name_after(i + kw.len());
            if !name.is_empty() && stack.iter().all(Option::is_none) {
                defines.insert(name);
            }
            i = j.max(i + 1);
            continue;
        }
        if word_at(i, "use") {
            let end = (i..chars.len())
                .find(|&j| chars[j] == ';')
                .unwrap_or(chars.len());
            let tree: String = chars[i + 3..end].iter().collect();
            // `pub use`, `pub(crate) use`, ...: a re-export
            let before: String = chars[i.saturating_sub(20)..i].iter().collect();
            let before = before.trim_end();
            let public =
                before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
            uses.push((
                current(&stack),
                tree,
                if public { Kind::PubUse } else { Kind::Use },
            ));
            i = end + 1;
            continue;
        }
        if is_ident(c) && (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':') {
            // a path in code (`super::bslm::fit(..)`, `crate::rbm::exact::x`): an import too
            let (first, mut j) = name_after(i);
            let mut path = vec![first];
            while chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                let (seg, k) = name_after(j + 2);
                if seg.is_empty() {
                    break;
                }
                path.push(seg);
                j = k;
            }
            if path.len() > 1 {
                uses.push((current(&stack), path.join("::"), Kind::Path));
            }
            i = j.max(i + 1);
            continue;
        }
        match c {
            '{' => {
                let m = pending_mod.take();
                stack.push(m.clone());
                if m.is_some() {
                    inline.insert(current(&stack));
                }
            }
            '}' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    Parsed {
        uses,
        inline,
        defines,
    }
}

/// A module of a crate: what it defines and re-exports.
#[derive(Default)]
struct Module {
    defines: BTreeSet<String>,
    /// `pub use` items by the name they take here → (crate, absolute path).
    reexports: BTreeMap<String, (usize, Vec<String>)>,
    /// `pub use x::*`: the modules whose items it re-exports.
    globs: Vec<(usize, Vec<String>)>,
}

/// Modules a file imported by name (`use crate::fvbm;`) → (crate, absolute path).
type Aliases = BTreeMap<String, (usize, Vec<String>)>;

/// The workspace's Rust crates: names and modules.
struct Workspace {
    crates: Vec<Crate>,
    modules: Vec<BTreeMap<Vec<String>, Module>>,
}

impl Workspace {
    /// `path` as written in module `here` of crate `ci`, made absolute: (crate, path).
    fn absolute(
        &self,
        ci: usize,
        here: &[String],
        path: &[String],
        aliases: &Aliases,
    ) -> Option<(usize, Vec<String>)> {
        let first = path.first()?;
        Some(match first.as_str() {
            "crate" => (ci, path[1..].to_vec()),
            "self" => {
                let mut a = here.to_vec();
                a.extend(path[1..].iter().cloned());
                (ci, a)
            }
            "super" => {
                let mut a = here.to_vec();
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    a.pop();
                    k += 1;
                }
                a.extend(path[k..].iter().cloned());
                (ci, a)
            }
            name => {
                let mut child = here.to_vec();
                child.push(name.to_string());
                if self.modules[ci].contains_key(&child) {
                    child.extend(path[1..].iter().cloned());
                    (ci, child)
                } else if let Some((ac, a)) = aliases.get(name) {
                    let mut a = a.clone();
                    a.extend(path[1..].iter().cloned());
                    (*ac, a)
                } else {
                    let other = self.crates.iter().position(|c| c.name == name)?;
                    (other, path[1..].to_vec())
                }
            }
        })
    }

    /// The module that defines what the absolute `path` names (a module itself, or the
    /// module defining the item, re-exports followed).
    fn resolve(&self, ci: usize, mut path: Vec<String>, depth: usize) -> (usize, Vec<String>) {
        let modules = &self.modules[ci];
        let mut rest = Vec::new();
        while !modules.contains_key(&path) {
            rest.insert(0, path.pop().unwrap());
        }
        let Some(name) = rest.first() else {
            return (ci, path);
        };
        let m = &modules[&path];
        if m.defines.contains(name) || depth > 8 {
            return (ci, path);
        }
        if let Some((tc, target)) = m.reexports.get(name) {
            let mut t = target.clone();
            t.extend(rest[1..].iter().cloned());
            return self.resolve(*tc, t, depth + 1);
        }
        for (gc, g) in &m.globs {
            let gm = self.modules[*gc].get(g);
            if gm.is_some_and(|gm| gm.defines.contains(name) || gm.reexports.contains_key(name)) {
                let mut t = g.clone();
                t.extend(rest.iter().cloned());
                return self.resolve(*gc, t, depth + 1);
            }
        }
        (ci, path)
    }
}

/// The Rust import graph of the workspace: an edge from a module to the module that
/// defines each thing it imports (re-exports followed), and from a face to each module it
/// re-exports from.
fn rust_edges(root: &Path) -> BTreeMap<Node, BTreeSet<Node>> {
    let mut crates = Vec::new();
    let mut sources = Vec::new();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut ws = Workspace {
        crates: Vec::new(),
        modules: Vec::new(),
    };
    for dir in dirs {
        let src = dir.join("src");
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        let field = |section: &str| {
            manifest
                .lines()
                .skip_while(|l| l.trim() != section)
                .skip(1)
                .take_while(|l| !l.trim().starts_with('['))
                .find_map(|l| l.trim().strip_prefix("name = "))
                .map(|n| n.trim_matches('"').replace('-', "_"))
        };
        let Some(name) = field("[lib]").or_else(|| field("[package]")) else {
            continue;
        };
        let mut rs = Vec::new();
        files(&src, "rs", &mut rs);
        let mut modules = BTreeMap::new();
        let mut parsed = Vec::new();
        for f in rs {
            let p = parse(&strip_rust(&fs::read_to_string(&f).unwrap()));
            let m = module_of(&src, &f);
            modules.insert(
                m.clone(),
                Module {
                    defines: p.defines.clone(),
                    ..Module::default()
                },
            );
            for i in &p.inline {
                let mut full = m.clone();
                full.extend(i.iter().cloned());
                modules.entry(full).or_default();
            }
            parsed.push((m, p));
        }
        crates.push(Crate { name: name.clone() });
        ws.crates.push(Crate { name });
        ws.modules.push(modules);
        sources.push(parsed);
    }
    // the re-exports first (any order of files), then every import resolved through them
    for (ci, parsed) in sources.iter().enumerate() {
        for (file_mod, p) in parsed {
            for (inline, tree, kind) in &p.uses {
                if *kind != Kind::PubUse {
                    continue;
                }
                let mut here = file_mod.clone();
                here.extend(inline.iter().cloned());
                for (path, glob, alias) in flatten_use(tree) {
                    let Some((tc, abs)) = ws.absolute(ci, &here, &path, &BTreeMap::new()) else {
                        continue;
                    };
                    let m = ws.modules[ci].get_mut(&here).unwrap();
                    if glob {
                        m.globs.push((tc, abs));
                    } else if let Some(name) = alias.or_else(|| abs.last().cloned()) {
                        m.reexports.insert(name, (tc, abs));
                    }
                }
            }
        }
    }
    let mut edges: BTreeMap<Node, BTreeSet<Node>> = BTreeMap::new();
    for (ci, parsed) in sources.iter().enumerate() {
        for (file_mod, p) in parsed {
            // modules imported by name (`use crate::fvbm;`), which paths in code then start from
            let mut aliases: BTreeMap<Vec<String>, Aliases> = BTreeMap::new();
            for (inline, tree, kind) in &p.uses {
                if *kind == Kind::Path {
                    continue;
                }
                let mut here = file_mod.clone();
                here.extend(inline.iter().cloned());
                for (path, glob, alias) in flatten_use(tree) {
                    let Some((tc, abs)) = ws.absolute(ci, &here, &path, &BTreeMap::new()) else {
                        continue;
                    };
                    if !glob && ws.modules[tc].contains_key(&abs) {
                        if let Some(name) = alias.or_else(|| abs.last().cloned()) {
                            aliases
                                .entry(here.clone())
                                .or_default()
                                .insert(name, (tc, abs));
                        }
                    }
                }
            }
            let none = BTreeMap::new();
            for (inline, tree, _) in &p.uses {
                let mut here = file_mod.clone();
                here.extend(inline.iter().cloned());
                let from = node(&crates[ci].name, &here);
                let aliases = aliases.get(&here).unwrap_or(&none);
                for (path, _, _) in flatten_use(tree) {
                    let Some((tc, abs)) = ws.absolute(ci, &here, &path, aliases) else {
                        continue; // std, an external crate, a type's associated item
                    };
                    let (rc, module) = ws.resolve(tc, abs, 0);
                    let to = node(&crates[rc].name, &module);
                    if to != from {
                        edges.entry(from.clone()).or_default().insert(to);
                    }
                }
            }
        }
    }
    edges
}

/// The Python package's import graph: `boltzkit.rbm → boltzkit._model`, ...
fn python_edges(root: &Path) -> BTreeMap<Node, BTreeSet<Node>> {
    let pkg = root.join("crates/boltzkit-py/python/boltzkit");
    let mut py = Vec::new();
    files(&pkg, "py", &mut py);
    // stubs of native modules (`_native.pyi`) name modules too
    let mut stubs = Vec::new();
    files(&pkg, "pyi", &mut stubs);
    let module = |f: &Path| -> String {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        if stem == "__init__" {
            "boltzkit".into()
        } else {
            format!("boltzkit.{stem}")
        }
    };
    let known: BTreeSet<String> = py.iter().chain(&stubs).map(|f| module(f)).collect();
    let mut edges: BTreeMap<Node, BTreeSet<Node>> = BTreeMap::new();
    for f in &py {
        let from = module(f);
        let text = fs::read_to_string(f).unwrap();
        // join parenthesized continuation lines of `from x import (a, b)`
        let mut lines = Vec::new();
        let mut open = String::new();
        for l in text.lines() {
            let l = l.split('#').next().unwrap_or("");
            if !open.is_empty() {
                open.push(' ');
                open.push_str(l);
                if l.contains(')') {
                    lines.push(std::mem::take(&mut open));
                }
            } else if l.trim_start().starts_with("from ") && l.contains('(') && !l.contains(')') {
                open = l.to_string();
            } else {
                lines.push(l.to_string());
            }
        }
        for l in lines {
            let t = l.trim();
            let mut targets = Vec::new();
            if let Some(rest) = t.strip_prefix("from ") {
                let Some((base, names)) = rest.split_once(" import ") else {
                    continue;
                };
                let base = base.trim();
                let abs = if let Some(rel) = base.strip_prefix('.') {
                    if rel.is_empty() {
                        "boltzkit".to_string()
                    } else {
                        format!("boltzkit.{rel}")
                    }
                } else {
                    base.to_string()
                };
                let names = names.trim().trim_start_matches('(').trim_end_matches(')');
                for n in names.split(',') {
                    let n = n.split(" as ").next().unwrap().trim();
                    let sub = format!("{abs}.{n}");
                    if known.contains(&sub) {
                        targets.push(sub);
                    } else {
                        targets.push(abs.clone());
                    }
                }
            } else if let Some(rest) = t.strip_prefix("import ") {
                for n in rest.split(',') {
                    targets.push(n.split(" as ").next().unwrap().trim().to_string());
                }
            }
            for mut t in targets {
                while !known.contains(&t) {
                    match t.rfind('.') {
                        Some(dot) => t.truncate(dot),
                        None => break,
                    }
                }
                if known.contains(&t) && t != from {
                    edges.entry(from.clone()).or_default().insert(t);
                }
            }
        }
    }
    edges
}

/// The pairs `a → b → a` of a graph, each once (`a < b`).
fn circles(edges: &BTreeMap<Node, BTreeSet<Node>>) -> Vec<(Node, Node)> {
    let mut out = Vec::new();
    for (a, tos) in edges {
        for b in tos {
            if a < b && edges.get(b).is_some_and(|back| back.contains(a)) {
                out.push((a.clone(), b.clone()));
            }
        }
    }
    out
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let root = root();
    let rust = rust_edges(&root);
    let python = python_edges(&root);
    // the graph was read (a parser that found nothing would pass vacuously)
    assert!(rust.len() > 100, "{} Rust modules with imports", rust.len());
    assert!(
        rust["boltzkit::rbm::train::cd"].contains("boltzkit::rbm::gibbs::fused"),
        "{:?}",
        rust["boltzkit::rbm::train::cd"]
    );
    assert!(python.len() >= 5, "{python:?}");
    let found: Vec<String> = circles(&rust)
        .into_iter()
        .chain(circles(&python))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(
        found.is_empty(),
        "{} import circles (a module importing one that imports it back; ARCHITECTURE.md, \
         \"Import rules\": move what both need to a sibling that imports neither):\n{}",
        found.len(),
        found.join("\n"),
    );
}

/// The checker finds circles where there are some: the parser's pieces on small inputs.
#[test]
fn the_checker_sees_circles() {
    let paths: Vec<(String, bool, Option<String>)> =
        flatten_use(" a::{b, c::{d, self}, e as f, g::*}")
            .into_iter()
            .map(|(p, g, a)| (p.join("::"), g, a))
            .collect();
    assert_eq!(
        paths,
        vec![
            ("a::b".into(), false, None),
            ("a::c::d".into(), false, None),
            ("a::c".into(), false, None),
            ("a::e".into(), false, Some("f".into())),
            ("a::g".into(), true, None),
        ]
    );
    let text = strip_rust(
        "use x::y; // use no::no;\nlet s = \"use q::r; {\"; let c = '{';\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::z;\n}\n",
    );
    let p = parse(&text);
    let trees: Vec<_> = p
        .uses
        .iter()
        .map(|(m, t, _)| (m.join("::"), t.trim().to_string()))
        .collect();
    assert_eq!(
        trees,
        vec![
            (String::new(), "x::y".to_string()),
            ("tests".to_string(), "super::*".to_string()),
            ("tests".to_string(), "crate::z".to_string()),
        ]
    );
    assert!(p.inline.contains(&vec!["tests".to_string()]));
    let g = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        (
            "b".to_string(),
            BTreeSet::from(["a".to_string(), "c".to_string()]),
        ),
    ]);
    assert_eq!(circles(&g), vec![("a".to_string(), "b".to_string())]);
}
