//! Ctrl-C, SIGTERM and SIGHUP while servers run: each stdio server leads
//! a process group of its own (so that closing a session ends everything
//! it started), which also means the terminal's Ctrl-C never reaches it.
//! Without this module, git-kams would die and leave its servers running.
//!
//! Every group started is registered here until its session has killed
//! it. The signal handler only writes the signal's number to a pipe (about
//! the only thing a handler may safely do); a thread waiting on the pipe
//! ends every registered group (SIGTERM, a moment, SIGKILL) and then lets
//! the signal end git-kams as it would have. A group is registered under
//! the same lock that the ending takes, and nothing starts once the ending
//! began, so no server can start between the kill and the exit.
//!
//! Handlers are installed the first time a server starts, and only for
//! signals whose disposition is still the default: a signal the caller
//! ignores (`nohup`) stays ignored.

use std::io;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

/// The process groups of the servers running now.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Set once a signal arrived: nothing starts any more.
static ENDING: AtomicBool = AtomicBool::new(false);

/// The pipe's write end, for the handler.
static PIPE: AtomicI32 = AtomicI32::new(-1);

static INSTALL: Once = Once::new();

/// The signals that end git-kams, and so its servers.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How long the servers get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(100);

fn groups() -> MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts `cmd`, which must start a process group of its own, and
/// registers the group so that a signal to git-kams ends it.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    INSTALL.call_once(install);
    let mut groups = groups();
    if ENDING.load(Ordering::SeqCst) {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "git-kams is ending on a signal",
        ));
    }
    let child = cmd.spawn()?;
    groups.push(child.id() as i32);
    Ok(child)
}

/// Forgets the group `pgid`: call after its last signal and before its
/// leader is reaped (until then the id cannot name another group).
pub fn forget(pgid: i32) {
    groups().retain(|&g| g != pgid);
}

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the pipe is non-blocking, so a
    // burst of signals can never block the handler.
    unsafe {
        libc::write(PIPE.load(Ordering::Relaxed), (&byte as *const u8).cast(), 1);
    }
}

fn install() {
    let mut fds = [0 as libc::c_int; 2];
    // pipe, not pipe2, which macOS lacks. SAFETY: pipe fills the two
    // descriptors it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    let [read, write] = fds;
    // Neither end reaches a server; the watcher blocks on its end, the
    // handler's never blocks. SAFETY: fcntl on descriptors we own.
    unsafe {
        libc::fcntl(read, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(write, libc::F_SETFD, libc::FD_CLOEXEC);
        let flags = libc::fcntl(write, libc::F_GETFL);
        libc::fcntl(write, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    PIPE.store(write, Ordering::SeqCst);
    if std::thread::Builder::new()
        .name("kams-signals".into())
        .spawn(move || watch(read))
        .is_err()
    {
        // No watcher, no handlers: the signals keep their default action.
        return;
    }
    for signal in SIGNALS {
        // SAFETY: plain sigaction calls with zeroed, then filled, structs.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            new.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(signal, &new, std::ptr::null_mut());
        }
    }
}

/// The watcher: on the first signal, ends every server, then git-kams.
fn watch(read: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into a byte we own.
        let n = unsafe { libc::read(read, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return;
    }
    let signal = libc::c_int::from(byte);
    ENDING.store(true, Ordering::SeqCst);
    // Held to the end: no server starts, and none is forgotten, meanwhile.
    let groups = groups();
    // SAFETY: killpg only sends signals.
    unsafe {
        for &g in groups.iter() {
            libc::killpg(g, libc::SIGTERM);
        }
    }
    if !groups.is_empty() {
        std::thread::sleep(GRACE);
    }
    // SAFETY: as above; then the signal's default action ends the process
    // with the status a shell expects (130 for Ctrl-C), _exit if it did not.
    unsafe {
        for &g in groups.iter() {
            libc::killpg(g, libc::SIGKILL);
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
        libc::_exit(128 + signal);
    }
}
