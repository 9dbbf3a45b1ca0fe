//! The call stack of a run: the sequences and groups being executed, carried into every nested
//! call so that the call bounds hold at run time even when stored sequences changed after
//! they were checked.
//!
//! A persistent list: concurrent items of a parallel group share their parent's frames, and
//! each call pushes onto its own copy in O(1).
//!
//! A durable driver runs a `#name` call elsewhere (another invocation, maybe another worker):
//! the stack travels with it, as the list of its frames from the bottom, so that the bounds
//! hold across invocations.
//!
//! A sequence's frame also holds its owner, when it was stored by one: the rights of every
//! dispatch are the caller's intersected with those of every owner on the stack
//! ([`Stack::owners`]), so that a stored sequence never does more than its author may.

use crate::error::{Reason, ToolError};
use seq_syntax::names::CallTarget;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

/// The sequences and groups running, from the bottom of a run to the innermost.
#[derive(Clone, Debug, Default)]
pub struct Stack(Option<Arc<Frame>>);

#[derive(Debug)]
struct Frame {
    kind: Kind,
    /// Who stored the sequence of a sequence frame (`None`: ownerless, or a group frame).
    owner: Option<String>,
    parent: Stack,
}

/// A frame as it travels: its kind, and the owner of a sequence frame.
#[derive(Serialize, Deserialize)]
struct Wire<K> {
    #[serde(flatten)]
    kind: K,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Sequence(String),
    Group { sequence: String, group: String },
}

impl Stack {
    /// Enters `#name`: an error of reason `cycle` when `name` is already on the stack, of reason
    /// `depth` when more than `max_depth` cross-sequence calls would be nested. The bottom
    /// sequence (the one `seq_run` runs) is not a call: it is at depth 0.
    /// `owner`: who stored it, whose rights bound every dispatch above it.
    pub(crate) fn enter_sequence(
        &self,
        name: &str,
        owner: Option<&str>,
        max_depth: u32,
    ) -> Result<Stack, ToolError> {
        let kind = Kind::Sequence(name.to_owned());
        if self.frames().any(|f| f.kind == kind) {
            return Err(ToolError::new(
                Reason::Cycle,
                format!("`#{name}` is already running: {}", self.path_to(&kind)),
            )
            .with_hint("a sequence must not call itself, also not through others; stored sequences changed since this one was checked"));
        }
        let calls = self
            .frames()
            .filter(|f| matches!(f.kind, Kind::Sequence(_)))
            .count();
        if u32::try_from(calls).unwrap_or(u32::MAX) > max_depth {
            return Err(ToolError::new(
                Reason::Depth,
                format!(
                    "calling `#{name}` would nest {calls} cross-sequence calls, more than {max_depth}: {}",
                    self.path_to(&kind)
                ),
            )
            .with_hint(format!("at most {max_depth} `#sequence` calls may be nested; flatten the chain")));
        }
        Ok(self.push(kind, owner.map(str::to_owned)))
    }

    /// Enters group `group` of `sequence`: an error of reason `cycle` when it is already on the
    /// stack. Group calls do not count towards the depth bound, so without this guard a stored
    /// sequence with a cycle between its groups would never end. An error of reason `depth`
    /// when `max_groups` groups are running already, one calling the next: every nested call
    /// is a frame of the future being polled, and a chain without bound would overflow the
    /// thread's stack.
    pub(crate) fn enter_group(
        &self,
        sequence: &str,
        group: &str,
        max_groups: u32,
    ) -> Result<Stack, ToolError> {
        let kind = Kind::Group {
            sequence: sequence.to_owned(),
            group: group.to_owned(),
        };
        let running = self
            .frames()
            .filter(|f| matches!(f.kind, Kind::Group { .. }))
            .count();
        if u32::try_from(running).unwrap_or(u32::MAX) >= max_groups {
            return Err(ToolError::new(
                Reason::Depth,
                format!(
                    "entering group `{group}` would nest more than {max_groups} running groups: {}",
                    self.path_to(&kind)
                ),
            )
            .with_hint(format!(
                "at most {max_groups} calls may be nested, groups and sequences together; \
                 flatten the chain of calls"
            )));
        }
        if self.frames().any(|f| f.kind == kind) {
            return Err(ToolError::new(
                Reason::Cycle,
                format!(
                    "group `{group}` is already running: {}",
                    self.path_to(&kind)
                ),
            )
            .with_hint("groups of a sequence must not call each other in a cycle"));
        }
        Ok(self.push(kind, None))
    }

