//! The one HTTP download of the data registry (ureq: blocking, pure-Rust TLS by rustls).

use std::time::Duration;

/// The bytes at `url` (at most `limit` of them), or why they could not be had, in words.
pub(super) fn get(url: &str, limit: u64) -> Result<Vec<u8>, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_body(Some(Duration::from_secs(300)))
        .user_agent(concat!("boltzkit/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent.get(url).call().map_err(|e| e.to_string())?;
    response
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| e.to_string())
}
