//! The language server for tool sequences.
