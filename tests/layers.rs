//! The house's rules, checked over the source of every crate in the workspace:
//!
//! - **No import circles between files.** Each `use` line (at any depth, test modules included)
//!   is resolved to the file that defines the item it names, following `pub use` re-exports;
//!   `mod` declarations and the re-exports themselves are not imports. The files and their
//!   imports form a graph that must have no cycle.
//! - **No import from a lower layer into a higher one.** The layers, lowest first: `error`;
//!   `time`, `trust`, `store`, `embed` (the `Embedder` trait and its types); `record`; `index`,
//!   `learn`, `compact`, `context` and the embedder crate; `engine`; `demo`, the test helpers and the benchmark workloads; the JSON facade; the
//!   bindings, the CLI and the wasmtime host. A file may import from its own layer (other
//!   files, no circle) and from any lower one.
//! - **No file longer than [`MAX_LINES`].**
//!
//! A `use` path the resolver cannot place inside the workspace (one naming a crate outside it,
//! `std`, `serde`, …) is not an edge; one that starts inside the workspace and does not resolve
//! fails the test, so a renamed item cannot hide an edge.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The longest file allowed (the longest at the time the rule was written).
const MAX_LINES: usize = 1_126;

/// The workspace's crates: name in `use` paths, the root source file.
const CRATES: &[(&str, &str)] = &[
    ("mnemo", "src/lib.rs"),
    ("mnemo_embed", "crates/embed/src/lib.rs"),
    ("mnemo_bench", "crates/bench/src/lib.rs"),
    ("mnemo_json", "crates/json/src/lib.rs"),
    ("mnemo_js", "crates/js/src/lib.rs"),
    ("mnemo_component", "crates/component/src/lib.rs"),
    ("mnemo_tool", "crates/cli/src/lib.rs"),
    ("mnemo_host", "host/src/main.rs"),
];

/// A file's layer: by crate, and inside the core by its top-level module.
fn layer(krate: &str, module: &[String]) -> u32 {
    match krate {
        "mnemo" => match module.first().map(String::as_str) {
            None => 0, // lib.rs: declarations and re-exports only
            Some("error") => 0,
            // the Embedder trait, its vector and polarity types: the engine's vocabulary
            Some("time" | "trust" | "store" | "embed") => 1,
            Some("record") => 2,
            Some("index" | "learn" | "compact" | "context") => 3,
            Some("engine") => 4,
            // the demo scenario; the fuzz harness and the core's fuzz targets (tests only)
            Some("demo" | "testing" | "fuzz") => 5,
            Some(other) => {
                panic!("src/{other}: a top-level module with no layer; add it to layer()")
            }
        },
        "mnemo_embed" => 3,
        "mnemo_bench" => 5,
        "mnemo_json" => 6,
        "mnemo_js" | "mnemo_component" | "mnemo_tool" | "mnemo_host" => 7,
        other => panic!("crate {other} has no layer"),
    }
}

/// One module: a file, or an inline `mod x { }` inside one.
#[derive(Default)]
struct Module {
    file: PathBuf,
    children: BTreeMap<String, usize>,
    /// Items defined here (struct, enum, fn, trait, type, const, static, macro, union).
    items: BTreeSet<String>,
    /// `pub use` (any visibility but private): the name it binds → the path it names.
    reexports: BTreeMap<String, Vec<String>>,
    /// `pub use path::*`.
    glob_reexports: Vec<Vec<String>>,
    /// Private `use` trees: (the path named, the name bound or `*`).
    uses: Vec<(Vec<String>, String)>,
    /// Paths named inline (not in a `use`) that start inside the workspace.
    paths: Vec<Vec<String>>,
    /// Items a macro generates here (`wit_bindgen::generate!`, …): a name found nowhere else
    /// may be one of them.
    generated: bool,
    parent: Option<usize>,
    krate: usize,
    path: Vec<String>,
}

