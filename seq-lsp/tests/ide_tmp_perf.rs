#![allow(clippy::unwrap_used)]
use seq_check::Catalog;
use seq_lsp::ide::{Analysis, FileId, is_sequence_document};
use std::sync::Arc;
use std::time::Instant;

#[test]
fn perf() {
    let text = seq_gen::sequence_file(1 << 20);
    let t = Instant::now();
    assert!(is_sequence_document(&text));
    eprintln!("detect {:?}", t.elapsed());
    let t = Instant::now();
    let a = Analysis::new(vec![("a.json".into(), text.clone())], Arc::new(Catalog::builtin()));
    eprintln!("new {:?}", t.elapsed());
    let t = Instant::now();
    let toks = a.semantic_tokens(FileId(0));
    eprintln!("tokens {:?} {}", t.elapsed(), toks.len());
    let at = text.find("$args.").unwrap() as u32 + 7;
    let t = Instant::now();
    let h = a.hover(FileId(0), at);
    eprintln!("hover (index) {:?} {:?}", t.elapsed(), h.map(|h| h.span));
    let t = Instant::now();
    let r = a.references(FileId(0), at, true);
    eprintln!("refs {:?} {}", t.elapsed(), r.len());
    let t = Instant::now();
    let c = a.completion(FileId(0), at);
    eprintln!("completion {:?} {}", t.elapsed(), c.len());
    let t = Instant::now();
    let s = a.document_symbols(FileId(0));
    eprintln!("symbols {:?} {}", t.elapsed(), s.len());
}
