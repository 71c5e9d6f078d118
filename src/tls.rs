//! The process's TLS: rustls with the ring provider. reqwest and rmcp are
//! built without a provider of their own (no aws-lc, whose C build was most
//! of a clean build), so every HTTP client is built after [`install`].

/// Makes ring the process's rustls provider; idempotent and cheap, so each
/// place that builds an HTTP client calls it first.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is already installed, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
