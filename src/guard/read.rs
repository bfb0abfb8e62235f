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

/// The file's bytes, or why it was not read: one phrase (never the file's content).
pub(crate) fn read_bounded(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
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
    let file = options.open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a directory" } else { "not a regular file (a pipe, device or socket)" };
        return Err(format!("it is {what}; only regular files are read"));
    }
    if meta.len() > cap {
        return Err(format!("it has {} bytes, more than the {} this kind of file may have", meta.len(), cap));
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize)
        .map_err(|_| format!("it has {} bytes, more than memory allows", meta.len()))?;
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(format!("it grew past the {cap} bytes this kind of file may have while it was read"));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub(crate) fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    String::from_utf8(read_bounded(path, cap)?).map_err(|_| "it is not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_devices_and_large_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_bounded(dir.path(), 10).unwrap_err().contains("a directory"));
        assert!(read_bounded(Path::new("/dev/zero"), 10).unwrap_err().contains("not a regular file"));
        let p = dir.path().join("f");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_bounded(&p, 10).unwrap().len(), 10);
        assert!(read_bounded(&p, 9).unwrap_err().contains("more than the 9"));
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert!(read_bounded(&fifo, 10).unwrap_err().contains("not a regular file"));
        }
    }
}
