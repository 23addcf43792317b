fn main() {
    // The addon's link settings; the standalone server (no `napi` feature) needs none.
    if std::env::var_os("CARGO_FEATURE_NAPI").is_some() {
        napi_build::setup();
    }
}
