#![allow(clippy::unwrap_used)]
use std::sync::Arc;
use std::time::Instant;
fn main() {
    let text = seq_gen::sequence_file(1 << 20);
    let catalog = Arc::new(seq_check::Catalog::builtin());
    for _ in 0..3 {
        let t = Instant::now();
        let idx = seq_syntax::LineIndex::new(&text);
        let a = t.elapsed();
        let t = Instant::now();
        let s = seq_lsp::is_sequence_document(&text);
        let b = t.elapsed();
        let t = Instant::now();
        let p = seq_syntax::parse(&text);
        let c = t.elapsed();
        let t = Instant::now();
        let an = seq_lsp::ide::Analysis::new(vec![("a".into(), text.clone())], catalog.clone());
        let d = t.elapsed();
        let t = Instant::now();
        drop(an);
        drop(p);
        let e = t.elapsed();
        println!("lineindex {a:?} detect {b:?} ({s}) parse {c:?} analysis(check) {d:?} drop {e:?} lines {}", idx.line_count());
    }
}
