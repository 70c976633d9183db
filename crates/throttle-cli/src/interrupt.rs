//! Ctrl-C as a request, not a kill: the first SIGINT sets a flag that experiments poll between
//! measurements, so they stop early and still print and save what they measured (marked partial).
//! A second SIGINT exits at once with status 130.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Installs the SIGINT handler once. Safe to call more than once; later calls do nothing.
pub fn install() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // A failure to install leaves Ctrl-C with its default meaning (kill), which loses only
        // the partial results; it is not worth refusing to run over.
        let _ = ctrlc::set_handler(|| {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("\ninterrupted: finishing the current measurement, then saving partial results (Ctrl-C again to quit now)");
        });
    });
}

/// True once the user pressed Ctrl-C. Experiments check it between measurements.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
