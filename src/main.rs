//! Thin binary: real stdio in, exit code out. All logic is in the library.
use std::process::ExitCode;

fn main() -> ExitCode {
    // Silence the default panic message: lib::run reports a panic as INTERNAL_ERROR itself.
    std::panic::set_hook(Box::new(|_| {}));
    let args: Vec<_> = std::env::args_os().collect();
    let (mut stdin, mut stdout, mut stderr) = (
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        std::io::stderr().lock(),
    );
    ExitCode::from(diff2test::run(args, &mut stdin, &mut stdout, &mut stderr))
}
