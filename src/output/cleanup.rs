//! Temporaries that do not outlive an interrupted process.
//!
//! Every file and directory the writers of [`super`] create before renaming it into place is
//! registered here for as long as it exists. [`remove_temporaries_on_signals`] (called once by
//! the binary) installs handlers for SIGINT, SIGTERM and SIGHUP: the handler only writes the
//! signal's number to a pipe (async-signal-safe); a dedicated thread reads it, removes every
//! registered temporary (and moves back a directory an interrupted replacement had moved aside),
//! then restores the default action and raises the signal again, so the process still ends by
//! that signal (exit status 128 + n in a shell). Without the handlers (a library user), the
//! writers still remove their temporaries on every error and on unwinding.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Something that must not be left behind.
#[derive(Debug, Clone)]
pub(crate) enum Leftover {
    /// A temporary file.
    File(PathBuf),
    /// A temporary directory (removed with its contents).
    Dir(PathBuf),
    /// An earlier output moved aside to `aside` while its replacement is renamed to `home`: put
    /// back if `home` is missing, else removed.
    MovedAside {
        /// Where it was moved.
        aside: PathBuf,
        /// Where it belongs.
        home: PathBuf,
    },
}

static REGISTRY: Mutex<Vec<(u64, Leftover)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A registration; dropping it forgets the leftover (call that once it is gone or renamed).
#[derive(Debug)]
pub(crate) struct Registered {
    id: u64,
}

/// Register `leftover` until the returned value is dropped.
pub(crate) fn register(leftover: Leftover) -> Registered {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).push((id, leftover));
    Registered { id }
}

impl Drop for Registered {
    fn drop(&mut self) {
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).retain(|(id, _)| *id != self.id);
    }
}

/// Remove every registered leftover (most recent first, so a temporary is gone before the
/// directory it replaced comes back).
fn remove_all(registry: &[(u64, Leftover)]) {
    for (_, leftover) in registry.iter().rev() {
        match leftover {
            Leftover::File(p) => {
                let _ = std::fs::remove_file(p);
            }
            Leftover::Dir(p) => {
                let _ = std::fs::remove_dir_all(p);
            }
            Leftover::MovedAside { aside, home } => {
                if std::fs::symlink_metadata(home).is_err() {
                    let _ = std::fs::rename(aside, home);
                } else {
                    let _ = std::fs::remove_dir_all(aside);
                }
            }
        }
    }
}

/// A fresh name `.ubapp-XXXXXXXXXXXXXXXX{suffix}` in `dir` (64 random bits: unpredictable).
pub(crate) fn fresh_name(dir: &Path, suffix: &str) -> PathBuf {
    dir.join(format!(".ubapp-{:016x}{suffix}", rand::random::<u64>()))
}

#[cfg(unix)]
mod signals {
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The pipe's write end, for the handler.
    static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

    extern "C" fn on_signal(sig: libc::c_int) {
        let fd = PIPE_WRITE.load(Ordering::Relaxed);
        if fd >= 0 {
            let byte = sig as u8;
            // SAFETY: write(2) is async-signal-safe; `byte` outlives the call.
            unsafe {
                libc::write(fd, (&byte as *const u8).cast(), 1);
            }
        }
    }

    pub(super) fn install() -> std::io::Result<()> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let (read_fd, write_fd) = (fds[0], fds[1]);
        for fd in fds {
            // SAFETY: `fd` was just opened; FD_CLOEXEC keeps it out of child processes.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // SAFETY: the write end was just opened; a full pipe (a flood of signals) must never
        // block the handler, and one byte in it is enough.
        unsafe {
            libc::fcntl(write_fd, libc::F_SETFL, libc::O_NONBLOCK);
        }
        PIPE_WRITE.store(write_fd, Ordering::Relaxed);
        std::thread::Builder::new().name("ubapp-signals".into()).spawn(move || loop {
            let mut byte = 0u8;
            // SAFETY: reads one byte into `byte`, which is valid for writes.
            let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
            if n == 1 {
                let sig = byte as libc::c_int;
                // Hold the registry while the process ends: no new temporary appears meanwhile.
                let registry = super::REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
                super::remove_all(&registry);
                // SAFETY: restoring the default action of a valid signal, then raising it in
                // this thread, which does not block it: the process ends by the signal.
                unsafe {
                    libc::signal(sig, libc::SIG_DFL);
                    libc::raise(sig);
                }
                std::process::exit(128 + sig);
            } else if n == 0 {
                return;
            }
        })?;
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction with a handler that only calls write(2); SA_RESTART keeps
            // interrupted system calls of the other threads going.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// Make SIGINT, SIGTERM and SIGHUP remove every temporary file and directory `ubapp` is writing
/// before the process ends by the signal (see the module docs). For the binary: call once, first
/// thing; a library embedding `ubapp` keeps its own signal handling. Does nothing off Unix.
pub fn remove_temporaries_on_signals() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        signals::install()
    }
    #[cfg(not(unix))]
    {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_leftovers_are_removed_and_moved_back() {
        let dir = tempfile::tempdir().unwrap();
        let (file, tmp, home, aside) =
            (dir.path().join("f"), dir.path().join("t"), dir.path().join("home"), dir.path().join("aside"));
        std::fs::write(&file, "x").unwrap();
        std::fs::create_dir_all(tmp.join("sub")).unwrap();
        std::fs::create_dir(&aside).unwrap();
        std::fs::write(aside.join("keep"), "earlier output").unwrap();
        let list = vec![
            (0, Leftover::MovedAside { aside: aside.clone(), home: home.clone() }),
            (1, Leftover::Dir(tmp.clone())),
            (2, Leftover::File(file.clone())),
        ];
        remove_all(&list);
        assert!(!file.exists() && !tmp.exists() && !aside.exists());
        assert_eq!(std::fs::read_to_string(home.join("keep")).unwrap(), "earlier output");
        // A registration is forgotten when dropped.
        let r = register(Leftover::File(dir.path().join("gone")));
        let id = r.id;
        drop(r);
        assert!(REGISTRY.lock().unwrap().iter().all(|(i, _)| *i != id));
    }
}
