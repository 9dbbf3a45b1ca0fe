//! The command shapes of the `shell_text` benchmark, shared with the test that plain text
//! reads as parsed (tests/shell_corpus.rs).

/// Commands as models write them, `{}` standing for a name that varies with the command.
pub const SHAPES: &[&str] = &[
    "grep -rn $args.pattern_{} $args.dir | head -n 20",
    "cd $args.repo && git log --oneline -n 5 -- \"$args.path_{}\"",
    "printf '%s\\n' \"$(cat $args.file_{})\" | wc -l",
    "curl -fsS \"https://api.example.com/items/$args.id_{}\" -H \"Authorization: Bearer $args.token\"",
    "for f in $args.files_{}; do echo \"file: $f\"; wc -c \"$f\"; done",
    "case $args.mode_{} in fast) make -j4 ;; *) make ;; esac",
    "cat <<EOF > notes.txt\nname: $args.name_{}\nwhen: $(date)\nEOF\ncat notes.txt",
    "sh -c 'echo \"$1\" | tr a-z A-Z' sh $args.text_{}",
    "find $args.dir -name '*.rs' -newer \"$args.stamp_{}\" | xargs wc -l",
    "test -f \"$args.path_{}\" && echo \"exists: $args.path_{}\" || echo missing # check first",
    "jq -r '.items[] | .name' \"$out.fetch_{}.stdout\" | sort | uniq -c",
    "if [ -d \"$args.dir_{}\" ]; then ls -la \"$args.dir_{}\"; else mkdir -p \"$args.dir_{}\"; fi",
    "docker run --rm -e NAME=\"$args.name_{}\" -v \"$(pwd):/src\" img:latest build",
    "echo \"${HOME:-/root}/$args.sub_{}\" && printf '%s=%s\\n' key \"$args.value_{}\"",
    "tar -czf \"backup-$args.date_{}.tar.gz\" -C \"$args.dir\" . 2>/dev/null; echo done",
    "ssh -o BatchMode=yes host 'uptime' && rsync -a \"$args.src_{}\" host:/srv/",
];
