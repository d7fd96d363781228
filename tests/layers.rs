//! The house's plan, read from the code: no import circle between the modules of `src/`,
//! `model/src` and `loom-tests/src`, and no import from a lower floor up to a higher one.
//!
//! Every source file is a module (`mod.rs`, `lib.rs` or `main.rs` is its folder's module),
//! found by following `mod` declarations from the crate root; items under `#[cfg(test)]` are
//! left out (a test may use what sits above it). Module A imports module B when a path in A —
//! in a `use` item, a type or an expression — starts with `crate::`, `self::`, `super::` or the
//! name of one of A's child modules, and its longest prefix naming a module is B. A parent that re-exports `child::X` thus imports
//! the child, so a child that reaches a sibling through its parent's re-exports, or uses an item
//! defined in its parent, closes a circle. Paths written inside macro invocations are not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One crate's module tree: module path (segments below the root) → file.
struct Tree {
    files: BTreeMap<Vec<String>, PathBuf>,
    /// Module → the modules it imports.
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

/// `#[cfg(test)]` or `#[cfg(all(test, ...))]`: built only for a test.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let cfg: String = l.tokens.to_string().split_whitespace().collect();
                cfg == "test" || cfg.starts_with("all(test,")
            })
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Collects the `crate::`/`self::`/`super::` paths of one file, outside `#[cfg(test)]` items.
#[derive(Default)]
struct Paths {
    paths: Vec<Vec<String>>,
    /// `mod name;` declarations (not under `#[cfg(test)]`).
    mods: Vec<String>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push_path(prefix.iter().cloned().chain([n.ident.to_string()]).collect()),
            syn::UseTree::Rename(r) => self.push_path(prefix.iter().cloned().chain([r.ident.to_string()]).collect()),
            syn::UseTree::Glob(_) => self.push_path(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }

