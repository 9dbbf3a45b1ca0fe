//! The checker of tool sequences: static rules, types and the call graph.
