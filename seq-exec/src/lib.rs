//! The engine that runs checked tool sequences.
