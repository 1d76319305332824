//! `mnemo`: the command-line tool (`mnemo_tool::main`). Run `mnemo --help` for the commands,
//! `mnemo COMMAND --help` for one of them.

fn main() -> std::process::ExitCode {
    mnemo_tool::main()
}
