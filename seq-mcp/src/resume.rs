//! The SSE streams of `--http`, kept for resumption: rmcp's session layer hands every event it
//! sends to [`Streams`] (its [`EventStore`]), which gives it an id (`KEY-INDEX`, the key random
//! per stream, so that an id cannot be guessed) and keeps it, so that a client whose connection
//! dropped and that comes back with `Last-Event-ID` gets what it missed, the answer of a run
//! that finished meanwhile included, and what follows until the answer.
//!
//! A stream that nobody reads any more (its connection dropped, no resumption open) and that has
//! no answer yet is *abandoned* once the resume window passes without a client coming back: the
//! call it answers is then cancelled ([`Reader`], [`Streams::watch`]). A finished stream is kept
//! for the resume window after its answer (a minute at least); one that stays unfinished and
//! silent, for [`STALE`].

use rmcp::model::JsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use seq_exec::engine::CancellationToken;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a client whose connection dropped has to come back by default.
pub const RESUME_WINDOW: Duration = Duration::from_secs(60);
/// Events kept per stream: the oldest go first (a long run's heartbeats); the answer is last.
const MAX_EVENTS: usize = 256;
/// An unfinished stream without an event for this long is forgotten (past rmcp's idle
/// session timeout of 5 minutes, its session is gone).
pub const STALE: Duration = Duration::from_secs(600);
/// A finished stream is kept at least this long after its answer (longer with a longer window).
const KEEP_ANSWERED: Duration = Duration::from_secs(60);
/// How often the store looks for streams to forget.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// The streams of one server (module comment).
#[derive(Clone, Debug)]
pub struct Streams(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    window: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// By key (the first part of every event id of the stream).
    streams: HashMap<String, Stream>,
    /// rmcp's stream ids to keys.
    keys: HashMap<String, String>,
    swept: Instant,
}

#[derive(Debug)]
struct Stream {
    rmcp_id: String,
    events: VecDeque<(u64, ServerSseMessage)>,
    next: u64,
    /// When the answer was stored: nothing follows it.
    answered: Option<Instant>,
    last: Instant,
    /// Connections reading the stream now (the request's own, resumptions).
    readers: usize,
    /// Bumped whenever `readers` changes: a window started before is void.
    generation: u64,
    /// Cancelled when the stream is abandoned: the call it answers stops.
    abandon: Option<CancellationToken>,
    /// The session the stream belongs to, when known.
    session: Option<String>,
    /// Tells resumptions that an event came (the count of events stored).
    changed: watch::Sender<u64>,
}

