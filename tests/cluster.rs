//! Sweeps on real schedulers (opt-in: they need tools outside the Rust toolchain).
//!
//! - GNU parallel on one machine: `apt-get install parallel`, then
//!   `cargo test --release --test cluster -- --ignored gnu_parallel`
//! - A single-node Slurm running a 4-task job array and its dependent merge job
//!   (examples/slurm/sweep.sbatch, daemons started by examples/slurm/local-cluster.sh as root,
//!   bounded to two minutes): `apt-get install slurm-wlm`, then
//!   `cargo test --release --test cluster -- --ignored slurm`
//!
//! Both check that the merged sweep equals the unsharded run file for file.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ubapp");
const GRID: [&str; 8] =
    ["--trials", "8,12", "--eps", "0.1,0.5,1,2", "--methods", "ubapp,lbapp,geometric,dsaa", "--seed", "3"];

fn unsharded(model: &Path, out: &Path) {
    let o = Command::new(BIN).arg("compare").arg(model).arg("--out").arg(out).args(GRID).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn sh(script: &str) -> std::process::Output {
    Command::new("bash").arg("-c").arg(script).output().unwrap()
}

#[test]
#[ignore = "needs GNU parallel (apt-get install parallel)"]
fn gnu_parallel_sweep_equals_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let m = common::small_binomial_file(tmp.path());
    unsharded(&m, &tmp.path().join("whole"));
    // The docs/cluster.md recipe: N shards over the machine's cores, then merge.
    let script = format!(
        "cd {dir} && seq 0 4 | parallel --halt now,fail=1 '{BIN} compare {m} --shard {{}}/5 --out sweep/shard-{{}} {grid} > /dev/null' \
         && {BIN} merge sweep/shard-* --out sweep/merged > /dev/null",
        dir = tmp.path().display(),
        m = m.display(),
        grid = GRID.join(" ")
    );
    let o = sh(&script);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(common::files_under(&tmp.path().join("sweep/merged")), common::files_under(&tmp.path().join("whole")));
}

#[test]
#[ignore = "needs slurm-wlm and root (starts munged, slurmctld and slurmd for about a minute)"]
fn slurm_job_array_sweep_equals_the_unsharded_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let m = common::small_binomial_file(tmp.path());
    unsharded(&m, &tmp.path().join("whole"));
    let cluster = tmp.path().join("slurm");
    let start = root.join("examples/slurm/local-cluster.sh");
    let o = Command::new(&start).arg("start").arg(&cluster).output().unwrap();
    assert!(
        o.status.success(),
        "slurm did not start: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Stop the daemons whatever happens below.
    struct Stop<'a>(&'a Path, &'a Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = Command::new(self.0).arg("stop").arg(self.1).output();
        }
    }
    let _stop = Stop(&start, &cluster);
    let conf = cluster.join("slurm.conf");
    let o = Command::new(root.join("examples/slurm/sweep.sbatch"))
        .current_dir(tmp.path())
        .env("SLURM_CONF", &conf)
        .env("SHARDS", "4")
        .env("UBAPP", BIN)
        .arg(&m)
        .arg("sweep")
        .args(GRID)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = tmp.path().join("sweep/merged-table.txt");
    let deadline = Instant::now() + Duration::from_secs(120);
    let queue_empty = || {
        let q = Command::new("squeue").arg("-h").env("SLURM_CONF", &conf).output().unwrap();
        q.status.success() && q.stdout.is_empty()
    };
    while !(merged.exists() && queue_empty()) {
        assert!(Instant::now() < deadline, "the sweep did not finish within 2 minutes");
        std::thread::sleep(Duration::from_millis(500));
    }
    for i in 0..4 {
        assert!(tmp.path().join(format!("sweep/shard-{i}/shard.json")).exists(), "task {i} wrote its shard");
    }
    assert_eq!(common::files_under(&tmp.path().join("sweep/merged")), common::files_under(&tmp.path().join("whole")));
}
