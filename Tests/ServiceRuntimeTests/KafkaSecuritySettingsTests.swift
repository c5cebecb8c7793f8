import Foundation
import Logging
import RdKafka
import ServiceRuntime
import Testing

/// The typed Kafka security settings every executable reads: SASL (PLAIN, SCRAM-SHA-256/512) and TLS with
/// secrets from files, the librdkafka properties they become, and the combinations that stop a service at start.
@Suite struct KafkaSecuritySettingsTests {
    /// A directory with a password file, a CA and a client certificate and key (contents are not parsed here).
    static func files() throws -> (directory: URL, password: String, ca: String, certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appending(path: "kafka-security-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let write = { (name: String, text: String) throws -> String in
            let url = directory.appending(path: name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        return (
            directory, try write("password", "s3cret-from-a-file\n"), try write("ca.pem", "CA"),
            try write("client.pem", "CERT"), try write("client.key", "KEY")
        )
    }

    @Test func scramOverTLSWithAClientCertificateBecomesLibrdkafkaProperties() throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let client = try KafkaClientSettings(
            EnvironmentSettings([
                "KAFKA_BOOTSTRAP_SERVERS": "kafka-0:9093",
                "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
                "KAFKA_SASL_USERNAME": "entitlement-updater", "KAFKA_SASL_PASSWORD_FILE": files.password,
                "KAFKA_SSL_CA_FILE": files.ca, "KAFKA_SSL_CERTIFICATE_FILE": files.certificate,
                "KAFKA_SSL_KEY_FILE": files.key,
            ]),
            clientID: "entitlement-updater")
        let properties = KafkaConsumerConfiguration(client: client, groupID: "g", topics: ["t"]).librdkafkaProperties
        #expect(properties["security.protocol"] == "sasl_ssl")
        #expect(properties["sasl.mechanism"] == "SCRAM-SHA-512")
        #expect(properties["sasl.username"] == "entitlement-updater")
        #expect(properties["sasl.password"] == "s3cret-from-a-file")
        #expect(properties["ssl.ca.location"] == files.ca)
        #expect(properties["ssl.certificate.location"] == files.certificate)
        #expect(properties["ssl.key.location"] == files.key)
        #expect(properties["ssl.endpoint.identification.algorithm"] == "https")
        #expect(
            KafkaProducerConfiguration(client: client).librdkafkaProperties["sasl.password"] == "s3cret-from-a-file")
        // Printing the settings (a log line, an error) never shows the password.
        #expect(!String(describing: client).contains("s3cret"))
        #expect(!String(reflecting: client).contains("s3cret"))
        #expect(!"\(client.security.sasl!)".contains("s3cret"))
    }

