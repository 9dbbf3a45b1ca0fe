//! Whether the standard OpenTelemetry environment asks for traces.

/// True when an OTLP endpoint is named for traces (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
/// `OTEL_EXPORTER_OTLP_ENDPOINT` for every signal), and neither `OTEL_SDK_DISABLED=true` nor
/// `OTEL_TRACES_EXPORTER=none` turns them off. `var` reads a variable.
pub fn configured(var: impl Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| var(name).is_some_and(|value| !value.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|value| value.trim() == "true");
    let none = var("OTEL_TRACES_EXPORTER").is_some_and(|value| value.trim() == "none");
    (set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || set("OTEL_EXPORTER_OTLP_ENDPOINT"))
        && !disabled
        && !none
}

#[cfg(test)]
mod tests {
    use super::configured;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn an_endpoint_turns_traces_on() {
        assert!(!configured(with(&[])));
        assert!(!configured(with(&[("OTEL_SERVICE_NAME", "x")])));
        assert!(!configured(with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(configured(with(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318"
        )])));
        assert!(configured(with(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4318/v1/traces"
        )])));
    }

    #[test]
    fn the_sdk_switches_turn_them_off() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert!(!configured(with(&[
            endpoint,
            ("OTEL_SDK_DISABLED", "true")
        ])));
        assert!(!configured(with(&[
            endpoint,
            ("OTEL_TRACES_EXPORTER", "none")
        ])));
        assert!(configured(with(&[
            endpoint,
            ("OTEL_TRACES_EXPORTER", "otlp")
        ])));
    }
}
