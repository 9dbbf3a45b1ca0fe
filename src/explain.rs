//! `seqc explain`: the long explanation of a diagnostic code, or the list of all codes.

use crate::status::{Status, emit, trouble};
use clap::Args;
use seq_syntax::Code;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A diagnostic code such as E0101 (case does not matter).
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,
    /// List every code with its title.
    #[arg(long)]
    pub list: bool,
}

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
