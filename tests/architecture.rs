//! The layering of `src/` (ARCHITECTURE.md): data flows one way, so a module may use only modules
//! of its own layer or below. A new upward import (or a new top-level module missing from the
//! table) fails here.

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
    "certify",
    "solve",
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
