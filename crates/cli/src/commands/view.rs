//! `slmcode view`: the project's runs and bench reports in the browser, served on this
//! machine only, until Ctrl-C.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write as _;

use anyhow::{Context, Result};
use slmcode_agent::view::{self, ViewOptions};

use crate::terminal::{self, errln};

/// The arguments of `slmcode view`.
#[derive(clap::Args)]
pub struct ViewArgs {
    /// Project root (default: the current directory): its runs in .slmcode/runs/.
    #[arg(long)]
    root: Option<PathBuf>,
    /// The port on 127.0.0.1 (default: any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Where bench results are (default: ROOT/bench/results, as `slmcode bench` writes them).
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
}

/// `slmcode view`.
pub fn run(args: ViewArgs) -> Result<ExitCode> {
    let root = match args.root {
        Some(r) => r,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let jail = slmcode_aci::path::Jail::open(&root)
        .with_context(|| format!("cannot open project root {}", root.display()))?;
    let options = ViewOptions {
        bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), args.port),
        token: view::new_token(),
        results: args
            .results
            .unwrap_or_else(|| root.join("bench").join("results")),
    };
    let token = options.token.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let open = args.open;
    runtime.block_on(view::serve(
        jail,
        options,
        async {
            let _ = tokio::signal::ctrl_c().await;
        },
        |addr| {
            let url = format!("http://{addr}/?token={token}");
            // The address on stdout alone, for scripts; the rest is for the person.
            let _ = writeln!(terminal::machine_stdout(), "{url}");
            errln!(
                "slmcode view: the runs of {} (Ctrl-C stops it)",
                root.display()
            );
            if open {
                if let Err(e) = open::that_detached(&url) {
                    errln!("slmcode view: could not open a browser ({e}); open the address above");
                }
            }
        },
    ))?;
    Ok(ExitCode::SUCCESS)
}
