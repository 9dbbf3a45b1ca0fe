use super::*;

/// Checks that every character of the unescaped text maps to exactly the raw bytes that
/// produced it, listed in `producers` in order.
fn assert_maps(body: &str, base: u32, producers: &[&str]) {
    let (unescaped, lone) = unescape(body, base);
    assert!(lone.is_empty());
    let chars: Vec<(usize, char)> = unescaped.text.char_indices().collect();
    assert_eq!(chars.len(), producers.len(), "{:?}", unescaped.text);
    for (&(i, ch), producer) in chars.iter().zip(producers) {
        let span = unescaped.map.span(Span::from_range(i..i + ch.len_utf8()));
        let raw = &body[(span.start - base) as usize..(span.end - base) as usize];
        assert_eq!(raw, *producer, "character {ch:?} at {i}");
    }
    let end = unescaped.map.to_raw(offset(unescaped.text.len()));
    assert_eq!(end, base + offset(body.len()));
}

#[test]
fn dense_maps_agree_with_sparse_ones_at_every_offset() {
    let bodies = [
        "",
        "plain",
        r#"{\"tool\":\"echo\",\"args\":{\"v\":\"a\\\"b\"}} ;"#,
        r"\u00e9\u4e3b\ud83d\ude00x\n",
        r"\ud800 lone \x kept",
    ];
    // Left over from an earlier text: nothing of it may show.
    let mut buffers = DenseBuffers {
        text: vec![7; 3],
        map: vec![7; 3],
    };
    for body in bodies {
        let (unescaped, lone) = unescape(body, 40);
        let (text, dense, dense_lone) = unescape_dense(body, 40, &mut buffers);
        let len = offset(unescaped.text.len());
        assert_eq!((text, dense_lone), (unescaped.text.clone(), lone));
        for i in 0..len + 4 {
            assert_eq!(dense.to_raw(i), unescaped.map.to_raw(i), "{body:?} at {i}");
        }
    }
}

/// Below the bound the map is spelled out, above it the sparse one is kept: either way
/// `unescape_text` gives what `unescape` gives, also with buffers left over from a text of
/// the other kind.
#[test]
fn text_maps_agree_with_unescape_on_both_sides_of_the_dense_bound() {
    let unit = r#"{\"k\":\"\u00e9\"} ;"#;
    let long = unit.repeat(DENSE_MAP_BYTES / unit.len() + 1);
    assert!(long.len() > DENSE_MAP_BYTES);
    let mut buffers = TextBuffers::default();
    for body in [unit, &long, unit] {
        let (unescaped, lone) = unescape(body, 9);
        let (text, map, text_lone) = unescape_text(body, 9, &mut buffers);
        assert_eq!((&text, &text_lone), (&unescaped.text, &lone));
        for i in (0..offset(text.len()) + 3).step_by(5) {
            assert_eq!(map.to_raw(i), unescaped.map.to_raw(i), "at {i}");
        }
    }
}

proptest::proptest! {
    /// Bodies of every length around the word size, escapes at every position in a word.
    #[test]
    fn dense_and_sparse_maps_agree_on_generated_bodies(
        parts in proptest::collection::vec(
            proptest::sample::select(&[
                "a", "bc", "主", "\\\"", "\\\\", "\\n", "\\/", "\\u00e9", "\\ud83d\\ude00",
                "\\ud800", "\\x", "\\u12", "{\\\"k\\\":1}", " ;",
            ][..]),
            0..40,
        ),
        base in 0u32..1000,
    ) {
        let body = parts.concat();
        let (unescaped, lone) = unescape(&body, base);
        let mut buffers = DenseBuffers::default();
        let (text, dense, dense_lone) = unescape_dense(&body, base, &mut buffers);
        proptest::prop_assert_eq!(&text, &unescaped.text);
        proptest::prop_assert_eq!(&dense_lone, &lone);
        for i in 0..offset(text.len()) + 3 {
            proptest::prop_assert_eq!(dense.to_raw(i), unescaped.map.to_raw(i), "{:?} at {}", body, i);
        }
    }
}

#[test]
fn without_backslash_borrows_with_the_identity_map() {
    let (unescaped, lone) = unescape("plain 主机 text", 7);
    assert!(matches!(unescaped.text, Cow::Borrowed("plain 主机 text")));
    assert_eq!(unescaped.map, OffsetMap::identity(7));
    assert!(lone.is_empty());
    assert_eq!(unescape("", 3).0.map.to_raw(0), 3);
}

