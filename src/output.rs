//! Writing results: atomic file writes and the JSON form of grids. Every temporary a writer
//! creates is registered with [`cleanup`], so an interrupted process leaves none behind.

pub mod cleanup;

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use cleanup::{fresh_name, register, Leftover};

use crate::guard::ArgumentError;
use crate::model::Grid;

/// Why a file or directory could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// A target path or directory the caller named that cannot be written as asked.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file concerned.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

impl OutputError {
    /// True for a target the caller named that cannot be written as asked (not for the system's
    /// refusal to write).
    pub fn is_input(&self) -> bool {
        matches!(self, OutputError::Argument(_))
    }
}

type Result<T, E = OutputError> = std::result::Result<T, E>;

/// A temporary file of ours: created exclusively under a fresh unpredictable name, registered for
/// removal on a signal, removed on drop unless renamed into place.
struct TempFile {
    path: std::path::PathBuf,
    file: std::fs::File,
    _registered: cleanup::Registered,
    persisted: bool,
}

impl TempFile {
    /// A new empty file in `dir` named `.ubapp-XXXXXXXXXXXXXXXX{suffix}`.
    fn create_in(dir: &Path, suffix: &str) -> std::io::Result<TempFile> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            // Readable as a file written by `File::create` would be (the umask still applies).
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o644);
        }
        let mut tries = 0;
        loop {
            let path = fresh_name(dir, suffix);
            // Registered before it exists: a signal between creation and registration cannot
            // leave it behind.
            let registered = register(Leftover::File(path.clone()));
            match options.open(&path) {
                Ok(file) => return Ok(TempFile { path, file, _registered: registered, persisted: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Rename over `target`.
    fn persist(mut self, target: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Write `bytes` to `path` atomically: a temporary file created exclusively, with an
/// unpredictable name, in the same directory (so a planted file or symbolic link cannot be
/// followed), flushed to disk, then renamed over the target. On any failure, and on SIGINT,
/// SIGTERM or SIGHUP once [`cleanup::remove_temporaries_on_signals`] is installed, the temporary
/// file is removed and an existing `path` is left untouched.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.file_name().is_none() {
        return Err(ArgumentError::new(path.display().to_string(), "is not a file name").into());
    }
    check_target_file(path, "the output")?;
    let io = |source| OutputError::Io { path: path.to_path_buf(), source };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut tmp = TempFile::create_in(dir, ".tmp").map_err(io)?;
    tmp.file.write_all(bytes).map_err(io)?;
    tmp.file.sync_all().map_err(io)?;
    // Dropping `tmp` on an error above removes it.
    tmp.persist(path).map_err(io)?;
    Ok(())
}

/// Whether a file can be created in `dir` (an existing directory): creates and removes a
/// registered temporary file, so a read-only directory is refused before any work and an
/// interruption leaves nothing behind. The error is what the operating system said.
pub fn check_writable_dir(dir: &Path) -> std::io::Result<()> {
    TempFile::create_in(dir, ".probe").map(drop)
}

/// What may stand where a file is written: nothing, a regular file, or a symbolic link (the link
/// itself is replaced by the rename, never what it points to). A directory, a device, a FIFO or a
/// socket is refused (`flag` names the option in the error): `--out /dev/null` never replaces a
/// device.
pub fn check_target_file(path: &Path, flag: &str) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() || m.file_type().is_symlink() => Ok(()),
        Ok(m) => {
            let what = if m.is_dir() { "a directory" } else { "not a regular file (a device, FIFO or socket)" };
            Err(ArgumentError::new(
                flag,
                format!("{} is {what}: only a regular file is ever replaced; name a new file", path.display()),
            )
            .into())
        }
        Err(_) => Ok(()),
    }
}

/// The directory that will receive `path` (a file or directory to write) can be written, checked
/// before any work: `path`'s missing parent directories are created when the run writes (one
/// rule for every command), so the nearest existing one must be a directory in which a file can
/// be created. `flag` names the option in the error.
pub fn check_parent(path: &Path, flag: &str) -> Result<()> {
    let mut dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    while std::fs::symlink_metadata(dir).is_err() {
        match dir.parent() {
            Some(d) if !d.as_os_str().is_empty() => dir = d,
            _ => {
                dir = Path::new(".");
                break;
            }
        }
    }
    let refuse =
        |why: String| -> Result<()> { Err(ArgumentError::new(flag, format!("{}: {why}", path.display())).into()) };
    if !dir.is_dir() {
        return refuse(format!("{} is not a directory", dir.display()));
    }
    if let Err(e) = check_writable_dir(dir) {
        return refuse(format!("cannot create a file in {} ({e})", dir.display()));
    }
    Ok(())
}

/// Grid points as JSON: plain numbers for a one-dimensional grid, arrays otherwise.
pub(crate) fn grid_json(grid: &Grid) -> Value {
    if grid.dim() == 1 {
        json!(grid.values())
    } else {
        Value::Array(grid.points().rows().into_iter().map(|r| json!(r.to_vec())).collect())
    }
}

/// The file that marks a directory as written whole by [`write_dir_atomic`] (and so replaceable by
/// the next run). It lists, one a line after its first, every file and directory the run wrote.
pub(crate) const DIR_MARKER: &str = ".ubapp-output";

/// The first line of [`DIR_MARKER`].
const MARKER_HEAD: &str = "written by ubapp; replaced whole by the next run, which checks it holds only these:";

/// The most entries an output directory may hold for ubapp to check and replace it.
const MAX_ENTRIES: usize = 1 << 16;

/// Every file and directory under `dir` (not following links), as `/`-separated paths relative to
/// it, sorted; `None` beyond [`MAX_ENTRIES`].
fn entries_under(dir: &Path) -> std::io::Result<Option<Vec<String>>> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        for entry in std::fs::read_dir(&path)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() { name } else { format!("{rel}/{name}") };
            if entry.file_type()?.is_dir() {
                stack.push((entry.path(), rel.clone()));
            }
            out.push(rel);
            if out.len() > MAX_ENTRIES {
                return Ok(None);
            }
        }
    }
    out.sort();
    Ok(Some(out))
}

