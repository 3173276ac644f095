//! The `stepscope` binary: a thin command line over the library — parse, run, map failures
//! to exit codes.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