    fn push_path(&mut self, path: Vec<String>) {
        if !path.is_empty() {
            self.paths.push(path);
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_cfg_test(item_attrs(item)) {
            return;
        }
        if let syn::Item::Mod(m) = item {
            if m.content.is_none() {
                self.mods.push(m.ident.to_string());
                return;
            }
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    /// `pub(crate)` and `pub(super)` restrict visibility; they import nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            self.push_path(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }
}

/// Reads the crate rooted at `root_file` (`src/lib.rs`), following `mod` declarations.
fn read_tree(root_file: &Path) -> Tree {
    let mut files = BTreeMap::new();
    let mut raw: BTreeMap<Vec<String>, Vec<Vec<String>>> = BTreeMap::new();
    let mut todo = vec![(Vec::<String>::new(), root_file.to_path_buf())];
    while let Some((module, file)) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut paths = Paths::default();
        paths.visit_file(&ast);
        // Where this module's children live: beside `mod.rs`/`lib.rs`/`main.rs`, else in a
        // folder named after the file.
        let stem = file.file_stem().unwrap().to_str().unwrap();
        let dir = if matches!(stem, "mod" | "lib" | "main") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.parent().unwrap().join(stem)
        };
        for child in &paths.mods {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(child).join("mod.rs");
            let path = if flat.exists() { flat } else { nested };
            assert!(path.exists(), "{}: mod {child} has no file", file.display());
            let mut m = module.clone();
            m.push(child.clone());
            todo.push((m, path));
        }
        raw.insert(module.clone(), paths.paths);
        files.insert(module, file);
    }
    // Resolve each path to the longest prefix naming a module.
    let mut edges = BTreeMap::new();
    for (module, paths) in &raw {
        let mut to = BTreeSet::new();
        for path in paths {
            let (mut base, mut rest): (Vec<String>, &[String]) = match path[0].as_str() {
                "crate" => (Vec::new(), &path[1..]),
                "self" | "super" => (module.clone(), &path[1..]),
                // A path relative to this module names one of its child modules, or is no
                // module path of this crate (an external crate, a local item).
                first => {
                    let mut child = module.clone();
                    child.push(first.to_string());
                    if !files.contains_key(&child) {
                        continue;
                    }
                    (module.clone(), &path[..])
                }
            };
            if path[0] == "super" {
                base.pop();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            let mut target = base.clone();
            for seg in rest {
                target.push(seg.clone());
                if !files.contains_key(&target) {
                    target.pop();
                    break;
                }
            }
            if &target != module {
                to.insert(target);
            }
        }
        edges.insert(module.clone(), to);
    }
    Tree { files, edges }
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// Every import circle: the strongly connected components of more than one module (Tarjan).
fn circles(tree: &Tree) -> Vec<Vec<String>> {
    struct State<'a> {
        tree: &'a Tree,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Vec<String>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in &s.tree.edges[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(name(w));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        tree,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in tree.edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Imports that go up: from a module in floor `i` to one in a higher floor. `floors` names the
/// top-level folders lowest first; the crate root stands above them all, and every other
/// top-level module must be placed.
fn imports_up(tree: &Tree, floors: &[&str]) -> Vec<String> {
    let floor = |m: &Vec<String>| -> usize {
        match m.first() {
            None => floors.len(),
            Some(top) => floors
                .iter()
                .position(|f| f == top)
                .unwrap_or_else(|| panic!("module {} is on no floor of {floors:?}", name(m))),
        }
    };
    let mut out = Vec::new();
    for (from, tos) in &tree.edges {
        for to in tos {
            if floor(to) > floor(from) {
                out.push(format!("{} ({}) imports {}", name(from), tree.files[from].display(), name(to)));
            }
        }
    }
    out
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn assert_plan(root_file: &str, floors: &[&str]) {
    let tree = read_tree(&repo().join(root_file));
    let circles = circles(&tree);
    let detail: Vec<String> = circles
        .iter()
        .flat_map(|c| {
            tree.edges
                .iter()
                .filter(|(from, _)| c.contains(&name(from)))
                .flat_map(|(from, tos)| {
                    tos.iter().filter(|to| c.contains(&name(to))).map(|to| format!("{} -> {}", name(from), name(to)))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(circles.is_empty(), "{root_file}: import circles: {circles:#?}, by the imports {detail:#?}");
    let up = imports_up(&tree, floors);
    assert!(up.is_empty(), "{root_file}: imports back up the floors {floors:?}: {up:#?}");
}

#[test]
fn the_library_has_no_import_circle_and_no_import_up() {
    assert_plan("src/lib.rs", &["protocol", "check", "apps", "formats", "logs", "runtime", "sim", "testing"]);
}

#[test]
fn the_model_crate_has_no_import_circle_and_no_import_up() {
    assert_plan("model/src/lib.rs", &["engine", "system", "reduce", "graph", "check", "cli"]);
    assert_plan("model/src/main.rs", &[]);
}

#[test]
fn the_loom_tests_have_no_import_circle() {
    let tree = read_tree(&repo().join("loom-tests/src/lib.rs"));
    assert_eq!(circles(&tree), Vec::<Vec<String>>::new());
}

/// The checker itself sees a circle, a parent's re-export used by its child, and an import up.
#[test]
fn the_checker_sees_circles_and_imports_up() {
    let scratch = tempfile::Builder::new().prefix("layers-test-").tempdir().unwrap();
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("low")).unwrap();
    std::fs::create_dir_all(dir.join("high")).unwrap();
    let write = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
    write("lib.rs", "pub mod low;\npub mod high;\n");
    write("low/mod.rs", "mod a;\nmod b;\npub use a::A;\n");
    write("low/a.rs", "use super::b::B;\npub struct A(B);\n");
    write("low/b.rs", "pub struct B;\n#[cfg(test)]\nmod tests { use crate::high::H; }\n");
    write("high/mod.rs", "pub struct H(crate::low::A);\n");
    let tree = read_tree(&dir.join("lib.rs"));
    assert!(circles(&tree).is_empty());
    assert!(imports_up(&tree, &["low", "high"]).is_empty());
    assert_eq!(imports_up(&tree, &["high", "low"]).len(), 1);
    // A child reaching a sibling through its parent's re-export closes a circle.
    write("low/b.rs", "pub struct B(super::A);\n");
    let tree = read_tree(&dir.join("lib.rs"));
    assert_eq!(circles(&tree), vec![vec!["low".to_string(), "low::a".into(), "low::b".into()]]);
    // So does an import in an expression, and one up through `super::super`.
    write("low/b.rs", "pub struct B;\nfn f() { let _ = super::super::high::H::default; }\n");
    let tree = read_tree(&dir.join("lib.rs"));
    assert_eq!(
        imports_up(&tree, &["low", "high"]),
        vec![format!("low::b ({}) imports high", dir.join("low/b.rs").display())]
    );
}
