//! Linux: `SIGRTMIN`..=`SIGRTMAX` (as glibc numbers them for applications).

pub(super) fn realtime_name(signo: i32) -> Option<String> {
    let rtmin = libc::SIGRTMIN();
    if signo < rtmin || signo > libc::SIGRTMAX() {
        return None;
    }
    Some(if signo == rtmin {
        "SIGRTMIN".to_string()
    } else {
        format!("SIGRTMIN+{}", signo - rtmin)
    })
}
