//! The `stepscope` binary: parse the command line, run it, map failures to exit codes.

fn main() {
    std::process::exit(stepscope::cli::main());
}