#[test]
fn simple_escapes() {
    let (unescaped, _) = unescape(r#"a\"b\\c\/d\be\ff\ng\rh\ti"#, 0);
    assert_eq!(unescaped.text, "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti");
    assert_maps(r#"a\"b"#, 10, &["a", r#"\""#, "b"]);
    assert_maps(r#"\\\\"#, 0, &[r"\\", r"\\"]);
    assert_maps(r"x\ny\n", 4, &["x", r"\n", "y", r"\n"]);
}

#[test]
fn unicode_escapes_map_multibyte_characters() {
    let body = r"caf\u00e9 \u4e3b\u673a!";
    let (unescaped, _) = unescape(body, 0);
    assert_eq!(unescaped.text, "café 主机!");
    assert_maps(
        body,
        2,
        &["c", "a", "f", r"\u00e9", " ", r"\u4e3b", r"\u673a", "!"],
    );
    assert_maps(r"\u0041\u00E9", 0, &[r"\u0041", r"\u00E9"]);
}

#[test]
fn surrogate_pairs_are_one_character_from_twelve_bytes() {
    let body = r"a\uD83D\uDE00b";
    let (unescaped, lone) = unescape(body, 0);
    assert_eq!(unescaped.text, "a😀b");
    assert!(lone.is_empty());
    assert_maps(body, 5, &["a", r"\uD83D\uDE00", "b"]);
}

#[test]
fn mixed_raw_unicode_and_escapes() {
    let body = r#"主 \"x\" é\u00e9\n\uD83D\uDE00😀"#;
    assert_maps(
        body,
        100,
        &[
            "主",
            " ",
            r#"\""#,
            "x",
            r#"\""#,
            " ",
            "é",
            r"\u00e9",
            r"\n",
            r"\uD83D\uDE00",
            "😀",
        ],
    );
}

#[test]
fn lone_surrogates_become_replacement_characters_and_are_reported() {
    let body = r"a\uD800b\uDC00\uD83D\u0041\uD83D";
    let (unescaped, lone) = unescape(body, 10);
    assert_eq!(unescaped.text, "a\u{FFFD}b\u{FFFD}\u{FFFD}A\u{FFFD}");
    let spans: Vec<&str> = lone
        .iter()
        .map(|l| &body[(l.span.start - 10) as usize..(l.span.end - 10) as usize])
        .collect();
    assert_eq!(spans, [r"\uD800", r"\uDC00", r"\uD83D", r"\uD83D"]);
    assert_eq!(lone[0].span, Span::new(11, 17));
    assert_maps_lossy(body, 10);
}

/// Every character's span maps to a non-empty, ordered raw range.
fn assert_maps_lossy(body: &str, base: u32) {
    let (unescaped, _) = unescape(body, base);
    let mut last = base;
    for (i, ch) in unescaped.text.char_indices() {
        let span = unescaped.map.span(Span::from_range(i..i + ch.len_utf8()));
        assert_eq!(span.start, last);
        assert!(span.end > span.start);
        last = span.end;
    }
    assert_eq!(last, base + offset(body.len()));
}

#[test]
fn malformed_escapes_stay_literal_without_panicking() {
    for body in [
        r"\",
        r"a\",
        r"\x",
        r"\u12",
        r"\u12G4z",
        r"\uD83D\u",
        "\\\u{e9}",
        r"\\\",
    ] {
        let (unescaped, _) = unescape(body, 0);
        assert!(unescaped.text.contains('\\'), "{body:?}");
        assert_maps_lossy(body, 0);
    }
    assert_eq!(unescape(r"a\x\n", 0).0.text, "a\\x\n");
    assert_maps(r"a\x\n", 0, &["a", r"\", "x", r"\n"]);
}

/// A word inside a string inside the `tools` string maps through both unescapes to its bytes
/// in the file.
#[test]
fn composed_maps_reach_the_file() {
    let item = r#"{"tool":"cmd_run","args":{"command":"say \"hi\" to 主机 caf\u00e9\n"}} ;"#;
    let tools = serde_json::to_string(item).expect("a str serializes");
    let file = format!(r#"{{"name":"demo","groups":[{{"name":"g","tools":{tools}}}]}}"#);
    let tools_start = file.find(&tools).expect("the tools string is in the file") + 1;
    let tools_body = &tools[1..tools.len() - 1];
    let outer = unescape(tools_body, offset(tools_start)).0;
    assert_eq!(outer.text, item);

    let command = r#"say \"hi\" to 主机 caf\u00e9\n"#;
    let command_start = outer
        .text
        .find(command)
        .expect("the command is in the item");
    let inner = unescape(command, offset(command_start)).0;
    assert_eq!(inner.text, "say \"hi\" to 主机 café\n");

    let map = Composed {
        inner: &inner.map,
        outer: &outer.map,
    };
    let in_file = |needle: &str| {
        let at = inner
            .text
            .find(needle)
            .expect("the needle is in the command");
        let span = map.span(Span::from_range(at..at + needle.len()));
        &file[span.range()]
    };
    for word in ["say", "hi", "to", "主机", "caf"] {
        assert_eq!(in_file(word), word);
    }
    assert_eq!(in_file("\"hi\""), r#"\\\"hi\\\""#);
    assert_eq!(in_file("é"), r"\\u00e9");
    assert_eq!(in_file("\n"), r"\\n");
    assert_eq!(in_file("café\n"), r"caf\\u00e9\\n");
}

#[test]
fn escape_is_the_inverse_of_unescape() {
    for text in [
        "plain",
        "say \"hi\"",
        "back\\slash",
        "line\nbreak\ttab",
        "\u{1}ctl",
        "主机 😀",
    ] {
        let escaped = escape(text);
        let (back, lone) = unescape(&escaped, 0);
        assert!(lone.is_empty());
        assert_eq!(back.text, text, "through {escaped:?}");
    }
}
