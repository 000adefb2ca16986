//! The one queue between the threads that read a server (its stdout, its
//! event streams) and the session that takes the messages: bounded in
//! bytes, so that a server writing faster than the session reads is made
//! to wait (its pipe or socket fills and its writes block) instead of
//! filling our memory.
//!
//! A reader pushes; when the queue holds its budget, the push waits for
//! room. The session pops with a deadline. Closing the queue (the session
//! ended) wakes every waiting reader and refuses what they push, so a
//! reader thread ends instead of waiting forever.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Bytes of messages waiting for the session, per server, before the
/// readers wait. One message larger than this is still let in, alone, so
/// what waits is at most this or one message under the cap.
pub const BUDGET: usize = 1 << 20;

struct State<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    producers: usize,
    closed: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item is pushed or a producer is gone.
    ready: Condvar,
    /// Signalled when an item is popped or the queue is closed.
    room: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The session's end of a queue.
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
    budget: usize,
}

/// A reader's end; the queue knows when every one is gone.
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
    budget: usize,
}

/// Why [`Queue::pop`] returned without an item.
#[derive(Debug, PartialEq, Eq)]
pub enum Empty {
    /// The deadline passed.
    Timeout,
    /// Every producer is gone and nothing is left.
    Ended,
}

impl<T> Queue<T> {
    /// An empty queue that holds up to `budget` bytes.
    pub fn new(budget: usize) -> Queue<T> {
        Queue {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    items: VecDeque::new(),
                    bytes: 0,
                    producers: 0,
                    closed: false,
                }),
                ready: Condvar::new(),
                room: Condvar::new(),
            }),
            budget,
        }
    }

    /// A new producer, for a reader thread.
    pub fn producer(&self) -> Producer<T> {
        self.shared.lock().producers += 1;
        Producer {
            shared: self.shared.clone(),
            budget: self.budget,
        }
    }

    /// Producers not yet dropped.
    pub fn producers(&self) -> usize {
        self.shared.lock().producers
    }

    /// The next item, waiting until `deadline`.
    pub fn pop(&self, deadline: Instant) -> Result<T, Empty> {
        let mut state = self.shared.lock();
        loop {
            if let Some((item, size)) = state.items.pop_front() {
                state.bytes -= size;
                self.shared.room.notify_all();
                return Ok(item);
            }
            if state.producers == 0 {
                return Err(Empty::Ended);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Empty::Timeout);
            }
            state = self
                .shared
                .ready
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Drops what waits and refuses every later push: the readers end.
    pub fn close(&self) {
        let mut state = self.shared.lock();
        state.closed = true;
        state.items.clear();
        state.bytes = 0;
        self.shared.room.notify_all();
    }
}

impl<T> Drop for Queue<T> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<T> Producer<T> {
    /// Queues `item` of `size` bytes, waiting while the queue is full.
    /// False when the queue is closed: the reader should stop.
    pub fn push(&self, item: T, size: usize) -> bool {
        let mut state = self.shared.lock();
        while !state.closed
            && !state.items.is_empty()
            && state.bytes.saturating_add(size) > self.budget
        {
            state = self
                .shared
                .room
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        if state.closed {
            return false;
        }
        state.bytes += size;
        state.items.push_back((item, size));
        self.shared.ready.notify_all();
        true
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.shared.lock().producers -= 1;
        self.shared.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn a_full_queue_makes_the_reader_wait_and_closing_frees_it() {
        let q: Queue<Vec<u8>> = Queue::new(100);
        let p = q.producer();
        let pushed = Arc::new(AtomicUsize::new(0));
        let count = pushed.clone();
        let reader = std::thread::spawn(move || {
            while p.push(vec![0; 40], 40) {
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        // 40 + 40 fit in 100; the third waits.
        assert_eq!(pushed.load(Ordering::SeqCst), 2);
        let soon = Instant::now() + Duration::from_secs(5);
        assert_eq!(q.pop(soon).unwrap().len(), 40);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(pushed.load(Ordering::SeqCst), 3);
        q.close();
        reader.join().unwrap();
        assert_eq!(q.pop(soon), Err(Empty::Ended));
    }

    #[test]
    fn a_large_item_gets_in_alone_and_pop_keeps_its_deadline() {
        let q: Queue<usize> = Queue::new(10);
        let p = q.producer();
        assert!(p.push(1, 1000));
        let start = Instant::now();
        assert_eq!(q.pop(Instant::now()).unwrap(), 1);
        assert_eq!(
            q.pop(Instant::now() + Duration::from_millis(100)),
            Err(Empty::Timeout)
        );
        assert!(start.elapsed() >= Duration::from_millis(100));
        drop(p);
        assert_eq!(q.pop(Instant::now()), Err(Empty::Ended));
    }
}
