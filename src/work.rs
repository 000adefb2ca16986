//! Independent pieces of the core's work, and who runs them.
//!
//! The core never starts a thread (docs/architecture.md, "The rule"): a
//! function whose work splits into independent pieces hands them to the
//! [`Workers`] it was given. The edge gives one that shares them with the
//! machine's other cores ([`crate::threads::Threads`]); tests and small
//! inputs run them here, in order ([`InOrder`]). Either way [`all`] gives
//! the results back in the pieces' order, so the answer is the same.

use std::sync::Mutex;

/// One piece of work, run once.
pub type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Runs pieces of work.
pub trait Workers: Sync {
    /// How many pieces may run at once: what a caller cuts its work by.
    fn cores(&self) -> usize;
    /// Runs every job once, and returns when all have run.
    fn run<'a>(&self, jobs: Vec<Job<'a>>);
}

/// Every piece here, one after the other.
pub struct InOrder;

impl Workers for InOrder {
    fn cores(&self) -> usize {
        1
    }

    fn run<'a>(&self, jobs: Vec<Job<'a>>) {
        for job in jobs {
            job();
        }
    }
}

/// The results of `jobs`, in order, run by `workers`.
pub fn all<T: Send, F: FnOnce() -> T + Send>(workers: &dyn Workers, jobs: Vec<F>) -> Vec<T> {
    let slots: Vec<Mutex<Option<T>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let boxed: Vec<Job<'_>> = jobs
        .into_iter()
        .zip(&slots)
        .map(|(job, slot)| -> Job<'_> {
            Box::new(move || {
                let out = job();
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
            })
        })
        .collect();
    workers.run(boxed);
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every job ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_runs_each_job_once_and_keeps_their_order() {
        let order = Mutex::new(Vec::new());
        let jobs: Vec<_> = (0..5u32)
            .map(|i| {
                let order = &order;
                move || {
                    order.lock().expect("not poisoned").push(i);
                    i * 10
                }
            })
            .collect();
        assert_eq!(all(&InOrder, jobs), [0, 10, 20, 30, 40]);
        assert_eq!(*order.lock().expect("not poisoned"), [0, 1, 2, 3, 4]);
        assert!(all(&InOrder, Vec::<fn() -> u8>::new()).is_empty());
    }
}
