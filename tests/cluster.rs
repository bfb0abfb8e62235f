//! Sweeps on real schedulers (opt-in: they need tools outside the Rust toolchain).
//!
//! - GNU parallel on one machine: `apt-get install parallel`, then
//!   `cargo test --release --test cluster -- --ignored gnu_parallel`
//! - A single-node Slurm running 4-task job arrays (a binomial comparison, a Poisson party
//!   comparison and a solve sweep) and their dependent merge jobs
//!   (examples/slurm/sweep.sbatch, daemons started by examples/slurm/local-cluster.sh as root,
//!   bounded to two minutes): `apt-get install slurm-wlm`, then
//!   `cargo test --release --test cluster -- --ignored slurm`
//!
//! - The Kubernetes example (examples/kubernetes): its pods' and its merge's commands run on this
//!   machine with each JOB_COMPLETION_INDEX (no cluster needed; runs by default).
//!
//! Each checks that the merged sweep equals the unsharded run file for file (a solve sweep: its
//! `--json` but for the wall-clock fields).

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

/// A small Poisson model for the party-comparison sweeps on the schedulers.
const POISSON: &str = "name = \"counts\"\nepsilon = [0.5, 2.0]\n[parameter]\nlower = 0.0\nupper = 3.0\n\
    grid = { kind = \"midpoint\", points = 10 }\nprior = { kind = \"uniform\" }\n[observation]\n\
    family = \"poisson\"\nrecords = 6\ncap = 2\n[loss]\nkind = \"absolute\"\n";
const PARTY_GRID: [&str; 4] = ["--parties", "1,2,3", "--eps", "0.5,1,2"];
const SOLVE_EPS: [&str; 2] = ["--eps", "0.1,0.25,0.5,1,1.5,2,3"];

#[test]
#[ignore = "needs slurm-wlm and root (starts munged, slurmctld and slurmd for about a minute)"]
fn slurm_job_array_sweeps_equal_the_unsharded_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let m = common::small_binomial_file(tmp.path());
    let poisson = common::write_file(tmp.path(), "counts.toml", POISSON);
    unsharded(&m, &tmp.path().join("whole"));
    let mut party = Command::new(BIN);
    party.arg("compare").arg(&poisson).arg("--out").arg(tmp.path().join("whole-parties")).args(PARTY_GRID);
    let o = party.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let solved = Command::new(BIN).arg("solve").arg(&poisson).arg("--json").args(SOLVE_EPS).output().unwrap();
    assert!(solved.status.success(), "{}", String::from_utf8_lossy(&solved.stderr));
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
    // Three sweeps of 4 tasks each: the binomial grid, a Poisson party comparison and a solve
    // sweep of the Poisson model's ε list.
    let sweeps: [(&str, &str, &Path, &[&str]); 3] = [
        ("sweep", "compare", &m, &GRID),
        ("parties", "compare", &poisson, &PARTY_GRID),
        ("eps", "solve", &poisson, &SOLVE_EPS),
    ];
    for (out, command, model, args) in sweeps {
        let o = Command::new(root.join("examples/slurm/sweep.sbatch"))
            .current_dir(tmp.path())
            .env("SLURM_CONF", &conf)
            .env("SHARDS", "4")
            .env("UBAPP", BIN)
            .env("UBAPP_SWEEP", command)
            .arg(model)
            .arg(out)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let queue_empty = || {
        let q = Command::new("squeue").arg("-h").env("SLURM_CONF", &conf).output().unwrap();
        q.status.success() && q.stdout.is_empty()
    };
    let merged = |out: &str| tmp.path().join(format!("{out}/merged-table.txt"));
    while !(sweeps.iter().all(|(out, ..)| merged(out).exists()) && queue_empty()) {
        assert!(Instant::now() < deadline, "the sweeps did not finish within 2 minutes");
        std::thread::sleep(Duration::from_millis(500));
    }
    for (out, ..) in sweeps {
        for i in 0..4 {
            assert!(tmp.path().join(format!("{out}/shard-{i}/shard.json")).exists(), "{out}: task {i} wrote its shard");
        }
    }
    assert_eq!(common::files_under(&tmp.path().join("sweep/merged")), common::files_under(&tmp.path().join("whole")));
    assert_eq!(
        common::files_under(&tmp.path().join("parties/merged")),
        common::files_under(&tmp.path().join("whole-parties"))
    );
    let merged_json = std::fs::read(tmp.path().join("eps/merged/solve.json")).unwrap();
    assert_eq!(common::without_timings(&merged_json), common::without_timings(&solved.stdout));
}

/// The shell command of a Kubernetes Job's container in `yaml` (its folded `args: - >-` block).
fn job_command(yaml: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let at = lines.iter().position(|l| l.trim() == "- >-").expect("a folded args block");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = indent(lines[at]);
    lines[at + 1..].iter().take_while(|l| indent(l) > base).map(|l| l.trim()).collect::<Vec<_>>().join(" ")
}

#[test]
fn kubernetes_example_sweep_equals_the_unsharded_run() {
    // The example's own commands, run here: each pod's with its JOB_COMPLETION_INDEX, then the
    // merge's; /models and /shared mapped to the repository's models and a temporary directory.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(root.join("examples/kubernetes").join(name)).unwrap();
    let (sweep, merge) = (read("sweep.yaml"), read("merge.yaml"));
    let tmp = tempfile::tempdir().unwrap();
    let local = |cmd: String| {
        assert!(cmd.starts_with("ubapp "), "{cmd}");
        cmd.replacen("ubapp", BIN, 1)
            .replace("/models/", &format!("{}/models/", root.display()))
            .replace("/shared/", &format!("{}/", tmp.path().display()))
    };
    let completions: u32 =
        sweep.lines().find_map(|l| l.trim().strip_prefix("completions:")).expect("completions").trim().parse().unwrap();
    let shard = job_command(&sweep);
    assert!(shard.contains(&format!("--shard env/{completions}")), "{shard}");
    assert!(!shard.contains("binomial") && shard.contains("--parties"), "a party sweep of a non-binomial model");
    let whole = shard
        .replace(&format!(" --shard env/{completions}"), "")
        .replace("/shared/sweep/shard-$JOB_COMPLETION_INDEX", "/shared/whole");
    let o = sh(&format!("{} > /dev/null", local(whole)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::create_dir_all(tmp.path().join("sweep")).unwrap();
    for i in 0..completions {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("{} > /dev/null", local(shard.clone())))
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "pod {i}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let o = sh(&local(job_command(&merge)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(tmp.path().join("sweep/merged-table.txt").is_file());
    assert_eq!(common::files_under(&tmp.path().join("sweep/merged")), common::files_under(&tmp.path().join("whole")));
}
