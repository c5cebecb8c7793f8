/// How a client proves who it is to the brokers and protects the connection: librdkafka's `security.protocol`,
/// SASL (PLAIN, SCRAM-SHA-256/512) and TLS (a CA, hostname verification, a client certificate for mutual TLS).
/// Secrets arrive already read from their files; the description never shows them.
public struct KafkaSecurity: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// librdkafka's `security.protocol`.
    public enum TransportProtocol: String, Sendable, Hashable, CaseIterable {
        case plaintext = "PLAINTEXT"
        case ssl = "SSL"
        case saslPlaintext = "SASL_PLAINTEXT"
        case saslSSL = "SASL_SSL"

        /// Whether the connection is encrypted.
        public var usesTLS: Bool { self == .ssl || self == .saslSSL }
        /// Whether the client authenticates with SASL.
        public var usesSASL: Bool { self == .saslPlaintext || self == .saslSSL }
    }

    /// The SASL mechanisms the pipeline supports (librdkafka's `sasl.mechanism`).
    public enum SASLMechanism: String, Sendable, Hashable, CaseIterable {
        case plain = "PLAIN"
        case scramSHA256 = "SCRAM-SHA-256"
        case scramSHA512 = "SCRAM-SHA-512"
    }

    /// A SASL user and its password.
    public struct SASLCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        public var mechanism: SASLMechanism
        public var username: String
        /// The password, as read from its file.
        public var password: String

        /// Creates credentials.
        public init(mechanism: SASLMechanism, username: String, password: String) {
            self.mechanism = mechanism
            self.username = username
            self.password = password
        }

        /// The mechanism and user, never the password.
        public var description: String { "\(self.mechanism.rawValue) as \(self.username) (password ***)" }
        public var debugDescription: String { self.description }
    }

    /// The files of a TLS connection (PEM). librdkafka reads them itself when it connects.
    public struct TLSFiles: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        /// CA certificates the brokers' certificates must chain to; nil: the system's trust store.
        public var caFile: String?
        /// The client certificate for mutual TLS (with `keyFile`).
        public var certificateFile: String?
        /// The client certificate's private key.
        public var keyFile: String?
        /// The private key's password, as read from its file.
        public var keyPassword: String?
        /// Whether the broker's certificate must name the host connected to (`https`); off only for brokers
        /// reached by an address their certificate does not carry.
        public var verifyHostName = true

        /// Creates TLS settings.
        public init(
            caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, keyPassword: String? = nil,
            verifyHostName: Bool = true
        ) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.keyPassword = keyPassword
            self.verifyHostName = verifyHostName
        }

        /// The files, never the key's password.
        public var description: String {
            var parts = ["CA \(self.caFile ?? "system")"]
            if let certificate = self.certificateFile { parts.append("client certificate \(certificate)") }
            if !self.verifyHostName { parts.append("host name not verified") }
            return parts.joined(separator: ", ")
        }
        public var debugDescription: String { self.description }
    }

    public var transport: TransportProtocol
    /// Set exactly when the transport uses SASL.
    public var sasl: SASLCredentials?
    /// Used when the transport uses TLS.
    public var tls: TLSFiles

    /// No encryption, no authentication: a broker on loopback or inside a trusted network.
    public static let plaintext = KafkaSecurity(transport: .plaintext)

    /// Creates security settings; `validated()` checks that they fit together.
    public init(transport: TransportProtocol, sasl: SASLCredentials? = nil, tls: TLSFiles = TLSFiles()) {
        self.transport = transport
        self.sasl = sasl
        self.tls = tls
    }

    // MARK: - Rules

    /// The settings, or why they do not fit together: SASL credentials exactly with a SASL transport, TLS files
    /// only with a TLS transport, a certificate and its key together, and no PLAIN password over an unencrypted
    /// connection.
    public func validated() throws(KafkaSecurityError) -> KafkaSecurity {
        if self.transport.usesSASL {
            guard let sasl = self.sasl else {
                throw KafkaSecurityError("\(self.transport.rawValue) needs a SASL mechanism, user name and password")
            }
            guard !sasl.username.isEmpty, !sasl.password.isEmpty else {
                throw KafkaSecurityError("SASL needs a non-empty user name and password")
            }
            if sasl.mechanism == .plain && !self.transport.usesTLS {
                throw KafkaSecurityError(
                    "SASL PLAIN sends the password as it is: use it over SASL_SSL, not SASL_PLAINTEXT")
            }
        } else if self.sasl != nil {
            throw KafkaSecurityError("SASL credentials are set but \(self.transport.rawValue) does not use SASL")
        }
        let tls = self.tls
        let hasTLSFiles = tls.caFile != nil || tls.certificateFile != nil || tls.keyFile != nil
        if !self.transport.usesTLS && (hasTLSFiles || !tls.verifyHostName) {
            throw KafkaSecurityError("TLS settings are set but \(self.transport.rawValue) does not use TLS")
        }
        if (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw KafkaSecurityError("a client certificate needs its key and a key its certificate")
        }
        if tls.keyPassword != nil && tls.keyFile == nil {
            throw KafkaSecurityError("a key password is set without a key")
        }
        return self
    }

    // MARK: - librdkafka

    /// The librdkafka properties of these settings.
    public var librdkafkaProperties: [String: String] {
        var properties = ["security.protocol": self.transport.rawValue.lowercased()]
        if let sasl = self.sasl {
            properties["sasl.mechanism"] = sasl.mechanism.rawValue
            properties["sasl.username"] = sasl.username
            properties["sasl.password"] = sasl.password
        }
        if self.transport.usesTLS {
            properties["ssl.endpoint.identification.algorithm"] = self.tls.verifyHostName ? "https" : "none"
            properties["enable.ssl.certificate.verification"] = "true"
            if let file = self.tls.caFile { properties["ssl.ca.location"] = file }
            if let file = self.tls.certificateFile { properties["ssl.certificate.location"] = file }
            if let file = self.tls.keyFile { properties["ssl.key.location"] = file }
            if let password = self.tls.keyPassword { properties["ssl.key.password"] = password }
        }
        return properties
    }

    /// The properties that carry secrets: they may come only from files, never from `KAFKA_PROPERTIES`.
    public static let secretProperties: Set<String> = ["sasl.password", "ssl.key.password", "ssl.key.pem"]

    /// What the settings are, without their secrets.
    public var description: String {
        var parts = [self.transport.rawValue]
        if let sasl = self.sasl { parts.append(sasl.description) }
        if self.transport.usesTLS { parts.append(self.tls.description) }
        return parts.joined(separator: ", ")
    }
    public var debugDescription: String { self.description }
}

/// Security settings that do not fit together; always permanent (fix the configuration).
public struct KafkaSecurityError: Error, Sendable, CustomStringConvertible {
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }
}
