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
    let io = |source| OutputError::Io { path: path.to_path_buf(), source };
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

/// Grid points as JSON: plain numbers for a one-dimensional grid, arrays otherwise.
pub(crate) fn grid_json(grid: &Grid) -> Value {
    if grid.dim() == 1 {
        json!(grid.values())
    } else {
        Value::Array(grid.points().rows().into_iter().map(|r| json!(r.to_vec())).collect())
    }
}

/// The file that marks a directory as written whole by [`write_dir_atomic`] (and so replaceable by
/// the next run).
pub(crate) const DIR_MARKER: &str = ".ubapp-output";

/// Whether `dir` may be (re)written by [`write_dir_atomic`]: it does not exist, is an empty
/// directory, or holds [`DIR_MARKER`] (an earlier output of ours, replaced whole). Anything else
/// is refused, so a user's unrelated files are never clobbered. `flag` names the option in the error.
pub(crate) fn check_output_dir(dir: &Path, flag: &str) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let refuse = |why: &str| {
        Err(ArgumentError::new(flag, format!("{} {why}: give a new directory, or remove it first", dir.display()))
            .into())
    };
    if !dir.is_dir() {
        return refuse("exists and is not a directory");
    }
    if dir.join(DIR_MARKER).is_file() {
        return Ok(());
    }
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Ok(false) => refuse(&format!("exists, is not empty and was not written by ubapp (no {DIR_MARKER} file)")),
        Err(e) => refuse(&format!("cannot be read ({e})")),
    }
}

/// Write a whole directory atomically: `fill` writes into a fresh temporary directory next to
/// `dir`, which then replaces `dir` by rename (an earlier output is moved aside first and removed
/// after). On any failure the temporary directory is removed and `dir` is left as it was.
/// `dir` must pass [`check_output_dir`]. `fill`'s error is the caller's own (any layer's error
/// that an [`OutputError`] converts into).
pub(crate) fn write_dir_atomic<E: From<OutputError>>(
    dir: &Path,
    flag: &str,
    fill: &mut dyn FnMut(&Path) -> Result<(), E>,
) -> Result<(), E> {
    check_output_dir(dir, flag)?;
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
    let _ = std::fs::remove_dir_all(&tmp);
    // Registered before they exist: an interrupt removes the temporary directory and moves an
    // earlier output back if it was moved aside.
    let _tmp_registered = register(Leftover::Dir(tmp.clone()));
    let _old_registered = register(Leftover::MovedAside { aside: old.clone(), home: dir.to_path_buf() });
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let filled = fill(&tmp).and_then(|()| {
        std::fs::write(tmp.join(DIR_MARKER), b"written by ubapp; replaced whole by the next run\n").map_err(io(&tmp))
    });
    if let Err(e) = filled {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let had_old = dir.exists();
    if had_old {
        if let Err(e) = std::fs::rename(dir, &old) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(io(dir)(e));
        }
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        if had_old {
            let _ = std::fs::rename(&old, dir);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(io(dir)(e));
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
