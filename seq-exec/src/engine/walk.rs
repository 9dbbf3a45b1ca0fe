//! One walk of a run report's tree, for every reader that shows it (the live view, the timeline,
//! the traces): the run's groups, each group's items, an `each` item's elements and the groups
//! a call item ran, with their items in turn.
//!
//! A reader implements [`ReportVisitor`] and says, as it enters a group or an item, whether to
//! go into it ([`Descend`]); the walk keeps the order and the depths.

use super::report::{
    CalledGroup, EachReport, ElementReport, GroupReport, GroupStatus, ItemReport, ItemStatus,
    RunReport,
};
use crate::error::ToolError;

/// Whether the walk goes into what a visitor just entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Descend {
    /// Its items (of a group), or its elements and called groups (of an item).
    Into,
    /// Not into it: its leave is still told, so enters and leaves pair.
    Over,
}

/// What a reader of the report does at each place of the walk; every method does nothing by
/// default. The order: a group's enter, then each item (its enter, its `each` elements, the
/// groups it called, its leave), then the group's leave.
pub trait ReportVisitor<'r> {
    fn enter_group(&mut self, _group: &GroupAt<'r>) -> Descend {
        Descend::Into
    }

    fn enter_item(&mut self, _item: &ItemAt<'r>) -> Descend {
        Descend::Into
    }

    fn element(&mut self, _element: &ElementAt<'r>) {}

    fn leave_item(&mut self, _item: &ItemAt<'r>) {}

    fn leave_group(&mut self, _group: &GroupAt<'r>) {}
}

/// A group the walk is at.
#[derive(Clone, Copy, Debug)]
pub struct GroupAt<'r> {
    pub group: GroupOf<'r>,
    /// The call depth: 0 for a run's group, 1 for a group one of its items called, and so on.
    pub depth: usize,
    /// Its place among the run's groups, or among the groups its call item ran.
    pub index: usize,
}

/// A group's report: one of the run's, or one a call item ran.
#[derive(Clone, Copy, Debug)]
pub enum GroupOf<'r> {
    Run(&'r GroupReport),
    Called(&'r CalledGroup),
}

impl<'r> GroupOf<'r> {
    pub fn name(self) -> &'r str {
        match self {
            GroupOf::Run(group) => &group.name,
            GroupOf::Called(group) => &group.name,
        }
    }

    /// The sequence of a `#name` call (without `#`); `None` for a group of the run's sequence
    /// or of its caller's.
    pub fn sequence(self) -> Option<&'r str> {
        match self {
            GroupOf::Run(_) => None,
            GroupOf::Called(group) => group.sequence.as_deref(),
        }
    }

    /// `#lib/probe` for a group of a `#name` call, else the group's name.
    pub fn qualified_name(self) -> String {
        match self.sequence() {
            Some(sequence) => format!("#{sequence}/{}", self.name()),
            None => self.name().to_owned(),
        }
    }

    pub fn status(self) -> GroupStatus {
        match self {
            GroupOf::Run(group) => group.status,
            GroupOf::Called(group) => group.status,
        }
    }

    pub fn parallel(self) -> bool {
        match self {
            GroupOf::Run(group) => group.parallel,
            GroupOf::Called(group) => group.parallel,
        }
    }

    pub fn started_ms(self) -> u64 {
        match self {
            GroupOf::Run(group) => group.started_ms,
            GroupOf::Called(group) => group.started_ms,
        }
    }

    pub fn duration_ms(self) -> u64 {
        match self {
            GroupOf::Run(group) => group.duration_ms,
            GroupOf::Called(group) => group.duration_ms,
        }
    }

    pub fn items(self) -> &'r [ItemReport] {
        match self {
            GroupOf::Run(group) => &group.items,
            GroupOf::Called(group) => &group.items,
        }
    }

    /// The items left out past the reported call depth (0 for a run's group).
    pub fn items_omitted(self) -> usize {
        match self {
            GroupOf::Run(_) => 0,
            GroupOf::Called(group) => group.items_omitted,
        }
    }

    pub fn error(self) -> Option<&'r ToolError> {
        match self {
            GroupOf::Run(group) => group.error.as_ref(),
            GroupOf::Called(group) => group.error.as_ref(),
        }
    }
}

/// An item the walk is at.
#[derive(Clone, Copy, Debug)]
pub struct ItemAt<'r> {
    pub item: &'r ItemReport,
    /// Its place in its group, from 0.
    pub index: usize,
    /// The call depth of its group.
    pub depth: usize,
}

/// An element of an `each` item the walk is at.
#[derive(Clone, Copy, Debug)]
pub struct ElementAt<'r> {
    pub element: &'r ElementReport,
    /// The report of the elements it is one of.
    pub each: &'r EachReport,
    /// Its place in `each.elements`.
    pub at: usize,
    /// Its place in the array (`$each_index`).
    pub index: usize,
    /// The call depth of its item's group.
    pub depth: usize,
}

