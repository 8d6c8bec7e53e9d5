fn main() {
    std::process::exit(ovk::cli::main());
}
