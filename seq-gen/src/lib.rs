//! Deterministic generators of tool-sequence files for seqc's benchmarks and tests.
//!
//! [`sequence_file`] writes one large file (thousands of groups) and [`batch`] a batch of many
//! sequences calling each other; both check clean, so a benchmark measures the work of valid
//! input and nothing else. [`baseline`] is serde_json doing the same logical work on the same
//! bytes: the yardstick the front end and the checker are measured against. `clock::Clock`
//! (feature `clock`, so that tests do not build criterion) lets the benchmarks measure CPU time
//! on a busy machine, and [`times::Times`] keeps per-iteration wall times for figures of their
//! own; [`bench::full_size`] tells a benchmark from its smoke test. [`differential`] is a
//! proptest strategy of small sequences, valid and slightly broken, for the differential tests.
//!
//! The content is modelled on what models really write: shell commands full of `;` and nested
//! quotes, escapes of every kind (`\"`, `\\`, `\n`, `\u00e9`, surrogate pairs), CJK names,
//! `$args` templates and bare references, and `seq_call`s to earlier groups.

pub mod baseline;
pub mod bench;
#[cfg(feature = "clock")]
pub mod clock;
pub mod differential;
mod group;
mod pools;
mod rng;
mod text;
pub mod times;

use group::{Callee, Plan};
use rng::Rng;

/// The number of sequence levels of a batch: a sequence only calls sequences one level down, so
/// the deepest chain has `LEVELS - 1` = 4 cross-sequence calls, the legal maximum.
const LEVELS: usize = 5;

/// How far back a group looks for groups to call, so that calls stay local as in real files.
const CALL_WINDOW: usize = 40;

const FOOTER: &str = "\n  ]\n}\n";

/// A valid sequence file of about `target_bytes` bytes (at least one group).
pub fn sequence_file(target_bytes: usize) -> String {
    let mut rng = Rng::new(0x5EC_F11E);
    let mut out = String::with_capacity(target_bytes + 4096);
    header(
        &mut out,
        "巡检-生成",
        "节点巡检、备份与通知（generated for benchmarks）",
    );
    let mut local: Vec<Callee> = Vec::new();
    let mut index = 0;
    while index == 0 || out.len() + FOOTER.len() < target_bytes {
        let name = format!("{}-{index}", rng.pick(pools::GROUP_STEMS));
        let window = &local[local.len().saturating_sub(CALL_WINDOW)..];
        let plan = Plan {
            name: name.clone(),
            local: window,
            must_call: &[],
            allow_unsafe: true,
        };
        let built = group::group(&mut rng, &plan);
        push_group(&mut out, index, &built.text);
        if built.callable {
            local.push(Callee {
                target: name,
                inputs: built.inputs,
            });
        }
        index += 1;
    }
    out.push_str(FOOTER);
    out
}

/// A batch of `sequences` files (checked together) of `groups_per_sequence` groups each, as `(path, text)` pairs.
///
/// Groups call earlier groups of their sequence; sequences call sequences of the next level by
/// `#name` (sequence `i` sits at level `i % 5`), two each, whose callees share callees in turn:
/// chains four calls deep and diamonds everywhere, never a cycle. Only level-0 sequences, which
/// no one calls, hold `files_write`, so every call is parallel-safe.
pub fn batch(sequences: usize, groups_per_sequence: usize) -> Vec<(String, String)> {
    let groups = groups_per_sequence.max(1);
    let mut rng = Rng::new(0x5EC_5704E);
    let mut texts = vec![String::new(); sequences];
    let mut inputs = vec![0u16; sequences];
    // Callees first, so each caller knows the inputs it must pass.
    for level in (0..LEVELS).rev() {
        for index in (level..sequences).step_by(LEVELS) {
            let callees: Vec<Callee> = cross_targets(index, sequences)
                .map(|callee| Callee {
                    target: format!("#{}", sequence_name(callee)),
                    inputs: inputs[callee],
                })
                .collect();
            let mut must_call = vec![Vec::new(); groups];
            for callee in callees {
                must_call[rng.below(groups)].push(callee);
            }
            let (text, read) = batch_sequence(&mut rng, index, &must_call, level == 0);
            texts[index] = text;
            inputs[index] = read;
        }
    }
    texts
        .into_iter()
        .enumerate()
        .map(|(index, text)| (format!("{}.json", sequence_name(index)), text))
        .collect()
}

fn batch_sequence(
    rng: &mut Rng,
    index: usize,
    must_call: &[Vec<Callee>],
    allow_unsafe: bool,
) -> (String, u16) {
    let mut out = String::new();
    let description = format!("store sequence {index}: 巡检与汇总");
    header(&mut out, &sequence_name(index), &description);
    let mut local: Vec<Callee> = Vec::new();
    let mut read = 0;
    for (at, calls) in must_call.iter().enumerate() {
        let name = format!("{}-{index}-{at}", rng.pick(pools::GROUP_STEMS));
        let plan = Plan {
            name: name.clone(),
            local: &local,
            must_call: calls,
            allow_unsafe,
        };
        let built = group::group(rng, &plan);
        push_group(&mut out, at, &built.text);
        read |= built.inputs;
        if built.callable {
            local.push(Callee {
                target: name,
                inputs: built.inputs,
            });
        }
    }
    out.push_str(FOOTER);
    (out, read)
}

fn sequence_name(index: usize) -> String {
    format!("seq-{index:04}")
}

/// The sequences that sequence `index` calls: two of the next level, neighbours, so that the
/// callers of a pair share both callees (diamonds).
fn cross_targets(index: usize, sequences: usize) -> impl Iterator<Item = usize> {
    let level = index % LEVELS;
    let slot = index / LEVELS;
    let targets = if level + 1 < LEVELS {
        vec![slot, slot ^ 1]
    } else {
        Vec::new()
    };
    targets
        .into_iter()
        .map(move |s| s * LEVELS + level + 1)
        .filter(move |&callee| callee < sequences)
}

fn header(out: &mut String, name: &str, description: &str) {
    out.push_str("{\n  \"name\": ");
    text::push_string(out, name);
    out.push_str(",\n  \"description\": ");
    text::push_string(out, description);
    out.push_str(",\n  \"groups\": [\n");
}

fn push_group(out: &mut String, index: usize, group: &str) {
    if index > 0 {
        out.push_str(",\n");
    }
    out.push_str(group);
}

#[cfg(test)]
mod tests {
    use super::{batch, cross_targets, sequence_file};

    #[test]
    fn the_file_is_json_of_about_the_size_asked() {
        let text = sequence_file(50_000);
        assert!(
            (50_000..52_000).contains(&text.len()),
            "{} bytes",
            text.len()
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(value["groups"].as_array().unwrap().len() > 40);
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(sequence_file(20_000), sequence_file(20_000));
        assert_eq!(batch(12, 4), batch(12, 4));
    }

    #[test]
    fn cross_calls_go_one_level_down_in_pairs() {
        assert_eq!(cross_targets(0, 100).collect::<Vec<_>>(), vec![1, 6]);
        assert_eq!(cross_targets(5, 100).collect::<Vec<_>>(), vec![6, 1]);
        assert_eq!(cross_targets(3, 100).collect::<Vec<_>>(), vec![4, 9]);
        assert_eq!(cross_targets(4, 100).count(), 0);
        assert_eq!(cross_targets(95, 100).collect::<Vec<_>>(), vec![96, 91]);
        assert_eq!(cross_targets(95, 97).collect::<Vec<_>>(), vec![96, 91]);
        assert_eq!(cross_targets(0, 5).collect::<Vec<_>>(), vec![1]);
    }
}