impl Streams {
    /// A store whose abandoned streams' calls are cancelled after `window`.
    pub fn new(window: Duration) -> Streams {
        Streams(Arc::new(Shared {
            window,
            state: Mutex::new(State {
                streams: HashMap::new(),
                keys: HashMap::new(),
                swept: Instant::now(),
            }),
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the state leaves it usable.
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection answering a request reads the stream of `event_id` (its first event):
    /// when it drops before the answer and no client comes back within the window, `abandon`
    /// is cancelled. The stream is bound to `session`.
    pub fn watch(
        &self,
        event_id: &str,
        abandon: CancellationToken,
        session: Option<String>,
    ) -> Option<Reader> {
        let (key, _) = parse(event_id)?;
        let mut state = self.state();
        let stream = state.streams.get_mut(key)?;
        stream.abandon = Some(abandon);
        stream.session = session;
        Some(self.attach(stream, key))
    }

    fn attach(&self, stream: &mut Stream, key: &str) -> Reader {
        stream.readers += 1;
        stream.generation += 1;
        Reader {
            streams: self.clone(),
            key: key.to_owned(),
        }
    }

    /// The session the stream of `event_id` belongs to, when it is known here.
    pub fn session_of(&self, event_id: &str) -> Option<String> {
        let (key, _) = parse(event_id)?;
        self.state().streams.get(key)?.session.clone()
    }

    /// Forgets the streams of `session` (it ended).
    pub fn forget_session(&self, session: &str) {
        let mut state = self.state();
        let gone: Vec<String> = state
            .streams
            .iter()
            .filter(|(_, stream)| stream.session.as_deref() == Some(session))
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            if let Some(stream) = state.streams.remove(&key) {
                state.keys.remove(&stream.rmcp_id);
            }
        }
    }

    /// A reader of `key` went away.
    fn release(&self, key: &str) {
        let mut state = self.state();
        let Some(stream) = state.streams.get_mut(key) else {
            return;
        };
        stream.readers = stream.readers.saturating_sub(1);
        stream.generation += 1;
        if stream.readers > 0 || stream.answered.is_some() {
            return;
        }
        let Some(abandon) = stream.abandon.clone() else {
            return;
        };
        let window = self.0.window;
        if window.is_zero() {
            abandon.cancel();
            return;
        }
        let generation = stream.generation;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to wait on: nobody can come back either.
            abandon.cancel();
            return;
        };
        let streams = self.clone();
        let key = key.to_owned();
        runtime.spawn(async move {
            tokio::time::sleep(window).await;
            let state = streams.state();
            let still = state
                .streams
                .get(&key)
                .is_none_or(|stream| stream.generation == generation && stream.answered.is_none());
            if still {
                abandon.cancel();
            }
        });
    }

    fn store(&self, rmcp_id: &str, event: &ServerSseMessage) -> String {
        let now = Instant::now();
        let mut state = self.state();
        if now.duration_since(state.swept) >= SWEEP_EVERY {
            state.sweep(now, self.0.window);
        }
        let key = match state.keys.get(rmcp_id) {
            Some(key) => key.clone(),
            None => {
                let key = fresh_key();
                state.keys.insert(rmcp_id.to_owned(), key.clone());
                state.streams.insert(
                    key.clone(),
                    Stream {
                        rmcp_id: rmcp_id.to_owned(),
                        events: VecDeque::new(),
                        next: 0,
                        answered: None,
                        last: now,
                        readers: 0,
                        generation: 0,
                        abandon: None,
                        session: None,
                        changed: watch::Sender::new(0),
                    },
                );
                key
            }
        };
        let Some(stream) = state.streams.get_mut(&key) else {
            return format!("{key}-0");
        };
        let index = stream.next;
        stream.next += 1;
        stream.last = now;
        let id = format!("{key}-{index}");
        let mut kept = event.clone();
        kept.event_id = Some(id.clone());
        let answer = kept.message.as_deref().is_some_and(|message| {
            matches!(
                message,
                JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)
            )
        });
        if answer {
            stream.answered = Some(now);
        }
        if stream.events.len() >= MAX_EVENTS {
            stream.events.pop_front();
        }
        stream.events.push_back((index, kept));
        stream.changed.send_replace(stream.next);
        id
    }

    /// The events of the stream of `event_id` after it, then those that come, until the answer.
    fn replay(&self, event_id: &str) -> Result<EventStream, EventStoreError> {
        let unknown =
            || -> EventStoreError { format!("no stream has the event `{event_id}`").into() };
        let (key, after) = parse(event_id).ok_or_else(unknown)?;
        let mut state = self.state();
        let stream = state.streams.get_mut(key).ok_or_else(unknown)?;
        let changes = stream.changed.subscribe();
        let reader = self.attach(stream, key);
        let replay = Replay {
            streams: self.clone(),
            key: key.to_owned(),
            after,
            changes,
            _reader: reader,
        };
        Ok(Box::pin(futures::stream::unfold(replay, Replay::next)))
    }
}

impl State {
    fn sweep(&mut self, now: Instant, window: Duration) {
        self.swept = now;
        let keys = &mut self.keys;
        self.streams.retain(|_, stream| {
            let keep = match stream.answered {
                Some(at) => now.duration_since(at) < window.max(KEEP_ANSWERED),
                None => now.duration_since(stream.last) < STALE,
            };
            if !keep {
                keys.remove(&stream.rmcp_id);
            }
            keep
        });
    }
}

/// A connection reading a stream; its drop may start the resume window.
#[derive(Debug)]
pub struct Reader {
    streams: Streams,
    key: String,
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.streams.release(&self.key);
    }
}

/// A resumption being read.
struct Replay {
    streams: Streams,
    key: String,
    after: u64,
    changes: watch::Receiver<u64>,
    _reader: Reader,
}

impl Replay {
    async fn next(mut self) -> Option<(ServerSseMessage, Replay)> {
        loop {
            {
                let state = self.streams.state();
                let stream = state.streams.get(&self.key)?;
                // Seen now: a change after this wakes the wait below.
                self.changes.borrow_and_update();
                if let Some((index, event)) =
                    stream.events.iter().find(|(index, _)| *index > self.after)
                {
                    self.after = *index;
                    let event = event.clone();
                    drop(state);
                    return Some((event, self));
                }
                if stream.answered.is_some() {
                    return None;
                }
            }
            // The stream is forgotten when its sender goes: the replay ends.
            self.changes.changed().await.ok()?;
        }
    }
}

/// `KEY-INDEX` into its key and index.
fn parse(event_id: &str) -> Option<(&str, u64)> {
    let (key, index) = event_id.rsplit_once('-')?;
    Some((key, index.parse().ok()?))
}

/// 128 random bits in hex; the clock and a counter if the OS's source fails.
fn fresh_key() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes.copy_from_slice(&(nanos ^ u128::from(count)).to_le_bytes());
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

// rmcp declares the trait with `async_trait`: these are its methods as that macro writes them.
impl EventStore for Streams {
    fn store_event<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        stream_id: &'life1 str,
        event: &'life2 ServerSseMessage,
    ) -> Boxed<'async_trait, Result<String, EventStoreError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        let id = self.store(stream_id, event);
        Box::pin(std::future::ready(Ok(id)))
    }

    fn replay_events_after<'life0, 'life1, 'async_trait>(
        &'life0 self,
        last_event_id: &'life1 str,
    ) -> Boxed<'async_trait, Result<EventStream, EventStoreError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        let replay = self.replay(last_event_id);
        Box::pin(std::future::ready(replay))
    }
}
