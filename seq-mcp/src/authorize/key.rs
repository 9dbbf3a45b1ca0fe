//! A machine client's private key (`"oauth": {"private_key": …}`) and the client assertions it
//! signs (`private_key_jwt`, RFC 7523 section 2.2).
//!
//! The key is read and tried when the config is read, so that a key that cannot sign fails there
//! rather than at the first call. It is PEM: PKCS#8 (`BEGIN PRIVATE KEY`: EC on P-256 or P-384,
//! or RSA) or PKCS#1 RSA (`BEGIN RSA PRIVATE KEY`), as jsonwebtoken reads them.

use super::settings::{OAuthSettings, SigningAlgorithm};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// How long an assertion is good for: one token request, with room for clock skew.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The explicit type of a client assertion, so that it cannot pass for another kind of JWT.
const ASSERTION_TYPE: &str = "client-authentication+jwt";

/// The algorithms a key is tried with, in order, when the config names none.
const OWN: [SigningAlgorithm; 3] = [
    SigningAlgorithm::ES256,
    SigningAlgorithm::ES384,
    SigningAlgorithm::RS256,
];

/// Replaces `settings.private_key` (PEM text, or a file's path relative to `folder`) with the
/// PEM text, and fills in `signing_algorithm` with the first of [`OWN`] the key signs with where
/// it is not given. The error is a sentence.
pub(crate) fn load(settings: &mut OAuthSettings, folder: &Path) -> Result<(), String> {
    let Some(given) = &settings.private_key else {
        return Ok(());
    };
    let text = if given.trim_start().starts_with("-----BEGIN") {
        given.clone()
    } else {
        let path = folder.join(given);
        std::fs::read_to_string(&path).map_err(|error| {
            format!(
                "cannot read the `private_key` file {}: {error}",
                path.display()
            )
        })?
    };
    let algorithm = match settings.signing_algorithm {
        Some(algorithm) => {
            sign(&text, algorithm, None, &json!({})).map_err(|error| {
                format!(
                    "`private_key` does not sign with `signing_algorithm` {algorithm:?} ({error})"
                )
            })?;
            algorithm
        }
        None => OWN
            .into_iter()
            .find(|algorithm| sign(&text, *algorithm, None, &json!({})).is_ok())
            .ok_or_else(|| {
                "`private_key` is not a private key seqc can sign with: give the PEM of an EC key \
                 on P-256 or P-384 in PKCS#8 (`BEGIN PRIVATE KEY`; `openssl pkcs8 -topk8 \
                 -nocrypt` converts an `EC PRIVATE KEY`) or of an RSA key"
                    .to_owned()
            })?,
    };
    settings.private_key = Some(text);
    settings.signing_algorithm = Some(algorithm);
    Ok(())
}

/// A fresh client assertion of `client_id` for the authorization server `audience` (its issuer),
/// signed with the key [`load`] read.
pub(crate) fn assertion(
    pem: &str,
    algorithm: SigningAlgorithm,
    client_id: &str,
    audience: &str,
) -> Result<String, String> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the system clock is before 1970".to_owned())?
        .as_secs();
    let mut jti = [0u8; 16];
    getrandom::fill(&mut jti)
        .map_err(|error| format!("no random bytes for the assertion's id: {error}"))?;
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": jti.iter().map(|byte| format!("{byte:02x}")).collect::<String>(),
    });
    sign(pem, algorithm, Some(ASSERTION_TYPE), &claims)
        .map_err(|error| format!("cannot sign the client assertion: {error}"))
}

/// `claims` signed with `pem` under `algorithm`, the header typed `typ`.
fn sign(
    pem: &str,
    algorithm: SigningAlgorithm,
    typ: Option<&str>,
    claims: &serde_json::Value,
) -> Result<String, jsonwebtoken::errors::Error> {
    let (algorithm, key) = match algorithm {
        SigningAlgorithm::ES256 => (Algorithm::ES256, EncodingKey::from_ec_pem(pem.as_bytes())?),
        SigningAlgorithm::ES384 => (Algorithm::ES384, EncodingKey::from_ec_pem(pem.as_bytes())?),
        SigningAlgorithm::RS256 => (Algorithm::RS256, EncodingKey::from_rsa_pem(pem.as_bytes())?),
        SigningAlgorithm::RS384 => (Algorithm::RS384, EncodingKey::from_rsa_pem(pem.as_bytes())?),
        SigningAlgorithm::RS512 => (Algorithm::RS512, EncodingKey::from_rsa_pem(pem.as_bytes())?),
    };
    let mut header = Header::new(algorithm);
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oauth-keys")
    }

    fn loaded(
        key: &str,
        algorithm: Option<SigningAlgorithm>,
    ) -> Result<Option<SigningAlgorithm>, String> {
        let mut settings = OAuthSettings {
            private_key: Some(key.to_owned()),
            signing_algorithm: algorithm,
            ..OAuthSettings::default()
        };
        load(&mut settings, &fixtures())?;
        Ok(settings.signing_algorithm)
    }

    #[test]
    fn a_key_gives_its_own_algorithm_and_refuses_another() {
        use SigningAlgorithm::{ES256, ES384, RS256, RS512};
        assert_eq!(loaded("p256.pem", None), Ok(Some(ES256)));
        assert_eq!(loaded("p384.pem", None), Ok(Some(ES384)));
        assert_eq!(loaded("rsa.pem", None), Ok(Some(RS256)));
        assert_eq!(loaded("rsa-pkcs1.pem", None), Ok(Some(RS256)));
        assert_eq!(loaded("rsa.pem", Some(RS512)), Ok(Some(RS512)));
        for (key, wrong) in [("p256.pem", ES384), ("p384.pem", ES256), ("rsa.pem", ES256)] {
            let error = loaded(key, Some(wrong)).unwrap_err();
            assert!(error.contains("does not sign with"), "{key}: {error}");
        }
        let pem = std::fs::read_to_string(fixtures().join("p256.pem")).unwrap();
        assert_eq!(loaded(&pem, None), Ok(Some(ES256)));
    }

    #[test]
    fn what_cannot_sign_is_named_with_the_fix() {
        for key in ["p256-sec1.pem", "p256.pub.pem", "README.md"] {
            let error = loaded(key, None).unwrap_err();
            assert!(error.contains("openssl pkcs8 -topk8"), "{key}: {error}");
        }
        let error = loaded("missing.pem", None).unwrap_err();
        assert!(
            error.contains("cannot read the `private_key` file"),
            "{error}"
        );
    }

    #[test]
    fn an_assertion_names_the_client_and_the_issuer() {
        let pem = std::fs::read_to_string(fixtures().join("p256.pem")).unwrap();
        let public = std::fs::read(fixtures().join("p256.pub.pem")).unwrap();
        let signed = assertion(&pem, SigningAlgorithm::ES256, "ci", "https://as.example").unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["https://as.example"]);
        validation.set_issuer(&["ci"]);
        let decoded = jsonwebtoken::decode::<serde_json::Value>(
            &signed,
            &DecodingKey::from_ec_pem(&public).unwrap(),
            &validation,
        )
        .unwrap();
        assert_eq!(decoded.header.typ.as_deref(), Some(ASSERTION_TYPE));
        assert_eq!(decoded.claims["sub"], "ci");
        let again = assertion(&pem, SigningAlgorithm::ES256, "ci", "https://as.example").unwrap();
        let jti = |token: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(token)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&signed), jti(&again));
    }
}
