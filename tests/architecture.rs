//! The layering of `src/` (ARCHITECTURE.md): data flows one way, so a module may use only modules
//! of its own layer or below. A new upward import (or a new top-level module missing from the
//! table) fails here; so does the command line's language below `src/cli/` (a `"--flag"` string or
//! clap in a library file, outside the bindings' keyword mapping), a `Result<_, String>`, an
//! `unsafe fn` without a `# Safety` section, and an import circle between the CLI's modules or
//! between the solve layer's (the files and directories of src/solve/, its `mod.rs` counted as the
//! parent that uses them).

use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first. `error` joins every layer's error type into
/// `ubapp::Error`, so it sits above every layer whose error it joins and below the bindings that
/// hand it on; `tests` (the crate's internal scenario tests) is exempt.
const LAYERS: &[&str] = &[
    "guard",
    "model",
    "data",
    "output",
    "lp",
    "numeric",
    "certify",
    "solve",
    "analysis",
    "ledger",
    "mechanism",
    "eval",
    "baselines",
    "parties",
    "compare",
    "sweep",
    "report",
    "error",
    "bindings",
    "python",
];
const EXEMPT: &[&str] = &["tests"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under src/ belongs to (`None` for lib.rs, main.rs and the CLI).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_string_lossy().into_owned();
    let name = first.trim_end_matches(".rs").to_string();
    (!matches!(name.as_str(), "lib" | "main" | "cli")).then_some(name)
}

/// The module a `crate::NAME` reference lands in: the crate root re-exports `Error` and `Result`
/// from `error`.
fn module_named(name: String) -> String {
    match name.as_str() {
        "Error" | "Result" => "error".to_string(),
        _ => name,
    }
}

/// Every `crate::NAME` a file refers to (in `use` lines and paths alike), comments excluded, with
/// the crate root's re-exports of `error` counted as `error`.
fn crate_refs(text: &str) -> Vec<String> {
    let mut refs = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                refs.push(module_named(name));
            }
            rest = after;
        }
        // `use crate::{a, b::c}` lists several modules.
        if let Some(i) = code.find("crate::{") {
            let inner = &code[i + "crate::{".len()..];
            for item in inner.split([',', '}']) {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    refs.push(module_named(name));
                }
            }
        }
    }
    refs
}

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else { continue };
        if EXEMPT.contains(&module.as_str()) {
            continue;
        }
        let Some(own) = rank(&module) else {
            violations.push(format!("{}: module `{module}` is not in the layer table", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for target in crate_refs(&text) {
            // Re-exported items at the crate root (`crate::Error`, `crate::Result`, …) and the
            // crate's macros are not modules.
            let Some(theirs) = rank(&target) else { continue };
            if theirs > own {
                violations.push(format!("{}: `{module}` uses `crate::{target}`, a layer above it", file.display()));
            }
        }
    }
    assert!(violations.is_empty(), "upward imports:\n{}", violations.join("\n"));
}

#[test]
fn every_top_level_module_is_in_the_table() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines() {
        let line = line.trim();
        let Some(decl) = line.strip_suffix(';') else { continue };
        let Some(name) = decl.split_whitespace().last().filter(|_| decl.contains("mod ")) else { continue };
        assert!(
            rank(name).is_some() || EXEMPT.contains(&name),
            "src/lib.rs declares `mod {name}`: add it to LAYERS (ARCHITECTURE.md's map) in tests/architecture.rs"
        );
    }
}

/// Every layer below `error` returns its own error type (`ModelError`, `LpError`, `SolveError`, …)
/// and never names the crate-level `Error`/`Result`, which joins them only above.
fn returns_own_errors(module: &str) -> bool {
    rank(module).is_some_and(|r| rank("error").is_some_and(|e| r < e))
}

