//! Signed client assertions (RFC 7523 §2.2, `private_key_jwt`): a JWT with `iss` and `sub` the
//! client ID, `aud` the authorization server's issuer, a fresh `jti` and a five-minute life,
//! signed ES256 or RS256 with the PKCS#8 PEM key of the server's `oauth.privateKey` (by ring,
//! rustls's own cryptography).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair,
};
use serde_json::json;

use super::AuthError;

/// The `client_assertion_type` of a JWT assertion.
pub const JWT_BEARER_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long an assertion is valid.
const LIFETIME_SECS: i64 = 300;

fn invalid(reason: String) -> AuthError {
    AuthError::Registration {
        issuer: "the server's oauth.privateKey".into(),
        reason,
    }
}

/// The DER of a PEM `PRIVATE KEY` block.
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, AuthError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN PRIVATE KEY-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        return Err(invalid(
            "it is not a PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----)".into(),
        ));
    }
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| invalid(format!("its PEM body is not base64: {e}")))
}

/// A signed assertion for `client_id` at the authorization server `audience`.
pub fn client_assertion(
    client_id: &str,
    audience: &str,
    pem: &str,
    algorithm: Option<&str>,
) -> Result<String, AuthError> {
    let algorithm = algorithm.unwrap_or("ES256");
    let now = chrono::Utc::now().timestamp();
    let header = json!({"alg": algorithm, "typ": "JWT"});
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "jti": uuid::Uuid::new_v4().to_string(),
        "iat": now,
        "exp": now + LIFETIME_SECS,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let der = pkcs8_der(pem)?;
    let rng = SystemRandom::new();
    let signature = match algorithm {
        "ES256" => {
            let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
                .map_err(|e| invalid(format!("not a P-256 key for ES256: {e}")))?;
            key.sign(&rng, signing_input.as_bytes())
                .map_err(|e| invalid(format!("signing failed: {e}")))?
                .as_ref()
                .to_vec()
        }
        "RS256" => {
            let key = RsaKeyPair::from_pkcs8(&der)
                .map_err(|e| invalid(format!("not an RSA key for RS256: {e}")))?;
            let mut signature = vec![0; key.public().modulus_len()];
            key.sign(
                &RSA_PKCS1_SHA256,
                &rng,
                signing_input.as_bytes(),
                &mut signature,
            )
            .map_err(|e| invalid(format!("signing failed: {e}")))?;
            signature
        }
        other => {
            return Err(invalid(format!(
                "signingAlgorithm {other:?} is not supported; use \"ES256\" or \"RS256\""
            )));
        }
    };
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

#[cfg(test)]
mod tests {
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    use super::*;

    #[test]
    fn es256_assertions_verify_with_the_public_key() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
        let jwt = client_assertion("client-1", "https://as.example", &pem, None).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref());
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(public.verify(input.as_bytes(), &signature).is_ok());
    }

    #[test]
    fn bad_keys_say_what_is_wrong() {
        let error = client_assertion("c", "a", "not a key", None).unwrap_err();
        assert!(error.to_string().contains("PKCS#8"), "{error}");
        let pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
        assert!(client_assertion("c", "a", pem, Some("HS256")).is_err());
    }
}
