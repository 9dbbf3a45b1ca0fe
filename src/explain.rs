//! `seqc explain`: the long explanation of a diagnostic code, or the list of all codes.

use crate::cli::{ExplainArgs, Status, emit, trouble};
use seq_syntax::Code;

pub fn run(args: &ExplainArgs) -> Status {
    if args.list {
        return emit(Status::Clean, |out| {
            for code in Code::ALL {
                writeln!(out, "{code}  {}", code.title())?;
            }
            Ok(())
        });
    }
    let Some(text) = args.code.as_deref() else {
        return trouble("give a code to explain, or `--list` to see every code");
    };
    match Code::parse(text) {
        Some(code) => emit(Status::Clean, |out| {
            let explanation = code.explanation();
            out.write_all(explanation.as_bytes())?;
            if !explanation.ends_with('\n') {
                writeln!(out)?;
            }
            Ok(())
        }),
        None => trouble(format_args!(
            "unknown code `{}`; `seqc explain --list` shows every code",
            text.trim()
        )),
    }
}