/// Whether `dir` may be (re)written by [`write_dir_atomic`], checked before any work: it does not
/// exist (its missing parents are created; the nearest existing one must be writable), is an empty
/// directory, or is an earlier output of ours holding only what that run wrote (its [`DIR_MARKER`]
/// lists it) and none of `inputs` (files or directories this run reads). Anything else is refused
/// — a file, a link, a directory of the user's, a file added to an earlier output (`notes.txt`),
/// an input of the run inside it — so nothing ubapp did not write, and no input, is ever deleted.
/// `flag` names the option in the error.
pub(crate) fn check_output_dir(dir: &Path, flag: &str, inputs: &[&Path]) -> Result<()> {
    let refuse = |why: String| -> Result<()> {
        Err(ArgumentError::new(flag, format!("{} {why}: give a new directory, or remove it first", dir.display()))
            .into())
    };
    let meta = match std::fs::symlink_metadata(dir) {
        Err(_) => return check_parent(dir, flag),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return refuse("is a symbolic link, not a directory ubapp wrote".into());
    }
    if !meta.is_dir() {
        return refuse("exists and is not a directory".into());
    }
    check_parent(dir, flag)?;
    if let Ok(dir_real) = dir.canonicalize() {
        for input in inputs {
            if input.canonicalize().is_ok_and(|i| i.starts_with(&dir_real)) {
                return refuse(format!(
                    "holds {}, an input of this run, which replacing the directory would delete",
                    input.display()
                ));
            }
        }
    }
    let entries = match entries_under(dir) {
        Ok(Some(e)) => e,
        Ok(None) => return refuse(format!("holds more than {MAX_ENTRIES} files")),
        Err(e) => return refuse(format!("cannot be read ({e})")),
    };
    if entries.is_empty() {
        return Ok(());
    }
    let marker = dir.join(DIR_MARKER);
    if !std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file()) {
        return refuse(format!("exists, is not empty and was not written by ubapp (no {DIR_MARKER} file)"));
    }
    let listed = crate::guard::read::read_text(&marker, 16 << 20).unwrap_or_default();
    let mut lines = listed.lines();
    if lines.next() != Some(MARKER_HEAD) {
        return refuse(format!("was written by an earlier ubapp whose {DIR_MARKER} does not list its files"));
    }
    let listed: std::collections::HashSet<&str> = lines.collect();
    if let Some(extra) = entries.iter().find(|e| e.as_str() != DIR_MARKER && !listed.contains(e.as_str())) {
        return refuse(format!(
            "holds {}, which ubapp did not write (replacing the directory would delete it)",
            crate::guard::text::quote(extra)
        ));
    }
    Ok(())
}