/// Whether a file's code names the crate-level error or result (`crate::Error`, `crate::Result`,
/// `crate::{Error, …}`, `crate::error::…`), comments excluded.
fn names_crate_error(text: &str) -> bool {
    text.lines().any(|line| {
        let code = line.split("//").next().unwrap_or("");
        let direct = ["crate::Error", "crate::Result", "crate::error::"].iter().any(|p| {
            code.match_indices(p).any(|(i, _)| {
                !code[i + p.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_') || p.ends_with("::")
            })
        });
        let listed = code.find("crate::{").is_some_and(|i| {
            code[i + "crate::{".len()..].split([',', '}']).any(|item| matches!(item.trim(), "Error" | "Result"))
        });
        direct || listed
    })
}

#[test]
fn lower_layers_return_their_own_errors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| module_of(&src, f).is_some_and(|m| returns_own_errors(&m)))
        .filter(|f| names_crate_error(&std::fs::read_to_string(f).unwrap()))
        .map(|f| f.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "these files name crate::Error or crate::Result:\n{}", offenders.join("\n"));
}

#[test]
fn the_error_checker_sees_the_crate_error() {
    assert!(names_crate_error("use crate::{Error, Result};"));
    assert!(names_crate_error("fn f() -> crate::Result<()> {"));
    assert!(names_crate_error("Err(crate::Error::argument(\"x\", \"y\"))"));
    assert!(!names_crate_error("use crate::lp::LpError; // crate::Error"));
    assert!(!names_crate_error("use crate::model::ModelError;"));
}

#[test]
fn the_checker_sees_upward_imports() {
    // Guard against a checker that cannot fail: a planted upward reference is found.
    let refs =
        crate_refs("use crate::{report::plot, model::Model};\nlet x = crate::solve::solve_model; // crate::mechanism");
    assert!(refs.contains(&"report".to_string()) && refs.contains(&"solve".to_string()));
    assert!(!refs.contains(&"mechanism".to_string()), "comments are not code");
    assert!(rank("report") > rank("model"));
    // The crate root's `Error`/`Result` are the `error` module, above every layer but the bindings.
    let refs = crate_refs("use crate::{Error, Result};\nfn f() -> crate::Result<()> {");
    assert_eq!(refs, ["error", "error", "error"]);
    assert!(returns_own_errors("report") && returns_own_errors("guard") && !returns_own_errors("python"));
}

// ---------------------------------------------------------------------------------------------
// The library speaks parameters, not the command line's flags; errors are typed; unsafe code
// states its contract; the CLI's modules import one way.

/// The lines of a file that are code: comments (`//`, `///`, `//!`) dropped, line numbers kept.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")).map(|(i, l)| (i + 1, l)).collect()
}

/// The lines of the functions named `names` (from `fn NAME` to the closing brace at its indent),
/// as 1-based line ranges.
fn function_lines(text: &str, names: &[&str]) -> Vec<std::ops::RangeInclusive<usize>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut ranges = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.split("fn ").nth(1).map(|r| r.split(['(', '<']).next().unwrap_or("")) else { continue };
        if !names.contains(&name) {
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let close = format!("{indent}}}");
        let end = lines[i..].iter().position(|l| *l == close).map_or(lines.len() - 1, |p| i + p);
        ranges.push(i + 1..=end + 1);
    }
    ranges
}

/// A library file's words from the command line: a string literal starting with a flag (`"--eps`)
/// or a path into clap. `None` where it has none.
fn cli_words(line: &str) -> Option<&'static str> {
    let flag = line.match_indices("\"--").any(|(i, _)| line[i + 3..].starts_with(|c: char| c.is_ascii_lowercase()));
    if flag {
        return Some("a flag (\"--…\") in a string literal: name the parameter (guard::Parameter)");
    }
    let clap = line.match_indices("clap").any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = &line[i + 4..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && (after.starts_with("::") || after.starts_with(';') || after.starts_with(" as "))
    }) || line.contains("ValueEnum");
    clap.then_some("clap (the command line's parser)")
}

/// The files of the library proper: everything under src/ but the binary (main.rs, cli/).
fn library_files() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| {
        let rel = f.strip_prefix(&src).unwrap();
        !(rel == Path::new("main.rs") || rel.starts_with("cli"))
    });
    files
}

