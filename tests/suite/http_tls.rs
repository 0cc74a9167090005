//! HTTPS to the model server, through rustls: a server whose certificate chains to a root the
//! system trusts (here `SSL_CERT_FILE`, which the platform verifier reads on Linux) answers; one
//! signed by an unknown root is refused with the reason, and no request reaches it. The server is
//! a small rustls one on 127.0.0.1 with a test CA made by rcgen.

use crate::support::project;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use project::{Project, run};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

const ANSWER: &str = r#"{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello over tls"},"finish_reason":"stop"}]}"#;

/// A test CA named `ca_name` and a certificate for 127.0.0.1 signed by it: (the CA in PEM, the
/// leaf, its key).
fn certificates(ca_name: &str) -> (String, rcgen::Certificate, KeyPair) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().unwrap();
    let issuer = CertifiedIssuer::self_signed(ca, ca_key).unwrap();
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    (issuer.pem(), cert, leaf_key)
}

/// Serves HTTPS (HTTP/1.1) on 127.0.0.1, answering every chat request with [`ANSWER`] (anything
/// else with a 404); returns the base URL and the number of chat requests answered.
fn serve(cert: &rcgen::Certificate, key: &KeyPair) -> (String, Arc<AtomicUsize>) {
    let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| {
            b.with_no_client_auth()
                .with_single_cert(vec![cert.der().clone()], key)
        })
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    let answered = Arc::new(AtomicUsize::new(0));
    let count = answered.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { continue };
            let Ok(mut conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
            // A client that refuses the certificate ends the handshake here.
            let Some(request) = read_request(&mut tls) else {
                continue;
            };
            // The context-window probes (`/props`, `/v1/models`, `/api/show`) are not answered.
            let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
            if !String::from_utf8_lossy(line).contains("/chat/completions") {
                let _ = tls.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
                let _ = tls.flush();
                continue;
            }
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{ANSWER}",
                ANSWER.len()
            );
            if tls.write_all(response.as_bytes()).is_ok() && tls.flush().is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (format!("https://127.0.0.1:{port}/v1"), answered)
}

/// Reads one request, headers and `content-length` body; `None` when the connection fails.
fn read_request(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        data.extend_from_slice(&chunk[..n]);
        let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if data.len() >= end + 4 + length {
            return Some(data);
        }
    }
}

#[test]
fn https_to_a_trusted_server_works_and_an_unknown_root_is_refused() {
    let (ca_pem, cert, key) = certificates("Ling test CA");
    let (base_url, answered) = serve(&cert, &key);
    let project = Project::new();
    let roots = project.home.path().join("test-ca.pem");
    std::fs::write(&roots, &ca_pem).unwrap();

    let mut cmd = project.command(&base_url);
    cmd.env("SSL_CERT_FILE", &roots).args(["-p", "hello"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "hello over tls\n");
    assert_eq!(answered.load(Ordering::SeqCst), 1);

    // The same server without its root among the trusted ones.
    let other = project.home.path().join("other-ca.pem");
    std::fs::write(&other, certificates("Another CA").0).unwrap();
    let mut cmd = project.command(&base_url);
    cmd.env("SSL_CERT_FILE", &other)
        .args(["-p", "hello", "--output-format", "json"]);
    let out = run(cmd);
    assert_ne!(out.code, Some(0), "{out:?}");
    let result = out.json()["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        result.contains("invalid peer certificate: UnknownIssuer"),
        "{result}"
    );
    assert_eq!(
        answered.load(Ordering::SeqCst),
        1,
        "a refused server got a request"
    );
}
