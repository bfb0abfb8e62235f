//! Reading a file named by a user or by a model file: regular files only (a FIFO would block
//! forever, a device such as `/dev/zero` never ends), its size checked before reading, and the
//! read itself capped (a file that grows, or a `/proc` file that reports size 0, stops at the cap).

use std::io::Read;
use std::path::Path;

/// The most bytes a model file (TOML) may have.
pub(crate) const MODEL_FILE_BYTES: u64 = 256 << 20;
/// The most bytes a CSV file a model names may have.
pub(crate) const CSV_FILE_BYTES: u64 = 1 << 30;
/// The most bytes a mechanism file may have.
pub(crate) const ARTIFACT_FILE_BYTES: u64 = 2 << 30;

/// Why a file was not read: its [`Display`](std::fmt::Display) is one phrase (never the file's
/// content), which the caller places after the file's name.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Opening, inspecting or reading it failed.
    Io(std::io::Error),
    /// It is a directory.
    Directory,
    /// It is a pipe, a device or a socket.
    NotRegular,
    /// It is larger than `cap` bytes.
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The most this kind of file may have.
        cap: u64,
    },
    /// Its `bytes` cannot be held in memory.
    NoMemory {
        /// Its size.
        bytes: u64,
    },
    /// It grew past `cap` bytes while it was read.
    GrewPast {
        /// The most this kind of file may have.
        cap: u64,
    },
    /// It is not UTF-8 text (where text was asked for).
    NotUtf8,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Directory => write!(f, "it is a directory; only regular files are read"),
            ReadError::NotRegular => {
                write!(f, "it is not a regular file (a pipe, device or socket); only regular files are read")
            }
            ReadError::TooLarge { bytes, cap } => {
                write!(f, "it has {bytes} bytes, more than the {cap} this kind of file may have")
            }
            ReadError::NoMemory { bytes } => write!(f, "it has {bytes} bytes, more than memory allows"),
            ReadError::GrewPast { cap } => {
                write!(f, "it grew past the {cap} bytes this kind of file may have while it was read")
            }
            ReadError::NotUtf8 => write!(f, "it is not UTF-8 text"),
        }
    }
}

impl std::error::Error for ReadError {}

/// The file's bytes, or why it was not read.
pub(crate) fn read_bounded(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    use std::fs::OpenOptions;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Opening a FIFO for reading waits for a writer; non-blocking, it returns at once and
        // the type check below refuses it. Regular files ignore the flag.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Directory);
    }
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge { bytes: meta.len(), cap });
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| ReadError::NoMemory { bytes: meta.len() })?;
    file.take(cap + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::GrewPast { cap });
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub(crate) fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    String::from_utf8(read_bounded(path, cap)?).map_err(|_| ReadError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_devices_and_large_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_bounded(dir.path(), 10).unwrap_err().to_string().contains("a directory"));
        assert!(read_bounded(Path::new("/dev/zero"), 10).unwrap_err().to_string().contains("not a regular file"));
        let p = dir.path().join("f");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_bounded(&p, 10).unwrap().len(), 10);
        assert!(read_bounded(&p, 9).unwrap_err().to_string().contains("more than the 9"));
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert!(read_bounded(&fifo, 10).unwrap_err().to_string().contains("not a regular file"));
        }
    }
}