#[test]
fn the_library_names_parameters_not_flags() {
    let mut offenders = Vec::new();
    for file in library_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        // The bindings' one mapping from the flags a message quotes to keyword arguments, and its test.
        let exempt = if file.ends_with("src/bindings.rs") {
            function_lines(&text, &["keyword_words", "flags_become_keywords_outside_quoted_commands"])
        } else {
            Vec::new()
        };
        for (n, line) in code_lines(&text) {
            if exempt.iter().any(|r| r.contains(&n)) {
                continue;
            }
            if let Some(what) = cli_words(line) {
                offenders.push(format!("{}:{n}: {what}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(offenders.is_empty(), "the command line's words below src/cli/:\n{}", offenders.join("\n"));
}

#[test]
fn the_flag_checker_sees_flags_and_clap() {
    assert!(cli_words(r#"return Err(ArgumentError::new("--eps", "must be > 0"));"#).is_some());
    assert!(cli_words(r#"#[error("--shard needs an output")]"#).is_some());
    assert!(cli_words("use clap::ValueEnum;").is_some());
    assert!(cli_words("#[derive(Debug, clap::ValueEnum)]").is_some());
    assert!(cli_words(r#"ArgumentError::new(Parameter::Eps, "must be > 0")"#).is_none());
    assert!(cli_words(r#"let rule = if i == 0 { ":---|" } else { "---:|" };"#).is_none(), "a table rule is no flag");
    assert!(cli_words("let clapped = 1;").is_none());
    let bindings =
        "pub fn keyword_words(text: &str) -> String {\n    (\"--eps\", \"eps\")\n}\nfn other() {\n    \"--eps\"\n}\n";
    assert_eq!(function_lines(bindings, &["keyword_words"]), [1..=3]);
}

/// Every `Result<T, String>` (a `Result` whose error is a bare `String`) in `text`'s code.
fn stringly_results(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    for (n, line) in code_lines(text) {
        for (i, _) in line.match_indices("Result<") {
            if line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            // The generic arguments up to the matching `>`; the error is the last top-level one.
            let (mut depth, mut last_comma, mut end) = (0i32, None, None);
            for (j, c) in line[i + "Result<".len()..].char_indices() {
                match c {
                    '<' | '(' | '[' => depth += 1,
                    '>' | ')' | ']' if depth > 0 => depth -= 1,
                    '>' => {
                        end = Some(j);
                        break;
                    }
                    ',' if depth == 0 => last_comma = Some(j),
                    _ => {}
                }
            }
            let args = &line[i + "Result<".len()..];
            if let (Some(c), Some(e)) = (last_comma, end) {
                if args[c + 1..e].trim() == "String" {
                    found.push(n);
                }
            }
        }
    }
    found
}

/// `file:line` of every line of the crate's source files that `check` finds in the file's text.
fn lines_in_src(check: fn(&str) -> Vec<usize>) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .flat_map(|f| {
            check(&std::fs::read_to_string(f).unwrap()).into_iter().map(move |n| format!("{}:{n}", f.display()))
        })
        .collect()
}

#[test]
fn errors_are_typed() {
    let offenders = lines_in_src(stringly_results);
    assert!(offenders.is_empty(), "Result<_, String> (use a typed error naming the field):\n{}", offenders.join("\n"));
}

#[test]
fn the_string_error_checker_sees_them() {
    assert_eq!(stringly_results("fn f() -> Result<Vec<Vec<u64>>, String> {"), [1]);
    assert_eq!(stringly_results("fn f() -> std::result::Result<(), String>;"), [1]);
    assert!(stringly_results("fn f() -> Result<String> {").is_empty());
    assert!(stringly_results("fn f() -> Result<(String, u8), ReadError> {").is_empty());
    assert!(stringly_results("fn f() -> io::Result<Option<Vec<String>>> {").is_empty());
    assert!(stringly_results("// fn f() -> Result<(), String>").is_empty());
}

/// The lines of `text` declaring an `unsafe fn` whose doc comment has no `# Safety` section.
fn unsafe_fns_without_safety(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if !code.contains("unsafe fn ") {
            continue;
        }
        // Its doc comment and attributes, directly above it.
        let above =
            lines[..i].iter().rev().map(|l| l.trim()).take_while(|l| l.starts_with("///") || l.starts_with("#["));
        if !above.clone().any(|l| l == "/// # Safety") {
            found.push(i + 1);
        }
    }
    found
}

#[test]
fn every_unsafe_fn_states_its_contract() {
    let offenders = lines_in_src(unsafe_fns_without_safety);
    assert!(offenders.is_empty(), "unsafe fn without a `# Safety` doc section:\n{}", offenders.join("\n"));
    for root in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(root)).unwrap();
        assert!(text.contains("#![deny(unsafe_op_in_unsafe_fn)]"), "{root} must deny unsafe_op_in_unsafe_fn");
    }
}

#[test]
fn the_safety_checker_sees_a_missing_section() {
    let good = "/// The kernel.\n///\n/// # Safety\n///\n/// AVX2 present.\n#[target_feature(enable = \"avx2\")]\nunsafe fn k() {}";
    assert!(unsafe_fns_without_safety(good).is_empty());
    let bad = "/// The kernel.\n#[target_feature(enable = \"avx2\")]\nunsafe fn k() {}";
    assert_eq!(unsafe_fns_without_safety(bad), [3]);
    assert!(unsafe_fns_without_safety("// SAFETY: checked\nunsafe { k() };").is_empty());
}

/// The CLI's modules a file in src/cli/ refers to (`super::NAME`, `crate::cli::NAME`), comments
/// excluded: only names in `modules` count.
fn cli_refs(text: &str, modules: &[String]) -> Vec<String> {
    let mut refs = Vec::new();
    for (_, line) in code_lines(text) {
        for prefix in ["super::", "crate::cli::"] {
            for (i, _) in line.match_indices(prefix) {
                let rest = &line[i + prefix.len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(list) => list.split('}').next().unwrap_or("").split(',').collect(),
                    None => vec![rest],
                };
                for item in names {
                    let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if modules.contains(&name) && !refs.contains(&name) {
                        refs.push(name);
                    }
                }
            }
        }
    }
    refs
}

/// A circle in `edges` (module → the modules it uses), as the path around it.
fn find_circle(edges: &std::collections::BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(p) = path.iter().position(|x| x == m) {
            let mut circle = path[p..].to_vec();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    edges.keys().find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_cli_modules_import_one_way() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files.retain(|f| !f.ends_with("mod.rs"));
    let name = |f: &Path| f.file_stem().unwrap().to_string_lossy().into_owned();
    let modules: Vec<String> = files.iter().map(|f| name(f)).collect();
    let edges: std::collections::BTreeMap<String, Vec<String>> = files
        .iter()
        .map(|f| {
            let mut refs = cli_refs(&std::fs::read_to_string(f).unwrap(), &modules);
            refs.retain(|r| *r != name(f));
            (name(f), refs)
        })
        .collect();
    assert!(
        find_circle(&edges).is_none(),
        "an import circle in src/cli/: {}",
        find_circle(&edges).unwrap().join(" → ")
    );
}

#[test]
fn the_circle_checker_sees_a_circle() {
    let modules: Vec<String> = ["solve", "compare", "common"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        cli_refs("use super::{common, solve::Args};\nlet x = super::compare::run; // super::nope", &modules),
        ["common", "solve", "compare"]
    );
    let edges = |pairs: &[(&str, &[&str])]| -> std::collections::BTreeMap<String, Vec<String>> {
        pairs.iter().map(|(m, to)| (m.to_string(), to.iter().map(|s| s.to_string()).collect())).collect()
    };
    let circle = find_circle(&edges(&[("compare", &["solve"]), ("solve", &["common", "compare"]), ("common", &[])]));
    assert_eq!(circle.unwrap(), ["compare", "solve", "compare"]);
    assert!(find_circle(&edges(&[("compare", &["common"]), ("solve", &["common"]), ("common", &[])])).is_none());
}

// ---------------------------------------------------------------------------------------------
// The modules within src/solve/ import one way too. Each file or directory directly under
// src/solve/ is one module (src/solve/anytime/ and its files are `anytime`); src/solve/mod.rs is
// their parent: a name it re-exports (or imports) from a module counts as that module, and a name
// it defines itself counts as `mod.rs`, a node that uses every module it names, so a module that
// reaches up into its parent's own items closes a circle.

/// The node of `src/solve/mod.rs`'s own items.
const SOLVE_PARENT: &str = "mod.rs";

/// The identifier at the start of `text` (empty where there is none).
fn ident(text: &str) -> String {
    text.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// The top-level items of a `use` tree's brace group (`{a, b::{c, d}, e}` → `a`, `b::{c, d}`,
/// `e`), `text` starting just after the `{`.
fn brace_items(text: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&text[start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The names a `use` tree brings into scope (`a::{b, c::d as e}` → `b`, `e`): the last segment of
/// each leaf, or its alias.
fn use_leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let leaf = tree.rsplit(" as ").next().unwrap_or(tree);
        return vec![leaf.rsplit("::").next().unwrap_or(leaf).trim().to_string()];
    };
    brace_items(&tree[open + 1..]).into_iter().filter(|i| !i.trim().is_empty()).flat_map(use_leaves).collect()
}

/// A file's code as one string (comments dropped), with the depth of inline modules (`mod tests {`)
/// at each line's start offset.
fn code_with_depths(text: &str) -> (String, Vec<(usize, usize)>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut depth_of = vec![0usize; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim_end();
        let decl = code.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        if !(decl.starts_with("mod ") && code.ends_with('{')) {
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let close = format!("{indent}}}");
        let end = lines[i + 1..].iter().position(|l| *l == close).map_or(lines.len(), |p| i + 1 + p);
        for d in &mut depth_of[i + 1..end] {
            *d += 1;
        }
    }
    let (mut code, mut starts) = (String::new(), Vec::new());
    for (line, depth) in lines.iter().zip(depth_of) {
        starts.push((code.len(), depth));
        if !line.trim_start().starts_with("//") {
            code.push_str(line.split("//").next().unwrap_or(""));
        }
        code.push('\n');
    }
    (code, starts)
}

/// Where each name at src/solve/'s root lands: a module (a file or directory under src/solve/)
/// by its own name; a name `mod.rs` takes from a module by `use` (re-exported or not) in that
/// module; a name `mod.rs` defines itself in [`SOLVE_PARENT`]. A name can land in two places (a
/// module `estimate` and a function `estimate` re-exported from another): the module first.
fn solve_root_names(mod_rs: &str, modules: &[String]) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut names: std::collections::BTreeMap<String, Vec<String>> =
        modules.iter().map(|m| (m.clone(), vec![m.clone()])).collect();
    fn land(names: &mut std::collections::BTreeMap<String, Vec<String>>, name: String, module: &str) {
        let at = names.entry(name).or_default();
        if !at.iter().any(|m| m == module) {
            at.push(module.to_string());
        }
    }
    let (code, _) = code_with_depths(mod_rs);
    for statement in code.split(';') {
        let statement = statement.trim();
        // Top-level items only: a `use` or a definition at the start of a line.
        let decl = statement.lines().filter(|l| !l.trim_start().starts_with("#[")).collect::<Vec<_>>().join(" ");
        let decl = decl.trim_start();
        let decl = ["pub(crate) ", "pub(super) ", "pub "].iter().fold(decl, |d, v| d.strip_prefix(v).unwrap_or(d));
        if let Some(tree) = decl.strip_prefix("use ") {
            let from = ident(tree);
            if modules.contains(&from) {
                for leaf in use_leaves(tree) {
                    land(&mut names, leaf, &from);
                }
            }
        }
    }
    for line in mod_rs.lines() {
        let code = line.split("//").next().unwrap_or("");
        let top = !code.starts_with(char::is_whitespace) || code.trim_start().starts_with("static ");
        let decl = code.trim_start();
        let decl = ["pub(crate) ", "pub(super) ", "pub "].iter().fold(decl, |d, v| d.strip_prefix(v).unwrap_or(d));
        let decl = decl.strip_prefix("const fn ").map_or(decl, |d| d);
        for kind in ["fn ", "struct ", "enum ", "const ", "static ", "type ", "trait "] {
            if let Some(rest) = decl.strip_prefix(kind).filter(|_| top) {
                let name = ident(rest);
                if !name.is_empty() {
                    land(&mut names, name, SOLVE_PARENT);
                }
            }
        }
    }
    names
}

/// The modules of src/solve/ that a file refers to, `at` being the file's path of modules below
/// src/solve/ (`["estimate"]`, `["anytime", "pieces"]`; empty for mod.rs): every `super::…` that
/// climbs to src/solve/'s root and every `crate::solve::…`, resolved by `names`; in `mod.rs`, also
/// every path that starts with a module's name. Its own module is left out. A name that lands in
/// two places counts as both, unless a path goes on through it (`estimate::LpShape`: the module).
fn solve_refs(text: &str, at: &[&str], names: &std::collections::BTreeMap<String, Vec<String>>) -> Vec<String> {
    let (code, starts) = code_with_depths(text);
    let depth_at = |offset: usize| starts.iter().take_while(|(s, _)| *s <= offset).last().map_or(0, |(_, d)| *d);
    let own = at.first().copied().unwrap_or(SOLVE_PARENT);
    let mut refs: Vec<String> = Vec::new();
    let add = |tree: &str, refs: &mut Vec<String>| {
        let items: Vec<&str> = match tree.trim_start().strip_prefix('{') {
            Some(list) => brace_items(list),
            None => vec![tree],
        };
        for item in items {
            let first = ident(item);
            let Some(lands) = names.get(&first) else { continue };
            let through = item.trim_start()[first.len()..].trim_start().starts_with("::");
            let lands = if through && lands[0] == first { &lands[..1] } else { &lands[..] };
            for module in lands.iter().filter(|m| m.as_str() != own) {
                if !refs.contains(module) {
                    refs.push(module.clone());
                }
            }
        }
    };
    let is_path_start = |i: usize| !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
    for (i, _) in code.match_indices("crate::solve::") {
        add(&code[i + "crate::solve::".len()..], &mut refs);
    }
    let mut i = 0;
    while let Some(found) = code[i..].find("super::") {
        let start = i + found;
        let mut end = start;
        let mut ups = 0;
        while code[end..].starts_with("super::") {
            end += "super::".len();
            ups += 1;
        }
        i = end;
        if !is_path_start(start) {
            continue;
        }
        // Where the path lands: at src/solve/'s root when it climbs exactly the file's modules and
        // the inline modules around it.
        if ups == at.len() + depth_at(start) && !at.is_empty() {
            add(&code[end..], &mut refs);
        }
    }
    if at.is_empty() {
        // The parent names its modules directly (`pub use plan::SolvePlan`, `chain::squared_moments`).
        let modules: Vec<&String> = names.iter().filter(|(n, m)| m[0] == **n).map(|(n, _)| n).collect();
        for module in modules {
            let path = format!("{module}::");
            if code.match_indices(&path).any(|(i, _)| is_path_start(i)) && !refs.contains(module) {
                refs.push(module.clone());
            }
        }
    }
    refs
}

/// Every module of src/solve/ with the modules it uses.
fn solve_edges() -> std::collections::BTreeMap<String, Vec<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/solve");
    let mut modules: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || (p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs")))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    modules.sort();
    let names = solve_root_names(&std::fs::read_to_string(dir.join("mod.rs")).unwrap(), &modules);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&dir).unwrap().with_extension("");
        let mut at: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if at.last().is_some_and(|l| l == "mod") {
            at.pop();
        }
        let at: Vec<&str> = at.iter().map(String::as_str).collect();
        let node = at.first().copied().unwrap_or(SOLVE_PARENT).to_string();
        let refs = solve_refs(&std::fs::read_to_string(&file).unwrap(), &at, &names);
        let entry = edges.entry(node).or_default();
        for r in refs {
            if !entry.contains(&r) {
                entry.push(r);
            }
        }
    }
    edges
}

/// A circle through each module that lies on one (the first found from it), for the failure
/// message.
fn all_circles(edges: &std::collections::BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut circles: Vec<String> = Vec::new();
    for start in edges.keys() {
        let mut path = vec![start.clone()];
        if let Some(c) = circle_through(start, edges, &mut path) {
            if !circles.contains(&c) {
                circles.push(c);
            }
        }
    }
    circles
}

/// The first circle (depth first) from `start` back to it, as `a → b → a`.
fn circle_through(
    start: &str,
    edges: &std::collections::BTreeMap<String, Vec<String>>,
    path: &mut Vec<String>,
) -> Option<String> {
    let last = path.last().unwrap().clone();
    for next in edges.get(&last).into_iter().flatten() {
        if next == start {
            return Some(format!("{} → {start}", path.join(" → ")));
        }
        if path.contains(next) {
            continue;
        }
        path.push(next.clone());
        if let Some(c) = circle_through(start, edges, path) {
            return Some(c);
        }
        path.pop();
    }
    None
}

#[test]
fn the_solve_modules_import_one_way() {
    let edges = solve_edges();
    let circles = all_circles(&edges);
    assert!(
        find_circle(&edges).is_none(),
        "import circles in src/solve/ (each module's first):\n{}\n\nedges:\n{}",
        circles.join("\n"),
        edges.iter().map(|(m, to)| format!("{m} → {}", to.join(", "))).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_solve_circle_checker_sees_a_circle() {
    let modules: Vec<String> =
        ["assess", "backend", "chain", "plan", "anytime"].iter().map(|s| s.to_string()).collect();
    let parent = "mod assess;\npub(crate) mod chain;\npub use assess::{Checks, CHECK_TOLERANCE};\n\
        pub(crate) use backend::{LpSolver, Producer as Made};\nuse error::Result;\n\
        pub use plan::{assess, SolvePlan};\n#[cfg(test)]\nthread_local! {\n    static SOLVES: u8 = 0;\n}\n\
        pub struct SolveOptions {}\npub(crate) fn solve_lp() {\n    chain::squared_moments();\n}\n";
    let names = solve_root_names(parent, &modules);
    assert_eq!(names["Checks"], ["assess"]);
    assert_eq!(names["Made"], ["backend"], "an alias lands where its item is defined");
    assert_eq!(names["SolvePlan"], ["plan"]);
    assert_eq!(names["SolveOptions"], [SOLVE_PARENT]);
    assert_eq!(names["SOLVES"], [SOLVE_PARENT]);
    // A module's name re-exported as another module's function lands in both; a path through it
    // is the module's.
    assert_eq!(names["assess"], ["assess", "plan"]);
    assert_eq!(solve_refs("use super::assess;", &["chain"], &names), ["assess", "plan"]);
    assert_eq!(solve_refs("use super::{assess::Checks, chain};", &["chain"], &names), ["assess"]);
    assert!(!names.contains_key("Result"), "a name from outside src/solve/'s modules is no module");
    // Re-exported names, multi-line lists, `super::super::` from a nested file and
    // `crate::solve::`, each resolved; a test module's `super::` is the file's own module.
    let file = "use super::{\n    Checks,\n    LpSolver,\n};\nuse crate::solve::{plan::Shared, Result};\n\
        fn f() { super::SOLVES.with(|_| ()); } // super::chain\n\
        #[cfg(test)]\nmod tests {\n    use super::{anytime, helper};\n}\n";
    assert_eq!(solve_refs(file, &["estimate"], &names), ["plan", "assess", "backend", SOLVE_PARENT]);
    assert_eq!(
        solve_refs("use super::super::{chain, Checks};\nuse super::kernel;", &["anytime", "pieces"], &names),
        ["chain", "assess"]
    );
    assert_eq!(
        solve_refs("use super::{assess::Checks, chain};", &["chain"], &names),
        ["assess"],
        "its own module is no edge"
    );
    // The parent uses what it names; reaching into its own items closes a circle.
    let parent_refs = solve_refs(parent, &[], &names);
    assert_eq!(parent_refs, ["assess", "backend", "chain", "plan"]);
    let edges: std::collections::BTreeMap<String, Vec<String>> = [
        (SOLVE_PARENT.to_string(), parent_refs),
        ("plan".to_string(), solve_refs("use super::SolveOptions;", &["plan"], &names)),
    ]
    .into_iter()
    .collect();
    assert_eq!(find_circle(&edges).unwrap(), [SOLVE_PARENT, "plan", SOLVE_PARENT]);
    assert_eq!(all_circles(&edges), ["mod.rs → plan → mod.rs", "plan → mod.rs → plan"]);
}
