//! Work shared with the machine's other cores: the edge's threads, so
//! that the core need start none ([`crate::work`]).

use crate::work::{Job, Workers};

/// The machine's cores, for the core's pieces of work: each thread takes
/// the next job from one queue as it finishes one, and this thread is
/// one of them. A lone job runs here alone (waking another core costs
/// more than a short job: docs/performance.md, "Eleventh pass").
pub struct Threads {
    cores: usize,
}

impl Threads {
    /// As many as the process may use.
    pub fn of_machine() -> Threads {
        Threads {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// At most `cores`.
    pub fn up_to(cores: usize) -> Threads {
        Threads {
            cores: cores.max(1),
        }
    }
}

impl Workers for Threads {
    fn cores(&self) -> usize {
        self.cores
    }

    fn run<'a>(&self, jobs: Vec<Job<'a>>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        let threads = self.cores.min(jobs.len());
        if threads <= 1 {
            for job in jobs {
                job();
            }
            return;
        }
        let jobs: Vec<Mutex<Option<Job<'a>>>> =
            jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = jobs.get(i) else { break };
            let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(job) = job {
                job();
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..threads {
                // A thread that cannot be started (a process limit) leaves
                // its share to the others: this one takes jobs too.
                let _ = std::thread::Builder::new().spawn_scoped(scope, work);
            }
            work();
        });
    }
}

/// `a` on a thread of its own while `b` runs on this one, or both here
/// (`b` first) when no thread can be started (a process limit on
/// threads: then a run is slower, never failed).
pub fn side_by_side<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    // Taken by the thread, or here if it could not be started.
    let job = std::sync::Mutex::new(Some(a));
    let run = || {
        job.lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .map(|a| a())
    };
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new().spawn_scoped(s, run);
        let b = b();
        let a = match thread {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => run(),
        };
        (a.expect("taken once, by the thread or here"), b)
    })
}

/// [`side_by_side`] when `beside` (the work is worth waking the other
/// core for, which is not free: docs/performance.md, "Fourth pass",
/// 4701d16), else `a` then `b` here.
pub fn side_by_side_if<A: Send, B>(
    beside: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B,
) -> (A, B) {
    if beside {
        return side_by_side(a, b);
    }
    let a = a();
    (a, b())
}

/// Where `items` are cut in two of about equal `weight`: the first
/// index of the second part.
pub fn halfway<T>(items: &[T], weight: impl Fn(&T) -> usize) -> usize {
    let total: usize = items.iter().map(&weight).sum();
    let mut sum = 0;
    items
        .iter()
        .position(|item| {
            sum += weight(item);
            2 * sum >= total
        })
        .map_or(items.len(), |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_once_each_and_their_results_keep_the_queue_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let ran = AtomicUsize::new(0);
        let ran = &ran;
        // Early jobs take longest, so later ones finish first on another
        // core; the results must still come back in job order.
        let jobs: Vec<_> = (0..40u64)
            .map(|i| {
                move || {
                    std::thread::sleep(std::time::Duration::from_micros((40 - i) * 50));
                    ran.fetch_add(1, Ordering::Relaxed);
                    i * i
                }
            })
            .collect();
        let two = Threads::up_to(2);
        let out = crate::work::all(&two, jobs);
        assert_eq!(out, (0..40u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(ran.load(Ordering::Relaxed), 40);
        assert_eq!(crate::work::all(&two, vec![|| 7]), vec![7]);
        assert!(crate::work::all(&two, Vec::<fn() -> u8>::new()).is_empty());
    }

    #[test]
    fn the_first_runs_beside_this_thread_and_both_return() {
        let here = std::thread::current().id();
        let (a, b) = side_by_side(
            || (std::thread::current().id(), 1),
            || (std::thread::current().id(), 2),
        );
        assert_eq!(b, (here, 2));
        assert_ne!(a.0, here);
        assert_eq!(a.1, 1);
    }

    #[test]
    fn unless_beside_both_run_here_in_order() {
        let here = std::thread::current().id();
        let order = std::sync::Mutex::new(Vec::new());
        let ran = |n| {
            order.lock().expect("not poisoned").push(n);
            std::thread::current().id()
        };
        assert_eq!(side_by_side_if(false, || ran(1), || ran(2)), (here, here));
        assert_eq!(*order.lock().expect("not poisoned"), [1, 2]);
        assert_ne!(side_by_side_if(true, || ran(3), || ran(4)).0, here);
    }

    #[test]
    fn halfway_cuts_by_weight() {
        assert_eq!(halfway(&[1, 1, 1, 1], |w| *w), 2);
        assert_eq!(halfway(&[10, 1, 1, 1], |w| *w), 1);
        assert_eq!(halfway(&[1, 1, 1, 10], |w| *w), 4);
        assert_eq!(halfway(&[3, 3, 3], |w| *w), 2);
        assert_eq!(halfway::<usize>(&[], |w| *w), 0);
        assert_eq!(halfway(&[0, 0], |w| *w), 1);
    }
}
