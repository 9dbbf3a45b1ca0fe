use super::*;
use serde_json::json;

fn message(value: Value) -> ServerSseMessage {
    ServerSseMessage::from_message(serde_json::from_value(value).unwrap())
}

fn progress() -> ServerSseMessage {
    message(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1}}))
}

/// An answer of about `bytes` bytes.
fn answer(id: u64, bytes: usize) -> ServerSseMessage {
    message(json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": "x".repeat(bytes)}]}}))
}

/// A stream of `caller` answering request `id`: a progress event, watched, then an answer
/// of `bytes`; the first event's id and the reader.
fn stream(streams: &Streams, rmcp: &str, caller: &str, id: u64, bytes: usize) -> (String, Reader) {
    let first = streams.store(rmcp, &progress());
    let reader = streams
        .watch(
            &first,
            CancellationToken::new(),
            None,
            caller,
            Some(json!(id)),
        )
        .unwrap();
    streams.store(rmcp, &answer(id, bytes));
    (first, reader)
}

#[test]
fn a_stream_read_to_its_end_keeps_nothing() {
    let streams = Streams::new(Duration::ZERO, 1 << 20, 1 << 20);
    let (first, reader) = stream(&streams, "a", "alice", 1, 1000);
    assert!(streams.kept("alice").1 > 1000);
    assert!(streams.lost(&first).is_none());
    reader.delivered();
    assert_eq!(streams.kept("alice"), (0, 0));
    let lost = streams.lost(&first).unwrap();
    assert_eq!(lost.why, Gone::Delivered);
    assert!(lost.text().contains("already delivered"), "{}", lost.text());
}

#[test]
fn a_resumption_acknowledges_what_it_resumes_after() {
    let streams = Streams::new(Duration::ZERO, 1 << 20, 1 << 20);
    let (first, _reader) = stream(&streams, "a", "alice", 1, 1000);
    let before = streams.kept("alice").1;
    let _replay = streams.replay(&first).unwrap();
    let after = streams.kept("alice").1;
    assert!(after < before && after > 1000, "{before} then {after}");
    // What follows the acknowledged event is still there to be had.
    assert!(streams.lost(&first).is_none());
}

#[test]
fn past_a_callers_bound_its_oldest_answers_go_sent_ones_first_and_others_keep_theirs() {
    let streams = Streams::new(Duration::ZERO, 1 << 20, 2500);
    let (bob, _b) = stream(&streams, "b", "bob", 9, 2000);
    let (older, _r1) = stream(&streams, "a1", "alice", 1, 1000);
    let (newer, _r2) = stream(&streams, "a2", "alice", 2, 1000);
    // The newer one's answer went out on its connection: it goes first.
    streams.sent(&format!("{}-1", newer.rsplit_once('-').unwrap().0));
    let (_, _r3) = stream(&streams, "a3", "alice", 3, 1000);
    let lost = streams.lost(&newer).unwrap();
    assert_eq!(
        lost.why,
        Gone::Dropped {
            per_caller: true,
            bound: 2500
        }
    );
    assert_eq!(lost.request, Some(json!(2)));
    assert!(lost.text().contains("per caller"), "{}", lost.text());
    assert!(streams.lost(&older).is_none());
    assert!(streams.kept("alice").1 <= 2500);
    assert!(
        streams.lost(&bob).is_none(),
        "another caller's answers stay"
    );
    // Then the oldest unsent one.
    let (_, _r4) = stream(&streams, "a4", "alice", 4, 1000);
    assert!(streams.lost(&older).is_some());
}

#[test]
fn past_the_bound_in_all_the_oldest_go_whoever_they_are() {
    let streams = Streams::new(Duration::ZERO, 2500, 1 << 20);
    let (bob, _b) = stream(&streams, "b", "bob", 9, 1000);
    let (alice, _a) = stream(&streams, "a", "alice", 1, 1000);
    let (_, _c) = stream(&streams, "c", "carol", 2, 1000);
    let lost = streams.lost(&bob).unwrap();
    assert!(lost.text().contains("in all"), "{}", lost.text());
    assert!(streams.lost(&alice).is_none());
    assert!(streams.kept("").0 <= 2500);
}