struct Tree {
    modules: Vec<Module>,
    roots: HashMap<String, usize>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Flattens a use tree into (path, bound name) pairs; `self` binds the path's last segment.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                out.push((prefix.clone(), prefix.last().cloned().unwrap_or_default()));
            } else {
                let mut p = prefix.clone();
                p.push(name.clone());
                out.push((p, name));
            }
        }
        syn::UseTree::Rename(r) => {
            let name = r.ident.to_string();
            let mut p = prefix.clone();
            if name != "self" {
                p.push(name);
            }
            out.push((p, r.rename.to_string()));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), "*".into())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Collects, inside one item, the `use` items of its function bodies and blocks and the paths
/// it names inline (`crate::learn::Learn`, `super::fuse::count(..)`): both are imports of what
/// they name. The visitor stops at nested modules, which are modules of their own.
struct InnerUses<'a> {
    uses: &'a mut Vec<(Vec<String>, String)>,
    paths: &'a mut Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for InnerUses<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            prefix.push(String::new());
        }
        flatten(&u.tree, &mut prefix, self.uses);
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let first = segs.first().map(String::as_str).unwrap_or("");
        let workspace = CRATES.iter().any(|(c, _)| *c == first);
        if segs.len() > 1 && (matches!(first, "crate" | "super" | "self") || workspace) {
            let mut full = segs;
            if p.leading_colon.is_some() {
                full.insert(0, String::new());
            }
            self.paths.push(full);
        }
        syn::visit::visit_path(self, p);
    }
}

impl Tree {
    fn load() -> Tree {
        let mut t = Tree { modules: Vec::new(), roots: HashMap::new() };
        for (k, (name, file)) in CRATES.iter().enumerate() {
            let file = root().join(file);
            if !file.exists() {
                continue; // a crate not created yet
            }
            let ast = parse(&file);
            let id = t.add(k, None, Vec::new(), file.clone());
            t.fill(id, &ast.items, file.parent().unwrap().to_path_buf());
            t.roots.insert(name.to_string(), id);
        }
        t
    }

    fn add(
        &mut self,
        krate: usize,
        parent: Option<usize>,
        path: Vec<String>,
        file: PathBuf,
    ) -> usize {
        self.modules.push(Module { file, parent, krate, path, ..Module::default() });
        self.modules.len() - 1
    }