    fn push(&self, kind: Kind, owner: Option<String>) -> Stack {
        Stack(Some(Arc::new(Frame {
            kind,
            owner,
            parent: self.clone(),
        })))
    }

    /// The owned sequences on the stack, from the bottom, as `(sequence, owner)`: whose rights
    /// bound a dispatch made here, besides the caller's.
    pub fn owners(&self) -> Vec<(&str, &str)> {
        let mut owners: Vec<(&str, &str)> = self
            .frames()
            .filter_map(|f| match (&f.kind, &f.owner) {
                (Kind::Sequence(name), Some(owner)) => Some((name.as_str(), owner.as_str())),
                (Kind::Sequence(_), None) | (Kind::Group { .. }, _) => None,
            })
            .collect();
        owners.reverse();
        owners
    }

    /// The innermost group being run.
    pub(crate) fn innermost_group(&self) -> Option<&str> {
        self.frames().find_map(|f| match &f.kind {
            Kind::Group { group, .. } => Some(group.as_str()),
            Kind::Sequence(_) => None,
        })
    }

    /// How many groups are running, one calling the next: the call depth of a group this
    /// stack's innermost group calls.
    pub fn groups(&self) -> usize {
        self.frames()
            .filter(|f| matches!(f.kind, Kind::Group { .. }))
            .count()
    }

    /// `#a/g/#b/h`: the stack from the bottom, joined by `/`.
    pub(crate) fn path(&self) -> String {
        let mut names: Vec<String> = self.frames().map(|f| f.kind.name()).collect();
        names.reverse();
        names.join("/")
    }

    /// Innermost first.
    fn frames(&self) -> impl Iterator<Item = &Frame> {
        std::iter::successors(self.0.as_deref(), |f| f.parent.0.as_deref())
    }

    /// `#a → g → #b → h`: the stack from the bottom, then `next`.
    fn path_to(&self, next: &Kind) -> String {
        let mut names: Vec<String> = self.frames().map(|f| f.kind.name()).collect();
        names.reverse();
        names.push(next.name());
        names.join(" → ")
    }
}

impl Kind {
    fn name(&self) -> String {
        match self {
            Kind::Sequence(name) => CallTarget::Sequence(name).to_string(),
            Kind::Group { group, .. } => group.clone(),
        }
    }
}

/// Written as its frames from the bottom: `[{"sequence": "a", "owner": "bob"}, {"group":
/// {"sequence": "a", "group": "g"}}]`.
impl Serialize for Stack {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut frames: Vec<Wire<&Kind>> = self
            .frames()
            .map(|f| Wire {
                kind: &f.kind,
                owner: f.owner.clone(),
            })
            .collect();
        frames.reverse();
        frames.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Stack {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Stack, D::Error> {
        let frames = Vec::<Wire<Kind>>::deserialize(deserializer)?;
        Ok(frames
            .into_iter()
            .fold(Stack::default(), |stack, f| stack.push(f.kind, f.owner)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    /// A stack sent to another invocation keeps its frames, and so its bounds: the sequence
    /// on it is still a cycle, and its calls still count towards the depth.
    #[test]
    fn a_stack_read_back_keeps_its_bounds() {
        let stack = Stack::default()
            .enter_sequence("a", Some("alice"), 4)
            .and_then(|s| s.enter_group("a", "g", 32))
            .and_then(|s| s.enter_sequence("b", Some("bob"), 4))
            .unwrap();
        let text = serde_json::to_string(&stack).unwrap();
        let back: Stack = serde_json::from_str(&text).unwrap();
        assert_eq!(back.path(), "#a/g/#b");
        // The owners travel too: a called run elsewhere keeps its authors' limits.
        assert_eq!(back.owners(), [("a", "alice"), ("b", "bob")]);
        assert_eq!(
            back.enter_sequence("a", None, 4).unwrap_err().reason,
            Reason::Cycle
        );
        assert_eq!(
            back.enter_sequence("c", None, 1).unwrap_err().reason,
            Reason::Depth
        );
        assert!(back.enter_sequence("c", None, 4).is_ok());
    }
}
