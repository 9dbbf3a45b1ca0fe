#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ (gitignored) with seeds from the repository: every example and
# test fixture for `check` and `run`, their `tools` strings for `split` and `item`, their `when`
# strings for `condition`. Existing corpus files are kept: libFuzzer's finds accumulate.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
root=..
corpus=corpus
mkdir -p "$corpus"/{split,item,condition,check,run,jq,shell}

mapfile -t files < <(find "$root/examples" "$root/tests/fixtures" "$root/seq-check/tests/fixtures" \
    -type f \( -name '*.json' -o -name '*.json.broken' \) | sort)

for file in "${files[@]}"; do
    name=$(printf '%s' "$file" | sed 's|^\.\./||; s|/|_|g')
    cp "$file" "$corpus/check/$name"
    cp "$file" "$corpus/run/$name"
done

# The strings inside the files: python3 where there is one (Debian has it), else skipped.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$corpus" "${files[@]}" <<'PY'
import hashlib, json, os, sys

corpus, files = sys.argv[1], sys.argv[2:]

def save(target, text):
    data = text.encode("utf-8", "surrogatepass")
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(corpus, target, name), "wb") as out:
        out.write(data)

for path in files:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (ValueError, UnicodeDecodeError):
        continue
    groups = doc.get("groups") if isinstance(doc, dict) else None
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict):
            continue
        if isinstance(group.get("tools"), str):
            save("split", group["tools"])
            save("item", group["tools"])
        if isinstance(group.get("when"), str):
            save("condition", group["when"])
PY
fi

# Conditions combining tests, or broken on purpose, beside the fixtures' own.
for when in '$args.x == 1' '$out.r.status != "ok"' '$args.tags contains "a"' \
    '$args.n >= 2.5' '${args.x} < 3' '$args.a && $args.b' '!($args.x)' '$args.x =! 1' \
    '$args.a == $args.b || !($args.c && $out.d != null)' '$args.a and not $args.b' \
    '!$args.a == true' '(($args.a || $args.b)'; do
    printf '%s' "$when" > "$corpus/condition/seed-$(printf '%s' "$when" | cksum | cut -d' ' -f1)"
done

# jq: bytes steering fuzz_targets/jq.rs's grammar. The first byte picks the input; then each
# production (0-17) once at the top, followed by bytes that pick operands: deep nesting (11),
# string repeats (12), loops that build (6, 14), operator chains (15), natives (10).
for production in $(seq 0 17); do
    for tail in '\x00' '\x0b\x05\x40\x00' '\x06\x07\x01\x00\x0a\x00' '\x0c\x07' '\x0f\x00\xff' \
        '\x0a\x06\x05\x01\x00\x00\x00' '\x05\x0a\x00\x01\x0a\x00\x02'; do
        seed=$(printf '\\x%02x\\x%02x%s' "$((production % 4))" "$production" "$tail")
        printf "$seed" > "$corpus/jq/seed-$production-$(printf '%s' "$tail" | cksum | cut -d' ' -f1)"
    done
done

# shell: the hostile-value corpus of seq-syntax/tests/shell_corpus.rs, each shape (`V` for the
# reference) with each value after a NUL byte, and the benchmark's commands alone.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$corpus/shell" "$root/seq-syntax/tests/shell_corpus.rs" \
        "$root/seq-syntax/benches/support/shell_shapes.rs" <<'PY'
import hashlib, json, os, re, sys

out, corpus_rs, bench_rs = sys.argv[1:4]
literal = r'"((?:[^"\\]|\\.)*)"'

def strings(text):
    # Rust string literals of the simple kinds used there read as JSON strings.
    found = []
    for raw in re.findall(literal, text):
        try:
            found.append(json.loads('"' + raw + '"'))
        except ValueError:
            pass
    return found

def save(text):
    data = text.encode("utf-8", "surrogatepass")
    with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)

source = open(corpus_rs, encoding="utf-8").read()
values_block = source.split("const VALUES", 1)[1].split("];", 1)[0]
values = strings(values_block)
shapes = strings("\n".join('"' + m + '"' for m in re.findall(r'command:\s*' + literal, source)))
for shape in shapes:
    command = shape.replace("V", "$args.v")
    save(command)
    for value in values:
        save(command + "\0" + value)
bench = open(bench_rs, encoding="utf-8").read().split("const SHAPES", 1)[1].split("];", 1)[0]
for shape in strings(bench):
    save(shape.replace("{}", "1"))
PY
fi

for target in split item condition check run jq shell; do
    printf '%-10s %4d seeds\n' "$target" "$(find "$corpus/$target" -type f | wc -l)"
done
