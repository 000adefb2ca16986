//! Work shared with the machine's other core.

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
/// core for: that took up to 7 ms here), else `a` then `b` here.
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
