//! What an attempt that produced no value says, and the errors the engine's modules share:
//! a leaf, so that the modules of a run need not import each other for them.

use super::report::GroupReport;
use super::within;
use crate::error::{Reason, ToolError};

/// Why one attempt at an item produced no value.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    pub error: ToolError,
    /// The item's own tool, or its call's target, is not there: the group's `missing` policy
    /// decides, not `on_error`. A `not_found` that comes back from inside
    /// a call is an ordinary failure of the call.
    pub missing: bool,
}

impl Failure {
    pub fn error(error: ToolError) -> Failure {
        Failure {
            error,
            missing: false,
        }
    }

    pub fn missing(error: ToolError) -> Failure {
        Failure {
            error,
            missing: true,
        }
    }
}

impl From<ToolError> for Failure {
    fn from(error: ToolError) -> Failure {
        Failure::error(error)
    }
}

/// The error of whatever the run's cancellation stopped.
pub(crate) fn cancelled_error() -> ToolError {
    ToolError::new(Reason::Cancelled, "the run was cancelled")
}

/// The failure of a call to a group whose report says it failed.
pub(crate) fn failure_of(report: &GroupReport, context: &str) -> Failure {
    let error = report.error.clone().unwrap_or_else(|| {
        ToolError::new(Reason::Failed, format!("group `{}` failed", report.name))
    });
    Failure::error(within(error, context))
}
