//! `acp-terminal-server`: the native core as a standalone executable. It serves one
//! connection on its stdin and stdout (the protocol of `acp_terminal::server`), and when its
//! stdin ends it kills every command it started and exits (after the grace a client asked for
//! in `hello`, if no new link reattached meanwhile). `acp-terminal-server --attach PATH`
//! splices its stdio to the live server listening at PATH (a reattaching client's new link). Built without the `napi` feature:
//! `cargo build --release --no-default-features --features server --bin acp-terminal-server`.

fn main() {
    // The launcher's descriptor of this very file, or anything else the transport left open.
    acp_terminal::server::close_inherited_on_exec();
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        None => {}
        Some("--version") => {
            print!("{}", acp_terminal::server::banner());
            return;
        }
        Some("--attach") => {
            let Some(path) = args.next() else {
                eprintln!("acp-terminal-server: --attach needs the socket path");
                std::process::exit(2);
            };
            std::process::exit(acp_terminal::server::attach(std::path::Path::new(&path)));
        }
        Some(other) => {
            eprintln!("acp-terminal-server: unknown argument {other:?} (usage: acp-terminal-server [--version | --attach PATH])");
            std::process::exit(2);
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(acp_terminal::server::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    // The blocking thread behind stdin may still be in read(2): do not wait for it.
    std::process::exit(0);
}