impl RunReport {
    /// Walks the run's groups, in order, and everything in them.
    pub fn walk<'r, V: ReportVisitor<'r> + ?Sized>(&'r self, visitor: &mut V) {
        for (index, group) in self.groups.iter().enumerate() {
            walk_group(
                GroupAt {
                    group: GroupOf::Run(group),
                    depth: 0,
                    index,
                },
                visitor,
            );
        }
    }
}

impl ItemReport {
    /// Walks this item, item `index` of a group at call depth `depth`, and what it holds: what
    /// a reader told of one finished item (an [`Observer`](super::Observer)) shows of it.
    pub fn walk<'r, V: ReportVisitor<'r> + ?Sized>(
        &'r self,
        index: usize,
        depth: usize,
        visitor: &mut V,
    ) {
        let at = ItemAt {
            item: self,
            index,
            depth,
        };
        if visitor.enter_item(&at) == Descend::Into {
            if let Some(each) = &self.each {
                for (n, element) in each.elements.iter().enumerate() {
                    visitor.element(&ElementAt {
                        element,
                        each,
                        at: n,
                        index: element.index(n),
                        depth,
                    });
                }
            }
            for (index, called) in self.called.iter().enumerate() {
                walk_group(
                    GroupAt {
                        group: GroupOf::Called(called),
                        depth: depth + 1,
                        index,
                    },
                    visitor,
                );
            }
        }
        visitor.leave_item(&at);
    }
}

/// A group of the run at any call depth, with where it was called from: what a reader that
/// lists the run's failures goes through.
#[derive(Clone, Debug)]
pub struct Placed<'r> {
    pub at: GroupAt<'r>,
    /// The stored sequence the group belongs to (`None`: the run's own): its own, or for a
    /// group a `#name` sequence called within itself, its caller's.
    pub sequence: Option<&'r str>,
    /// The name (as [`Placed::name`] writes it) of the group whose item called this one;
    /// `None` for a run's group.
    pub caller: Option<String>,
}

impl Placed<'_> {
    /// `#lib/probe` for a group of a stored sequence, else the group's name.
    pub fn name(&self) -> String {
        let name = self.at.group.name();
        match self.sequence {
            Some(sequence) => format!("#{sequence}/{name}"),
            None => name.to_owned(),
        }
    }

    /// ``group `probe` `` for a run's group, ``group `probe` (called from `main`)`` for a
    /// called one.
    pub fn described(&self) -> String {
        match &self.caller {
            Some(caller) => format!("group `{}` (called from `{caller}`)", self.name()),
            None => format!("group `{}`", self.name()),
        }
    }

    /// Whether the failure of `item`, one of this group's, is to be told here. A run's group's
    /// failures all are. A called group's are when the group tolerated them (a caught item, or
    /// a failed one of a `partial` group): one it did not tolerate failed the call item, whose
    /// error tells it.
    pub fn tells(&self, item: &ItemReport) -> bool {
        if self.at.depth == 0 {
            return true;
        }
        match item.status {
            ItemStatus::Caught => true,
            ItemStatus::Failed => self.at.group.status() == GroupStatus::Partial,
            ItemStatus::Ok | ItemStatus::Skipped | ItemStatus::Degraded | ItemStatus::Cancelled => {
                false
            }
        }
    }
}

/// Collects [`Placed`] groups: the groups being walked, innermost last, are the callers.
#[derive(Default)]
struct Placing<'r> {
    placed: Vec<Placed<'r>>,
    /// The index in `placed` of each group the walk is in.
    open: Vec<usize>,
}

impl<'r> ReportVisitor<'r> for Placing<'r> {
    fn enter_group(&mut self, at: &GroupAt<'r>) -> Descend {
        let caller = self.open.last().map(|&i| &self.placed[i]);
        let placed = Placed {
            at: *at,
            sequence: at.group.sequence().or(caller.and_then(|c| c.sequence)),
            caller: caller.map(Placed::name),
        };
        self.open.push(self.placed.len());
        self.placed.push(placed);
        Descend::Into
    }

    fn leave_group(&mut self, _group: &GroupAt<'r>) {
        self.open.pop();
    }
}

impl RunReport {
    /// Every group of the run, those its items called too, at every depth, in the walk's order
    /// (a group before the groups its items called).
    pub fn placed_groups(&self) -> Vec<Placed<'_>> {
        let mut placing = Placing::default();
        self.walk(&mut placing);
        placing.placed
    }
}

