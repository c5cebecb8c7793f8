import Foundation
public import RdKafka

// MARK: - Reading secrets from files

extension EnvironmentSettings {
    /// The contents of the file a variable names (trailing newlines removed), or nil when the variable is unset.
    /// An unreadable or empty file stops the service at start, naming the variable and the path.
    public func secretFile(_ name: String) throws(SettingsError) -> String? {
        guard let path = self.values[name], !path.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("\(name) names \(path), which cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard !text.isEmpty else { throw SettingsError("\(name) names \(path), which is empty") }
        return text
    }

    /// A path that must name a readable file, or nil when the variable is unset.
    public func readablePath(_ name: String) throws(SettingsError) -> String? {
        guard let path = self.values[name], !path.isEmpty else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw SettingsError("\(name) names \(path), which cannot be read")
        }
        return path
    }
}

// MARK: - Kafka security

extension KafkaSecurity {
    /// Reads `KAFKA_SECURITY_PROTOCOL` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; default PLAINTEXT),
    /// `KAFKA_SASL_MECHANISM` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), `KAFKA_SASL_USERNAME`,
    /// `KAFKA_SASL_PASSWORD_FILE`, `KAFKA_SSL_CA_FILE`, `KAFKA_SSL_CERTIFICATE_FILE`, `KAFKA_SSL_KEY_FILE`,
    /// `KAFKA_SSL_KEY_PASSWORD_FILE` and `KAFKA_SSL_VERIFY_HOSTNAME` (default true). Secrets come from files only;
    /// settings that do not fit together stop the service at start, and so does anything but SASL_SSL with the
    /// host name checked when `REQUIRE_VERIFIED_TLS` is true (the production overlays).
    public init(_ settings: EnvironmentSettings) throws(SettingsError) {
        let protocolText = settings.string("KAFKA_SECURITY_PROTOCOL", default: "PLAINTEXT")
        guard let transport = TransportProtocol(rawValue: protocolText.uppercased()) else {
            throw SettingsError(
                "KAFKA_SECURITY_PROTOCOL must be one of \(TransportProtocol.allCases.map(\.rawValue).joined(separator: ", ")), not \(protocolText)"
            )
        }
        var sasl: SASLCredentials?
        if let mechanismText = settings.values["KAFKA_SASL_MECHANISM"], !mechanismText.isEmpty {
            guard let mechanism = SASLMechanism(rawValue: mechanismText.uppercased()) else {
                throw SettingsError(
                    "KAFKA_SASL_MECHANISM must be one of \(SASLMechanism.allCases.map(\.rawValue).joined(separator: ", ")), not \(mechanismText)"
                )
            }
            let username = try settings.requiredString("KAFKA_SASL_USERNAME")
            guard let password = try settings.secretFile("KAFKA_SASL_PASSWORD_FILE") else {
                throw SettingsError("KAFKA_SASL_PASSWORD_FILE must name the file holding the SASL password")
            }
            sasl = SASLCredentials(mechanism: mechanism, username: username, password: password)
        } else if transport.usesSASL {
            throw SettingsError("KAFKA_SECURITY_PROTOCOL \(transport.rawValue) needs KAFKA_SASL_MECHANISM")
        }
        let tls = TLSFiles(
            caFile: try settings.readablePath("KAFKA_SSL_CA_FILE"),
            certificateFile: try settings.readablePath("KAFKA_SSL_CERTIFICATE_FILE"),
            keyFile: try settings.readablePath("KAFKA_SSL_KEY_FILE"),
            keyPassword: try settings.secretFile("KAFKA_SSL_KEY_PASSWORD_FILE"),
            verifyHostName: try settings.bool("KAFKA_SSL_VERIFY_HOSTNAME", default: true))
        if try settings.bool("REQUIRE_VERIFIED_TLS", default: false) {
            guard transport == .saslSSL, tls.verifyHostName else {
                throw SettingsError(
                    "REQUIRE_VERIFIED_TLS is true, so KAFKA_SECURITY_PROTOCOL must be SASL_SSL (not "
                        + "\(transport.rawValue)) with KAFKA_SSL_VERIFY_HOSTNAME true")
            }
        }
        do {
            self = try KafkaSecurity(transport: transport, sasl: sasl, tls: tls).validated()
        } catch {
            throw SettingsError("Kafka security: \(error.description)")
        }
    }
}
