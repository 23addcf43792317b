//! Helpers shared by the unit tests of every platform (Unix's own: `sys::unixtest`; Windows'
//! own: `sys::wintest`).

/// Strict mode (the Rust half of `__test__/fixtures/require-feature.ts`): whether a test that
/// needs `feature` may run. True when `available`; when not, the test is skipped with `reason`
/// printed, or, when `ACP_TERMINAL_REQUIRE` (a comma-separated list, set by `.ci/run` to what
/// the machine has) names `feature`, it fails. Use as
/// `if !require("cgroups", cg.is_some(), "no writable cgroup v2") { return; }`.
// Only Linux's tests need a feature the machine may lack (cgroups, namespaces, Landlock).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn require(feature: &str, available: bool, reason: &str) -> bool {
    require_with(
        std::env::var("ACP_TERMINAL_REQUIRE").ok().as_deref(),
        feature,
        available,
        reason,
    )
}

fn require_with(list: Option<&str>, feature: &str, available: bool, reason: &str) -> bool {
    if available {
        return true;
    }
    let required = list.unwrap_or("").split(',').any(|f| f.trim() == feature);
    assert!(
        !required,
        "ACP_TERMINAL_REQUIRE lists `{feature}` but it is not available here: {reason}"
    );
    eprintln!(
        "skipped ({feature} not available: {reason}); set ACP_TERMINAL_REQUIRE={feature} to make this a failure"
    );
    false
}

#[cfg(test)]
mod tests {
    use super::require_with;

    #[test]
    fn require_runs_skips_or_fails() {
        assert!(require_with(Some("cgroups"), "cgroups", true, "-"));
        assert!(!require_with(None, "cgroups", false, "none here"));
        assert!(!require_with(
            Some("userns, landlock"),
            "cgroups",
            false,
            "none here"
        ));
        let failed = std::panic::catch_unwind(|| {
            require_with(Some("userns,cgroups"), "cgroups", false, "none here")
        });
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.contains("ACP_TERMINAL_REQUIRE lists `cgroups`"),
            "{message}"
        );
        assert!(message.contains("none here"), "{message}");
    }
}