fn walk_group<'r, V: ReportVisitor<'r> + ?Sized>(at: GroupAt<'r>, visitor: &mut V) {
    if visitor.enter_group(&at) == Descend::Into {
        for (index, item) in at.group.items().iter().enumerate() {
            item.walk(index, at.depth, visitor);
        }
    }
    visitor.leave_group(&at);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    /// Writes down what the walk tells, one line a place.
    #[derive(Default)]
    struct Told(Vec<String>);

    impl<'r> ReportVisitor<'r> for Told {
        fn enter_group(&mut self, group: &GroupAt<'r>) -> Descend {
            let name = group.group.qualified_name();
            self.0
                .push(format!("enter {name} d{} #{}", group.depth, group.index));
            if group.group.status() == GroupStatus::Skipped {
                Descend::Over
            } else {
                Descend::Into
            }
        }

        fn enter_item(&mut self, item: &ItemAt<'r>) -> Descend {
            self.0.push(format!(
                "item {} d{} #{}",
                item.item.tool, item.depth, item.index
            ));
            Descend::Into
        }

        fn element(&mut self, element: &ElementAt<'r>) {
            self.0.push(format!(
                "element {} at {} d{}",
                element.index, element.at, element.depth
            ));
        }

        fn leave_item(&mut self, item: &ItemAt<'r>) {
            self.0.push(format!("leave item {}", item.item.tool));
        }

        fn leave_group(&mut self, group: &GroupAt<'r>) {
            self.0.push(format!("leave {}", group.group.name()));
        }
    }

    /// A run whose first group calls a group of `#lib` and one of its own sequence (skipped),
    /// then an `each`; its second group skipped.
    fn report() -> RunReport {
        serde_json::from_value(serde_json::json!({
            "ok": true, "out": {},
            "groups": [
                {"name": "a", "status": "ran", "parallel": false, "duration_ms": 1,
                 "items": [
                    {"tool": "seq_call", "status": "ok", "called": [
                        {"name": "b", "sequence": "lib", "status": "ran", "parallel": false,
                         "duration_ms": 1, "items": [{"tool": "echo", "status": "ok"}]},
                        {"name": "c", "status": "skipped", "parallel": false, "duration_ms": 0,
                         "items": [{"tool": "hidden", "status": "skipped"}]}]},
                    {"tool": "each", "status": "ok", "each": {"count": 2, "ok": 2,
                     "elements": [{"status": "ok", "duration_ms": 1},
                                  {"index": 7, "status": "ok", "duration_ms": 1}]}}]},
                {"name": "z", "status": "skipped", "parallel": false, "duration_ms": 0,
                 "items": []}]
        }))
        .unwrap()
    }

    #[test]
    fn the_walk_tells_every_place_in_order_with_its_depth() {
        let report = report();
        let mut told = Told::default();
        report.walk(&mut told);
        assert_eq!(
            told.0,
            [
                "enter a d0 #0",
                "item seq_call d0 #0",
                "enter #lib/b d1 #0",
                "item echo d1 #0",
                "leave item echo",
                "leave b",
                "enter c d1 #1",
                "leave c",
                "leave item seq_call",
                "item each d0 #1",
                "element 0 at 0 d0",
                "element 7 at 1 d0",
                "leave item each",
                "leave a",
                "enter z d0 #1",
                "leave z",
            ]
        );
    }

    #[test]
    fn placed_groups_name_their_callers_and_inherit_the_sequence() {
        let mut report = report();
        // `#lib/b`'s item calls a group of `#lib` too: it says no sequence of its own.
        let d: CalledGroup = serde_json::from_value(serde_json::json!(
            {"name": "d", "status": "ran", "parallel": false, "duration_ms": 0, "items": []}
        ))
        .unwrap();
        report.groups[0].items[0].called[0].items[0].called.push(d);
        let placed: Vec<(String, usize, Option<String>)> = report
            .placed_groups()
            .iter()
            .map(|p| (p.described(), p.at.depth, p.sequence.map(str::to_owned)))
            .collect();
        assert_eq!(
            placed,
            [
                ("group `a`".to_owned(), 0, None),
                (
                    "group `#lib/b` (called from `a`)".to_owned(),
                    1,
                    Some("lib".to_owned())
                ),
                (
                    "group `#lib/d` (called from `#lib/b`)".to_owned(),
                    2,
                    Some("lib".to_owned())
                ),
                ("group `c` (called from `a`)".to_owned(), 1, None),
                ("group `z`".to_owned(), 0, None),
            ]
        );
    }

    /// Every time the walk reaches, as `(started_ms, duration_ms)`.
    #[derive(Default)]
    struct Times(Vec<(u64, u64)>);

    impl<'r> ReportVisitor<'r> for Times {
        fn enter_group(&mut self, group: &GroupAt<'r>) -> Descend {
            self.0
                .push((group.group.started_ms(), group.group.duration_ms()));
            Descend::Into
        }

        fn enter_item(&mut self, item: &ItemAt<'r>) -> Descend {
            let item = item.item;
            self.0.push((item.started_ms, item.duration_ms));
            self.0
                .extend(item.attempts.iter().map(|a| (a.started_ms, a.duration_ms)));
            Descend::Into
        }

        fn element(&mut self, element: &ElementAt<'r>) {
            let element = element.element;
            self.0.push((element.started_ms, element.duration_ms));
        }
    }

    /// `untimed` writes what the walk reads, so it clears every time the walk reaches.
    #[test]
    fn untimed_clears_every_time_the_walk_reaches() {
        let mut times = Times::default();
        report().walk(&mut times);
        assert!(times.0.iter().any(|&t| t != (0, 0)), "{:?}", times.0);
        let mut times = Times::default();
        report().untimed().walk(&mut times);
        assert!(times.0.iter().all(|&t| t == (0, 0)), "{:?}", times.0);
    }
}