/// Write a whole directory atomically: `fill` writes into a fresh temporary directory next to
/// `dir`, which then replaces `dir` by rename (an earlier output is moved aside first and removed
/// after). On any failure the temporary directory is removed and `dir` is left as it was.
/// `dir` must pass [`check_output_dir`] (checked here again, and once more just before the
/// rename). `fill`'s error is the caller's own (any layer's error that an [`OutputError`]
/// converts into). Another process writing `dir` at the same moment is refused with a sentence,
/// never half-done.
pub(crate) fn write_dir_atomic<E: From<OutputError>>(
    dir: &Path,
    flag: &str,
    fill: &mut dyn FnMut(&Path) -> Result<(), E>,
) -> Result<(), E> {
    check_output_dir(dir, flag, &[])?;
    let parent = match dir.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = dir.file_name().ok_or_else(|| {
        OutputError::from(ArgumentError::new(flag, format!("{} is not a directory name", dir.display())))
    })?;
    let sibling = |what: &str| parent.join(format!(".{}.{}.{what}", name.to_string_lossy(), std::process::id()));
    let (tmp, old) = (sibling("tmp"), sibling("old"));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| E::from(OutputError::Io { path, source })
    };
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let _ = std::fs::remove_dir_all(&tmp);
    // Registered before they exist: an interrupt removes the temporary directory and moves an
    // earlier output back if it was moved aside.
    let _tmp_registered = register(Leftover::Dir(tmp.clone()));
    let _old_registered = register(Leftover::MovedAside { aside: old.clone(), home: dir.to_path_buf() });
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let filled = fill(&tmp).and_then(|()| {
        let listed = match entries_under(&tmp) {
            Ok(Some(e)) => e,
            Ok(None) => Vec::new(),
            Err(e) => return Err(io(&tmp)(e)),
        };
        let text = std::iter::once(MARKER_HEAD.to_string()).chain(listed).collect::<Vec<_>>().join("\n") + "\n";
        std::fs::write(tmp.join(DIR_MARKER), text).map_err(io(&tmp))
    });
    let filled = filled.and_then(|()| Ok(check_output_dir(dir, flag, &[])?));
    if let Err(e) = filled {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let raced = || {
        E::from(OutputError::from(ArgumentError::new(
            flag,
            format!(
                "{} was written by another process while this run wrote it; this run's output was not kept: \
                 give each run its own directory",
                dir.display()
            ),
        )))
    };
    let had_old = match std::fs::rename(dir, &old) {
        Ok(()) => true,
        // Gone (another process moved it aside) or never there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(io(dir)(e));
        }
    };
    if let Err(e) = std::fs::rename(&tmp, dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        let taken = dir.exists();
        if had_old && std::fs::rename(&old, dir).is_err() {
            // Another process's output took its place: the earlier one (ours) is not needed.
            let _ = std::fs::remove_dir_all(&old);
        }
        return Err(if taken { raced() } else { io(dir)(e) });
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

/// Write the directory `dir` holding the one file `name` with `bytes`, whole: built in a temporary
/// directory beside it, then renamed into place (`dir` must not exist, be empty or hold an earlier
/// output of ubapp; `flag` names the option in the error).
pub fn write_one_file_dir(dir: &Path, flag: &str, name: &str, bytes: &[u8]) -> Result<()> {
    write_dir_atomic(dir, flag, &mut |tmp| write_atomic(&tmp.join(name), bytes))
}
