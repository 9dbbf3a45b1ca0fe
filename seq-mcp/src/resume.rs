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
//!
//! What is kept is bounded in bytes, per caller ([`MAX_KEPT_BYTES_PER_CALLER`]) and in all
//! ([`MAX_KEPT_BYTES`]), and freed as soon as it is no longer needed: a stream read to its end
//! (its answer delivered) keeps no events, and a client that resumes after an event has
//! acknowledged it and those before. Past a bound, the oldest events already sent on a
//! connection go first, then the oldest unsent ones. A resumption that asks for an event no
//! longer kept is told so ([`Streams::lost`]) instead of getting a stream with a hole.

use rmcp::model::JsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use seq_exec::engine::CancellationToken;
use serde_json::Value;
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
/// Bytes of events kept for resumption in all.
pub const MAX_KEPT_BYTES: usize = 512 * 1024 * 1024;
/// Bytes of events kept for resumption for one caller, so that no caller's answers can take
/// all of [`MAX_KEPT_BYTES`].
pub const MAX_KEPT_BYTES_PER_CALLER: usize = 64 * 1024 * 1024;
/// Whom the events of a stream not yet bound to a caller are counted against (besides all).
const NOBODY: &str = "";

/// The streams of one server (module comment).
#[derive(Clone, Debug)]
pub struct Streams(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    window: Duration,
    /// Bytes kept at most, in all and per caller.
    kept: usize,
    kept_per_caller: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// By key (the first part of every event id of the stream).
    streams: HashMap<String, Stream>,
    /// rmcp's stream ids to keys.
    keys: HashMap<String, String>,
    swept: Instant,
    /// Bytes of events kept, in all and by caller ([`NOBODY`] for streams bound to none yet).
    bytes: usize,
    bytes_of: HashMap<String, usize>,
    /// Counts the events stored: the order of age across streams.
    stored: u64,
}

/// One kept event.
#[derive(Debug)]
struct Kept {
    index: u64,
    message: ServerSseMessage,
    bytes: usize,
    /// Its place in the order of all events stored (older is smaller).
    order: u64,
}

/// Why events of a stream are no longer kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// They were read: the stream to its end, or a client resumed after them.
    Delivered,
    /// They were dropped for room: the caller's share ([`MAX_KEPT_BYTES_PER_CALLER`]) or all
    /// ([`MAX_KEPT_BYTES`]) was full.
    Dropped { per_caller: bool, bound: usize },
}

/// A resumption that asks for events no longer kept ([`Streams::lost`]).
#[derive(Clone, Debug)]
pub struct Lost {
    /// The id of the request the stream answers, when known.
    pub request: Option<Value>,
    pub why: Gone,
}

impl Lost {
    /// What the client is told.
    pub fn text(&self) -> String {
        match self.why {
            Gone::Delivered => "the events after this one were already delivered, and are not                                 kept once read"
                .to_owned(),
            Gone::Dropped { per_caller, bound } => format!(
                "the events after this one were dropped unread: this server keeps at most {}                  MiB of answers for resumption {}, and newer ones needed the room; call again",
                bound / (1024 * 1024),
                if per_caller { "per caller" } else { "in all" }
            ),
        }
    }
}