    /// With `REQUIRE_VERIFIED_TLS=true` (the production overlays) only SASL_SSL with host names checked starts.
    @Test func requiringVerifiedTLSRefusesEverythingButSASLOverCheckedTLS() throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let sasl = [
            "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "KAFKA_SASL_USERNAME": "ingest",
            "KAFKA_SASL_PASSWORD_FILE": files.password, "KAFKA_SSL_CA_FILE": files.ca, "REQUIRE_VERIFIED_TLS": "true",
        ]
        for weaker in [
            ["KAFKA_SECURITY_PROTOCOL": "PLAINTEXT"], ["KAFKA_SECURITY_PROTOCOL": "SSL"],
            ["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT"],
            ["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SSL_VERIFY_HOSTNAME": "false"],
        ] {
            #expect(throws: SettingsError.self, "\(weaker)") {
                try KafkaSecurity(EnvironmentSettings(sasl.merging(weaker) { _, new in new }))
            }
        }
        let verified = try KafkaSecurity(
            EnvironmentSettings(sasl.merging(["KAFKA_SECURITY_PROTOCOL": "SASL_SSL"]) { _, new in new }))
        #expect(verified.transport == .saslSSL)
    }

    @Test(arguments: KafkaSecurity.SASLMechanism.allCases)
    func everyMechanismIsAccepted(_ mechanism: KafkaSecurity.SASLMechanism) throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let security = try KafkaSecurity(
            EnvironmentSettings([
                "KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "KAFKA_SASL_MECHANISM": mechanism.rawValue.lowercased(),
                "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD_FILE": files.password,
            ]))
        #expect(security.sasl?.mechanism == mechanism)
        #expect(security.librdkafkaProperties["ssl.ca.location"] == nil, "no CA file: the system's trust store")
    }

    @Test func theDefaultIsPlaintextWithNoSecurityProperties() throws {
        let security = try KafkaSecurity(EnvironmentSettings([:]))
        #expect(security == .plaintext)
        #expect(security.librdkafkaProperties == ["security.protocol": "plaintext"])
    }

    /// Every setting that does not fit stops the service at start with a sentence naming what to fix.
    @Test func combinationsThatDoNotFitAreRefused() throws {
        let files = try Self.files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let sasl = ["KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD_FILE": files.password]
        let cases: [([String: String], String)] = [
            (["KAFKA_SECURITY_PROTOCOL": "TLS"], "KAFKA_SECURITY_PROTOCOL must be one of"),
            (["KAFKA_SECURITY_PROTOCOL": "SASL_SSL"], "needs KAFKA_SASL_MECHANISM"),
            (
                sasl.merging(["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "GSSAPI"]) { $1 },
                "KAFKA_SASL_MECHANISM must be one of"
            ),
            (
                ["KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-256"],
                "KAFKA_SASL_USERNAME must be set"
            ),
            (
                [
                    "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-256",
                    "KAFKA_SASL_USERNAME": "u",
                ], "KAFKA_SASL_PASSWORD_FILE must name"
            ),
            (
                sasl.merging([
                    "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "PLAIN",
                    "KAFKA_SASL_PASSWORD_FILE": "/does/not/exist",
                ]) { $1 }, "KAFKA_SASL_PASSWORD_FILE names /does/not/exist, which cannot be read"
            ),
            (
                sasl.merging(["KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN"]) { $1 },
                "SASL PLAIN sends the password as it is"
            ),
            (
                sasl.merging(["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-256"]) { $1 },
                "SSL does not use SASL"
            ),
            (["KAFKA_SSL_CA_FILE": files.ca], "PLAINTEXT does not use TLS"),
            (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CERTIFICATE_FILE": files.certificate], "needs its key"),
            (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CA_FILE": "/does/not/exist.pem"], "cannot be read"),
            (["KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_VERIFY_HOSTNAME": "no"], "must be true or false"),
            (["KAFKA_PROPERTIES": "sasl.password=hunter2"], "KAFKA_PROPERTIES may not carry sasl.password"),
        ]
        for (values, expected) in cases {
            do {
                _ = try KafkaClientSettings(EnvironmentSettings(values), clientID: "ingest")
                Issue.record("accepted \(values)")
            } catch {
                #expect(error.description.contains(expected), "\(values): \(error.description)")
                #expect(!error.description.contains("s3cret") && !error.description.contains("hunter2"))
            }
        }
    }
}

/// Tracing is off unless asked for, and a misspelt exporter stops the service at start instead of silently
/// tracing nothing.
@Suite struct TracingSettingsTests {
    @Test func tracingIsOffByDefaultAndAnUnknownExporterIsRefused() throws {
        let logger = Logger(label: "tracing-settings")
        #expect(
            try TracingSetup.bootstrap(service: "ingest", settings: EnvironmentSettings([:]), logger: logger) == nil)
        #expect(
            try TracingSetup.bootstrap(
                service: "ingest", settings: EnvironmentSettings(["OTEL_TRACES_EXPORTER": "none"]), logger: logger)
                == nil)
        do {
            _ = try TracingSetup.bootstrap(
                service: "ingest", settings: EnvironmentSettings(["OTEL_TRACES_EXPORTER": "jaeger"]), logger: logger)
            Issue.record("accepted an unknown exporter")
        } catch {
            #expect(error.description == "OTEL_TRACES_EXPORTER must be none or otlp, not jaeger")
        }
    }
}
