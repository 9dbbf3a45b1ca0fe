//! Texts that are plain and texts that are not; each plain one read by the parser as well.

use super::plain;
use crate::escape::OffsetMap;
use crate::template::parse_template;

/// Whether `text` is plain; where it is, the parser must read each reference as the scan.
fn is_plain(text: &str) -> bool {
    let parts = parse_template(text, &OffsetMap::default()).0.parts;
    let plain = plain(&parts);
    if plain {
        assert_eq!(
            super::super::scan(&parts),
            super::super::scan_parsed(&parts),
            "{text}"
        );
    }
    plain
}

#[test]
fn plain_and_not() {
    for text in [
        "grep -rn $args.p $args.dir | head -n 20",
        "cd $args.repo && git log -- \"$args.path\"",
        "echo a > $args.f 2>&1; ls >>f &",
        "a ||\n b $args.v # c\n",
        "sh -c 'echo \"$1\" | tr a-z A-Z' sh $args.text",
        "find . -name '*.rs' -newer \"$args.stamp\" 2>/dev/null",
        "test -f $args.p || echo missing # check $args.q (first)",
        "echo \"$HOME/$args.sub\" a#b $args.x#y",
        "echo '$args.x'",
        "tar -czf \"b-$args.d.tgz\" . 2>/dev/null; echo done",
        "echo if then fi in for $args.v",
        "for f in $args.files; do echo \"file: $f\"; done",
        "for f in a \"$args.b\" c\ndo\n  wc -c $f # count\ndone > out",
        "if [ -d \"$args.d\" ]; then ls \"$args.d\"; elif true; then :; else mkdir $args.d; fi",
        "while test -f $args.lock; do sleep 1; done && until false; do break; done",
        "if if a; then b; fi; then for x in y; do c | d; done; fi",
        "echo \"${HOME:-/root}/$args.sub\" ${X} ${Y-a.b} \"${Z:+z}\"",
        "printf '%s' \"$(cat $args.f)\" | wc -l",
        "docker run -v \"$(pwd):/src\" $(echo \"$args.x\" a) img",
        "echo \"$(a $(b \"$args.v\"))\"",
        "echo \"$(echo \"$args.v\" a)\"; if true; then echo \"$(ls $args.v)\"; fi",
        "[ ] || [ -n $args.v ]",
        "[ -d $args.d ]",
        "for f in a; do echo done $args.v; done",
        "[ x = $args.v ] && [ $args.v == x ] && [ -n \"$args.v\" ] 2>/dev/null",
        "if [ $args.v -eq 1 ]; then a; fi",
        "while read l; do echo \"$l\" $args.v; done",
        "for f in a; do if b; then echo in $args.v; fi; done | cat $args.v",
        "echo ${A:-x}$args.v $args.v${A} x 2>&1",
    ] {
        assert!(is_plain(text), "{text}");
    }
    for text in [
        "case $args.m in a) ls ;; esac",
        "cat <<E\n$args.x\nE",
        "echo ${X:-$args.v}",
        "echo $$args.v",
        "echo \\$args.v",
        "echo \"C:\\$args.v\"",
        "echo `ls` $args.v",
        "ls;# $args.v",
        "echo \"$args.v",
        "echo 'a $args.v",
        "echo $'a' $args.v",
        "echo \"$@\" $args.v",
        "ls *.rs ~/x $args.v",
        "a=(1 2) $args.v",
        "if true; then echo \"$args.v\"; fi fi",
        "echo $args.v; fi",
        "if true; fi $args.v",
        "if true; then fi $args.v",
        "if a; then b; else fi $args.v",
        "if a then b; fi $args.v",
        "if a; then b $args.v",
        "while a; then b; fi $args.v",
        "for f in; do echo $args.v; done",
        "for f do echo $args.v; done",
        "for $args.v in a; do b; done",
        "for f in a & do echo $args.v; done",
        "for f in a; echo $args.v; done",
        "for f in if; do echo $args.v; done",
        "A=1 if true; then echo $args.v; fi",
        "2>f if true; then echo $args.v; fi",
        "> f done $args.v",
        "time ls $args.v",
        "select x in a; do echo $args.v; done",
        "function f { echo $args.v; }",
        "echo $((1 + 2)) $args.v",
        "echo \"$(case $args.v in a) b;; esac)\"",
        "echo \"$(echo case a in a) b $args.v)\" c",
        "echo $(ls # $args.v\n)",
        "echo $(ls\n $args.v)",
        "echo $(ls $args.v",
        "echo $(ls $args.v |)",
        "echo $() $args.v",
        "echo $(ls;) $args.v",
        "echo a) $args.v",
        "echo ${X:-$args.v}",
        "echo \"${X:-$args.v}\"",
        "echo ${#X} $args.v",
        "echo ${X:1} $args.v",
        "echo ${X[1]} $args.v",
        "echo ${X:-a b} $args.v",
        "echo ${X/a/b} $args.v",
        "[ -d $args.d",
        "[ -d $args.d ] x",
        "[ a [ b ] ] $args.v",
        "echo [ $args.v ]",
        "a[$args.v]=1",
        "[$args.v ]",
        "[ $args.v]",
        "if [ $args.v ]; then a; fi; done",
        "a | | b $args.v",
        "ls ;; $args.v",
        "ls $args.v >",
        "ls $args.v |",
        "| ls $args.v",
        "; ls $args.v",
        "ls $args.v > # c\nf",
        "ls $args.v |& cat",
        "ls $args.v &> f",
    ] {
        assert!(!is_plain(text), "{text}");
    }
}