#[derive(Debug)]
struct Stream {
    rmcp_id: String,
    events: VecDeque<Kept>,
    next: u64,
    /// The bytes of `events`.
    bytes: usize,
    /// Whom `bytes` are counted against ([`NOBODY`] until [`Streams::watch`] tells).
    caller: String,
    /// The request the stream answers, when known.
    request: Option<Value>,
    /// The highest index sent on a connection.
    sent: Option<u64>,
    /// The highest index no longer kept, and why.
    gone: Option<(u64, Gone)>,
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
    pub fn new(window: Duration, kept: usize, kept_per_caller: usize) -> Streams {
        Streams(Arc::new(Shared {
            window,
            kept,
            kept_per_caller,
            state: Mutex::new(State {
                streams: HashMap::new(),
                keys: HashMap::new(),
                swept: Instant::now(),
                bytes: 0,
                bytes_of: HashMap::new(),
                stored: 0,
            }),
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the state leaves it usable.
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection answering a request reads the stream of `event_id` (its first event):
    /// when it drops before the answer and no client comes back within the window, `abandon`
    /// is cancelled. The stream is bound to `session`, answers `request` and is counted
    /// against `caller`.
    pub fn watch(
        &self,
        event_id: &str,
        abandon: CancellationToken,
        session: Option<String>,
        caller: &str,
        request: Option<Value>,
    ) -> Option<Reader> {
        let (key, _) = parse(event_id)?;
        let mut state = self.state();
        let stream = state.streams.get_mut(key)?;
        stream.abandon = Some(abandon);
        stream.session = session;
        stream.request = request;
        let (bytes, was) = (
            stream.bytes,
            std::mem::replace(&mut stream.caller, caller.into()),
        );
        let reader = self.attach(stream, key);
        state.uncount(&was, bytes);
        *state.bytes_of.entry(caller.to_owned()).or_insert(0) += bytes;
        state.bytes += bytes;
        self.fit(&mut state, caller);
        Some(reader)
    }

    /// Event `event_id` went out on a connection: it goes before unsent ones when room is
    /// needed.
    pub fn sent(&self, event_id: &str) {
        let Some((key, index)) = parse(event_id) else {
            return;
        };
        if let Some(stream) = self.state().streams.get_mut(key) {
            stream.sent = stream.sent.max(Some(index));
        }
    }

    /// Why a resumption after `event_id` cannot have what follows it, when it cannot.
    pub fn lost(&self, event_id: &str) -> Option<Lost> {
        let (key, after) = parse(event_id)?;
        let state = self.state();
        let stream = state.streams.get(key)?;
        let (through, why) = stream.gone?;
        (through > after).then(|| Lost {
            request: stream.request.clone(),
            why,
        })
    }

    /// The bytes kept now, in all and for `caller`.
    pub fn kept(&self, caller: &str) -> (usize, usize) {
        let state = self.state();
        (
            state.bytes,
            state.bytes_of.get(caller).copied().unwrap_or(0),
        )
    }

    /// Drops events until `caller` and all are within their bounds: those sent first, then the
    /// rest, oldest first.
    fn fit(&self, state: &mut State, caller: &str) {
        let (all, each) = (self.0.kept, self.0.kept_per_caller);
        loop {
            let over_mine =
                caller != NOBODY && state.bytes_of.get(caller).copied().unwrap_or(0) > each;
            let over_all = state.bytes > all;
            if !over_mine && !over_all {
                return;
            }
            let why = if over_mine {
                Gone::Dropped {
                    per_caller: true,
                    bound: each,
                }
            } else {
                Gone::Dropped {
                    per_caller: false,
                    bound: all,
                }
            };
            let whose = over_mine.then_some(caller);
            let Some(key) = state.oldest(whose) else {
                return;
            };
            state.drop_front(&key, Some(why));
        }
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
            state.forget(&key);
        }
    }

    /// The stream of `key` was read to its end: its events are not needed any more.
    fn delivered(&self, key: &str) {
        let mut state = self.state();
        let answered = state
            .streams
            .get(key)
            .is_some_and(|stream| stream.answered.is_some());
        if answered {
            state.free_through(key, u64::MAX, Gone::Delivered);
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
                        bytes: 0,
                        caller: NOBODY.to_owned(),
                        request: None,
                        sent: None,
                        gone: None,
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
        let order = state.stored;
        state.stored += 1;
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
        // The size rmcp writes it at, near enough.
        let bytes = kept
            .message
            .as_deref()
            .and_then(|message| serde_json::to_vec(message).ok())
            .map_or(0, |text| text.len())
            + id.len();
        stream.bytes += bytes;
        stream.events.push_back(Kept {
            index,
            message: kept,
            bytes,
            order,
        });
        stream.changed.send_replace(stream.next);
        let caller = stream.caller.clone();
        let full = stream.events.len() > MAX_EVENTS;
        *state.bytes_of.entry(caller.clone()).or_insert(0) += bytes;
        state.bytes += bytes;
        if full {
            // A long run's oldest heartbeats: a resumption still gets the rest and the answer.
            state.drop_front(&key, None);
        }
        self.fit(&mut state, &caller);
        id
    }

    /// The events of the stream of `event_id` after it, then those that come, until the answer.
    fn replay(&self, event_id: &str) -> Result<EventStream, EventStoreError> {
        let unknown =
            || -> EventStoreError { format!("no stream has the event `{event_id}`").into() };
        let (key, after) = parse(event_id).ok_or_else(unknown)?;
        let mut state = self.state();
        // The client has read through `after`: what it holds is not needed any more.
        state.free_through(key, after, Gone::Delivered);
        let stream = state.streams.get_mut(key).ok_or_else(unknown)?;
        let changes = stream.changed.subscribe();
        let reader = self.attach(stream, key);
        let replay = Replay {
            streams: self.clone(),
            key: key.to_owned(),
            after,
            changes,
            reader,
        };
        Ok(Box::pin(futures::stream::unfold(replay, Replay::next)))
    }
}

impl State {
    fn sweep(&mut self, now: Instant, window: Duration) {
        self.swept = now;
        let old: Vec<String> = self
            .streams
            .iter()
            .filter(|(_, stream)| match stream.answered {
                Some(at) => now.duration_since(at) >= window.max(KEEP_ANSWERED),
                None => now.duration_since(stream.last) >= STALE,
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in old {
            self.forget(&key);
        }
    }

    /// Forgets the stream of `key` and its bytes.
    fn forget(&mut self, key: &str) {
        if let Some(stream) = self.streams.remove(key) {
            self.keys.remove(&stream.rmcp_id);
            self.uncount(&stream.caller, stream.bytes);
        }
    }

    fn uncount(&mut self, caller: &str, bytes: usize) {
        self.bytes = self.bytes.saturating_sub(bytes);
        if let Some(count) = self.bytes_of.get_mut(caller) {
            *count = count.saturating_sub(bytes);
            if *count == 0 {
                self.bytes_of.remove(caller);
            }
        }
    }

    /// Frees the events of `key` up to index `through`.
    fn free_through(&mut self, key: &str, through: u64, why: Gone) {
        while self
            .streams
            .get(key)
            .and_then(|stream| stream.events.front())
            .is_some_and(|event| event.index <= through)
        {
            self.drop_front(key, Some(why));
        }
    }

    /// Drops the oldest event of `key`, saying why it is gone (nothing: a resumption after it
    /// goes on without it).
    fn drop_front(&mut self, key: &str, why: Option<Gone>) {
        let Some(stream) = self.streams.get_mut(key) else {
            return;
        };
        let Some(event) = stream.events.pop_front() else {
            return;
        };
        stream.bytes = stream.bytes.saturating_sub(event.bytes);
        if let Some(why) = why {
            // Dropped unread stays the reason: the client never had those events.
            let why = match stream.gone {
                Some((_, was @ Gone::Dropped { .. })) if why == Gone::Delivered => was,
                Some(_) | None => why,
            };
            stream.gone = Some((event.index, why));
        }
        let caller = stream.caller.clone();
        self.uncount(&caller, event.bytes);
    }

    /// The stream (of `caller`, or anyone's) whose oldest event goes first: one already sent
    /// before any unsent one, the oldest among either.
    fn oldest(&self, caller: Option<&str>) -> Option<String> {
        self.streams
            .iter()
            .filter(|(_, stream)| caller.is_none_or(|caller| stream.caller == caller))
            .filter_map(|(key, stream)| {
                let front = stream.events.front()?;
                let unsent = stream.sent.is_none_or(|sent| front.index > sent);
                Some(((unsent, front.order), key))
            })
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, key)| key.clone())
    }
}

/// A connection reading a stream; its drop may start the resume window.
#[derive(Debug)]
pub struct Reader {
    streams: Streams,
    key: String,
}

impl Reader {
    /// The stream was read to its end: its answer is delivered.
    pub fn delivered(&self) {
        self.streams.delivered(&self.key);
    }
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
    reader: Reader,
}

impl Replay {
    async fn next(mut self) -> Option<(ServerSseMessage, Replay)> {
        loop {
            {
                let mut state = self.streams.state();
                let stream = state.streams.get_mut(&self.key)?;
                // Seen now: a change after this wakes the wait below.
                self.changes.borrow_and_update();
                let after = self.after;
                if let Some((index, event)) = stream
                    .events
                    .iter()
                    .find(|kept| kept.index > after)
                    .map(|kept| (kept.index, kept.message.clone()))
                {
                    self.after = index;
                    stream.sent = stream.sent.max(Some(index));
                    drop(state);
                    return Some((event, self));
                }
                if stream.answered.is_some() {
                    drop(state);
                    // Asked for again after the answer went out: read to the end.
                    self.reader.delivered();
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

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests;
