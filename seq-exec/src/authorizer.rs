//! The one answer to "may this caller do this": [`Authorizer`], asked by the engine at every
//! dispatch, for tools and for rights alike.
//!
//! A host says what it offers and nothing else; who may use it is asked here. The rights a
//! dispatch needs ([`rights`]: `seq_call` for `seq_when_call`, `seq_run` for a `#name` target)
//! are asked the same way as the tool itself, whatever host offers the tool, and whether or not
//! one does. An authorizer is one policy, or several held together ([`Authorizer::within`]): a
//! worker's own policy bounds every run it executes, intersected with the policy that travelled
//! with the run. A refusal is one [`ToolError`] ([`Authorizer::refusal`]), `unauthorized`, in
//! one wording at every door.

use crate::error::{Reason, ToolError};
use crate::host::Caller;
use crate::policy::{Policy, rights};
use serde_json::Value;
use std::sync::Arc;

/// The policy every dispatch is held to (module comment). Cheap to clone: the policies are
/// shared.
#[derive(Clone, Debug, Default)]
pub struct Authorizer {
    /// The policy of the door that serves the run (its `effective_for`, its store permission).
    policy: Arc<Policy>,
    /// Further policies every answer is held to as well: a worker's run's travelling one.
    bounds: Vec<Arc<Policy>>,
}

impl Authorizer {
    /// Allows every tool and right to every caller: for embedders and tests that need no
    /// policy.
    pub fn allow_all() -> Authorizer {
        Authorizer::default()
    }

    /// Holds every dispatch to `policy`.
    pub fn new(policy: impl Into<Arc<Policy>>) -> Authorizer {
        Authorizer {
            policy: policy.into(),
            bounds: Vec::new(),
        }
    }

    /// This authorizer held besides to `bound`: a caller may do what both allow.
    pub fn within(&self, bound: impl Into<Arc<Policy>>) -> Authorizer {
        let mut held = self.clone();
        held.bounds.push(bound.into());
        held
    }

    /// The door's own policy (not its bounds): what travels with a durable run
    /// ([`Policy::effective_for`]) and who holds the store permission.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    fn policies(&self) -> impl Iterator<Item = &Policy> {
        std::iter::once(self.policy.as_ref()).chain(self.bounds.iter().map(Arc::as_ref))
    }

    /// Whether `caller` may use the tool or right `name`, by every policy held.
    pub fn allows(&self, caller: &Caller, name: &str) -> bool {
        self.policies().all(|policy| policy.allows(caller, name))
    }

    /// The first right a dispatch of `tool` with `args` needs ([`rights`]) that `caller` lacks.
    pub fn missing<'t>(&self, caller: &Caller, tool: &'t str, args: &Value) -> Option<&'t str> {
        rights(tool, args)
            .into_iter()
            .find(|right| !self.allows(caller, right))
    }

    /// How to turn on those of `tools` that are off ([`Policy::turn_on_hint`]), by the first
    /// policy that has any off.
    pub fn turn_on_hint(&self, tools: &[&str]) -> Option<String> {
        self.policies()
            .find_map(|policy| policy.turn_on_hint(tools))
    }

    /// The refusal of `name` to `caller`: the one wording of a refusal, at every door.
    pub fn refusal(&self, caller: &Caller, name: &str) -> ToolError {
        let hint = self.turn_on_hint(&[name]).unwrap_or_else(|| {
            "a sequence can only use the tools its caller may use; ask for access, or remove the \
             tool from the sequence"
                .to_owned()
        });
        ToolError::new(
            Reason::Unauthorized,
            format!("caller `{}` may not use `{name}`", caller.id),
        )
        .with_field("tool")
        .with_hint(hint)
    }

    /// The refusal of `name` to `owner`, who stored the sequence `sequence` on the stack.
    pub fn refusal_to_owner(&self, sequence: &str, owner: &Caller, name: &str) -> ToolError {
        let hint = self.turn_on_hint(&[name]).unwrap_or_else(|| {
            "a stored sequence runs with no more than the rights of the caller who stored it; \
             ask its owner to remove the tool, or run a sequence of your own"
                .to_owned()
        });
        ToolError::new(
            Reason::Unauthorized,
            format!(
                "`#{sequence}` was stored by `{}`, who may not use `{name}`",
                owner.id
            ),
        )
        .with_field("tool")
        .with_hint(hint)
    }
}

impl From<Policy> for Authorizer {
    fn from(policy: Policy) -> Authorizer {
        Authorizer::new(policy)
    }
}

impl From<Arc<Policy>> for Authorizer {
    fn from(policy: Arc<Policy>) -> Authorizer {
        Authorizer::new(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::{Authorizer, Caller, Policy};
    use serde_json::json;

    /// A bound narrows: a worker denying `seq_call` refuses it whatever the run's policy says,
    /// and `seq_run` of a `#name` target likewise.
    #[test]
    fn a_bound_holds_rights_as_tools() {
        let worker = Authorizer::new(Policy::allow_all().deny("seq_call").deny("seq_run"));
        let run = worker.within(Policy::allow_all().allow("*"));
        let caller = Caller::new("mallory");
        assert_eq!(
            run.missing(&caller, "seq_call", &json!({"target": "g"})),
            Some("seq_call")
        );
        assert_eq!(
            run.missing(&caller, "seq_when_call", &json!({"target": "g"})),
            Some("seq_when_call")
        );
        let open = Authorizer::allow_all().within(Policy::allow_all().deny("seq_run"));
        assert_eq!(
            open.missing(&caller, "seq_call", &json!({"target": "#x"})),
            Some("seq_run")
        );
        assert_eq!(
            open.missing(&caller, "seq_call", &json!({"target": "g"})),
            None
        );
    }
}
