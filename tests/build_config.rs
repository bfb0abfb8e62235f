//! What a new user meets before the first run: `make`'s install message and the build profiles.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `make deps` on a machine without cmake and libclang says which packages it installs, spaced
/// ("installing cmake libclang-dev"), with stand-ins for `id`, `dpkg` and `apt-get` on PATH.
#[cfg(unix)]
#[test]
fn make_deps_names_the_packages_it_installs() {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(make) = std::env::split_paths(&path).map(|d| d.join("make")).find(|p| p.is_file()) else {
        eprintln!("make is not installed: nothing to check");
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    for (name, script) in [("id", "echo 0"), ("dpkg", "exit 1"), ("apt-get", "exit 0")] {
        let path = bin.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = std::process::Command::new(make)
        .args(["-s", "deps"])
        .current_dir(root())
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("installing cmake libclang-dev (needed to build HiGHS)"), "{out}");
}

/// Release builds carry no debug info (a smaller binary, a faster cold build); the `profiling`
/// profile keeps it for profilers.
#[test]
fn release_has_no_debug_info_and_profiling_keeps_it() {
    let cargo: toml::Table = std::fs::read_to_string(root().join("Cargo.toml")).unwrap().parse().unwrap();
    let profiles = cargo["profile"].as_table().unwrap();
    let release = profiles.get("release").and_then(|r| r.as_table());
    assert!(release.is_none_or(|r| !r.contains_key("debug")), "the release profile sets debug: {release:?}");
    let profiling = profiles["profiling"].as_table().unwrap();
    assert_eq!(profiling["inherits"].as_str(), Some("release"));
    assert!(profiling["debug"].as_integer().is_some_and(|d| d > 0), "{profiling:?}");
}