    /// Records a module's items; `dir` is where its child modules' files are.
    fn fill(&mut self, id: usize, items: &[syn::Item], dir: PathBuf) {
        for item in items {
            let (vis, name) = match item {
                syn::Item::Use(u) => {
                    let mut flat = Vec::new();
                    let mut prefix = Vec::new();
                    if u.leading_colon.is_some() {
                        prefix.push(String::new());
                    }
                    flatten(&u.tree, &mut prefix, &mut flat);
                    let m = &mut self.modules[id];
                    if matches!(u.vis, syn::Visibility::Inherited) {
                        m.uses.extend(flat);
                    } else {
                        for (p, n) in flat {
                            if n == "*" {
                                m.glob_reexports.push(p);
                            } else {
                                m.reexports.insert(n, p);
                            }
                        }
                    }
                    continue;
                }
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let mut path = self.modules[id].path.clone();
                    path.push(name.clone());
                    let krate = self.modules[id].krate;
                    let child = match &m.content {
                        Some((_, inner)) => {
                            let file = self.modules[id].file.clone();
                            let c = self.add(krate, Some(id), path, file);
                            self.fill(c, inner, dir.join(&name));
                            c
                        }
                        None => {
                            let file = match path_attr(&m.attrs) {
                                Some(p) => dir.join(p),
                                None => {
                                    let flat = dir.join(format!("{name}.rs"));
                                    if flat.exists() {
                                        flat
                                    } else {
                                        dir.join(&name).join("mod.rs")
                                    }
                                }
                            };
                            let ast = parse(&file);
                            let c = self.add(krate, Some(id), path, file.clone());
                            let is_mod_rs = file.file_name().is_some_and(|f| f == "mod.rs");
                            let sub = if is_mod_rs {
                                file.parent().unwrap().to_path_buf()
                            } else {
                                dir.join(&name)
                            };
                            self.fill(c, &ast.items, sub);
                            c
                        }
                    };
                    self.modules[id].children.insert(name, child);
                    continue;
                }
                syn::Item::Struct(s) => (&s.vis, s.ident.to_string()),
                syn::Item::Enum(e) => (&e.vis, e.ident.to_string()),
                syn::Item::Fn(f) => (&f.vis, f.sig.ident.to_string()),
                syn::Item::Trait(t) => (&t.vis, t.ident.to_string()),
                syn::Item::Type(t) => (&t.vis, t.ident.to_string()),
                syn::Item::Const(c) => (&c.vis, c.ident.to_string()),
                syn::Item::Static(s) => (&s.vis, s.ident.to_string()),
                syn::Item::Union(u) => (&u.vis, u.ident.to_string()),
                syn::Item::Macro(m) => match &m.ident {
                    Some(i) => (&syn::Visibility::Inherited, i.to_string()),
                    None => {
                        self.modules[id].generated = true;
                        continue;
                    }
                },
                _ => {
                    self.inner(id, item);
                    continue;
                }
            };
            self.inner(id, item);
            let _ = vis;
            self.modules[id].items.insert(name);
        }
    }

    /// The uses in an item's bodies and the paths it names inline.
    fn inner(&mut self, id: usize, item: &syn::Item) {
        let (mut uses, mut paths) = (Vec::new(), Vec::new());
        InnerUses { uses: &mut uses, paths: &mut paths }.visit_item(item);
        self.modules[id].uses.extend(uses);
        self.modules[id].paths.extend(paths);
    }

    /// Where a path used in module `at` starts: a module, and the segments left.
    fn start<'p>(&self, at: usize, path: &'p [String]) -> Option<(usize, &'p [String])> {
        let first = path.first()?;
        match first.as_str() {
            "" => self.roots.get(path.get(1)?).map(|&r| (r, &path[2..])),
            "crate" => {
                let mut m = at;
                while let Some(p) = self.modules[m].parent {
                    m = p;
                }
                Some((m, &path[1..]))
            }
            "self" => Some((at, &path[1..])),
            "super" => {
                let mut m = at;
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    m = self.modules[m].parent.expect("super past the crate root");
                    rest = &rest[1..];
                }
                Some((m, rest))
            }
            name => {
                if let Some(&c) = self.modules[at].children.get(name) {
                    return Some((c, &path[1..]));
                }
                self.roots.get(name).map(|&r| (r, &path[1..]))
            }
        }
    }

    /// The file that defines what `path` names when written in module `at`; `Ok(None)` for a
    /// path outside the workspace, `Err` for one inside it that names nothing.
    fn resolve(&self, at: usize, path: &[String], depth: u32) -> Result<Option<PathBuf>, String> {
        if depth > 16 {
            return Err(format!("{}: re-exports loop", path.join("::")));
        }
        let Some((mut m, rest)) = self.start(at, path) else { return Ok(None) };
        for (i, seg) in rest.iter().enumerate() {
            let module = &self.modules[m];
            if let Some(&c) = module.children.get(seg) {
                m = c;
                continue;
            }
            if module.items.contains(seg) {
                // an item (or an enum's variants / a type's associated items past it)
                return Ok(Some(module.file.clone()));
            }
            if let Some(target) = module.reexports.get(seg) {
                let mut full = target.clone();
                full.extend_from_slice(&rest[i + 1..]);
                return self.resolve(m, &full, depth + 1);
            }
            if let Some((target, _)) =
                module.uses.iter().find(|(p, n)| n == seg && p.last() != Some(&"*".to_string()))
            {
                // a name this module imported privately, which its child modules may name
                let mut full = target.clone();
                full.extend_from_slice(&rest[i + 1..]);
                return self.resolve(m, &full, depth + 1);
            }
            for g in &module.glob_reexports {
                let mut full = g.clone();
                full.extend_from_slice(&rest[i..]);
                if let Ok(Some(f)) = self.resolve(m, &full, depth + 1) {
                    return Ok(Some(f));
                }
            }
            if module.generated {
                return Ok(None);
            }
            return Err(format!(
                "{}: `{}` names nothing in {}",
                module.file.display(),
                seg,
                if module.path.is_empty() {
                    "the crate root".into()
                } else {
                    module.path.join("::")
                }
            ));
        }
        Ok(Some(self.modules[m].file.clone()))
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// Tarjan's strongly connected components; returns those of more than one file.
fn cycles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct S<'g> {
        g: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: HashMap<&'g PathBuf, usize>,
        low: HashMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on: BTreeSet<&'g PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(s: &mut S<'g>, v: &'g PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(ws) = s.g.get(v) {
            for w in ws {
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if s.on.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        g: graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_circles_no_upward_imports_no_long_files() {
    let tree = Tree::load();
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut layer_of: HashMap<PathBuf, u32> = HashMap::new();
    let mut why: HashMap<(PathBuf, PathBuf), String> = HashMap::new();
    let mut problems = Vec::new();
    for (id, m) in tree.modules.iter().enumerate() {
        let krate = CRATES[m.krate].0;
        let l = layer(krate, &m.path);
        // an inline module counts as its file's module
        layer_of.entry(m.file.clone()).or_insert(l);
        graph.entry(m.file.clone()).or_default();
        let named = m.uses.iter().map(|(p, _)| p).chain(&m.paths);
        for path in named {
            match tree.resolve(id, path, 0) {
                Ok(Some(to)) if to != m.file => {
                    why.entry((m.file.clone(), to.clone())).or_insert_with(|| path.join("::"));
                    graph.get_mut(&m.file).unwrap().insert(to);
                }
                Ok(_) => {}
                Err(e) => problems.push(format!("unresolved `use {}`: {e}", path.join("::"))),
            }
        }
    }
    for (from, tos) in &graph {
        for to in tos {
            let (lf, lt) = (layer_of[from], layer_of[to]);
            if lf < lt {
                problems.push(format!(
                    "{} (layer {lf}) imports {} (layer {lt}): a lower layer may not import a higher one",
                    rel(from),
                    rel(to)
                ));
            }
        }
    }
    for c in cycles(&graph) {
        let names: Vec<String> = c.iter().map(|p| rel(p)).collect();
        let mut edges = Vec::new();
        for from in &c {
            for to in graph[from].iter().filter(|t| c.contains(t)) {
                let via = &why[&(from.clone(), to.clone())];
                edges.push(format!("    {} → {} ({via})", rel(from), rel(to)));
            }
        }
        problems.push(format!("import circle between {}:\n{}", names.join(", "), edges.join("\n")));
    }
    for file in graph.keys() {
        let lines = std::fs::read_to_string(file).unwrap().lines().count();
        if lines > MAX_LINES {
            problems
                .push(format!("{} has {lines} lines (at most {MAX_LINES}): split it", rel(file)));
        }
    }
    assert!(graph.len() > 100, "only {} files found: is the walk broken?", graph.len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The checker finds what it is meant to: a circle through a re-export, and an upward import.
#[test]
fn the_checker_sees_a_circle_and_an_upward_import() {
    let mut g = BTreeMap::new();
    let (a, b, c) = (PathBuf::from("a.rs"), PathBuf::from("b.rs"), PathBuf::from("c.rs"));
    g.insert(a.clone(), BTreeSet::from([b.clone()]));
    g.insert(b.clone(), BTreeSet::from([c.clone()]));
    g.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(cycles(&g), vec![vec![a.clone(), b.clone(), c.clone()]]);
    g.insert(c.clone(), BTreeSet::new());
    assert!(cycles(&g).is_empty());

    // resolution through a re-export: store/mod.rs re-exports KvStore from its own file or a child
    let tree = Tree::load();
    let engine = tree.modules.iter().position(|m| m.path == ["engine"] && m.krate == 0).unwrap();
    let to = tree.resolve(engine, &["crate".into(), "store".into(), "KvStore".into()], 0);
    assert!(to.unwrap().unwrap().starts_with(root().join("src/store")));
    let bad = tree.resolve(engine, &["crate".into(), "store".into(), "NoSuchThing".into()], 0);
    assert!(bad.is_err());
    assert!(layer("mnemo", &["time".into()]) < layer("mnemo", &["engine".into()]));
}
