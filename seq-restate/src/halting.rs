//! Driver futures polled no more once the Restate SDK has failed their invocation.
//!
//! The SDK's futures fail an invocation (a journal that does not match, a suspension, a broken
//! connection) by recording the failure, waking their task during the poll and returning
//! `Pending`: the handler's next poll, at the top, sees the failure and ends the invocation.
//! The engine polls the futures of items side by side through a `FuturesUnordered`, which may
//! poll a future that woke itself again within the same poll; an SDK call future polled again
//! there polls an inner future that has already finished, and panics (the worker's stream to
//! Restate then breaks, and the attempt counts against the invocation's retry limit). A driver
//! future that woke itself during its poll is therefore never polled again: the invocation ends
//! at the top anyway.

use seq_exec::BoxFuture;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::ThreadId;

/// `inner`, polled no more after a poll in which it woke itself and stayed pending.
pub(crate) fn halting<'a, T: Send + 'a>(inner: BoxFuture<'a, T>) -> BoxFuture<'a, T> {
    Box::pin(Halting {
        inner,
        halted: false,
    })
}

struct Halting<'a, T> {
    inner: BoxFuture<'a, T>,
    halted: bool,
}

impl<T> Future for Halting<'_, T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if self.halted {
            return Poll::Pending;
        }
        let watch = Arc::new(SelfWake {
            thread: std::thread::current().id(),
            polling: AtomicBool::new(true),
            woken: AtomicBool::new(false),
            waker: cx.waker().clone(),
        });
        let waker = Waker::from(Arc::clone(&watch));
        let polled = self.inner.as_mut().poll(&mut Context::from_waker(&waker));
        watch.polling.store(false, Ordering::Relaxed);
        if polled.is_pending() && watch.woken.load(Ordering::Relaxed) {
            self.halted = true;
        }
        polled
    }
}

/// The task's waker, noting a wake made by the future itself: on the thread polling it, while
/// it is being polled. A wake from elsewhere (an answer arriving) is only passed on.
struct SelfWake {
    thread: ThreadId,
    polling: AtomicBool,
    woken: AtomicBool,
    waker: Waker,
}

impl Wake for SelfWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.polling.load(Ordering::Relaxed) && std::thread::current().id() == self.thread {
            self.woken.store(true, Ordering::Relaxed);
        }
        self.waker.wake_by_ref();
    }
}

#[cfg(test)]
mod tests {
    use super::halting;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    /// Fails as the SDK does on its first poll (wakes itself, pending), and counts its polls.
    struct Failing(Arc<AtomicUsize>);

    impl Future for Failing {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.0.fetch_add(1, Ordering::Relaxed);
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn a_future_that_woke_itself_is_not_polled_again() {
        let polls = Arc::new(AtomicUsize::new(0));
        let mut future = halting(Box::pin(Failing(Arc::clone(&polls))));
        let waker = Waker::from(Arc::new(Noop));
        let mut cx = Context::from_waker(&waker);
        for _ in 0..3 {
            assert!(future.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_future_woken_from_outside_is_polled_again() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&polls);
        let mut future = halting(Box::pin(std::future::poll_fn(move |_| {
            counted.fetch_add(1, Ordering::Relaxed);
            Poll::<()>::Pending
        })));
        let waker = Waker::from(Arc::new(Noop));
        let mut cx = Context::from_waker(&waker);
        for _ in 0..3 {
            assert!(future.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 3);
    }
}
