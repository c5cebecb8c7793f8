import Foundation
import Logging
import RdKafka
import ServiceRuntime
import TestSupport
import Testing

/// The clients' security settings against real brokers. What runs here (docs/security.md says the same):
/// - mutual TLS: Tansu 0.6.0 has no working TLS listener, so a TLS terminator (deploy/local/kafka-tls-proxy.py,
///   Python's ssl module) stands in front of it, demanding a client certificate signed by the test's CA; the
///   clients' TLS is librdkafka's own (OpenSSL), configured from the environment variables the services read;
/// - SASL: Tansu `--authentication` speaks SCRAM-SHA-256/512 but keeps users in its storage, and its memory storage
///   (the only one its build has) cannot be given a user before authentication is demanded, so a successful SASL
///   login cannot run here; what runs is the SCRAM exchange our settings start, refused for its unknown user
///   with a clear error, and a plaintext client refused by the same broker.
@Suite(.tags(.integration), .notInUnitRuns) struct KafkaSecurityTests {
    /// The refusals are the point here: librdkafka's retries of them stay out of the test output.
    static let quiet: Logger = {
        var logger = Logger(label: "kafka-security-test")
        logger.logLevel = .critical
        return logger
    }()

    /// The services' environment for mutual TLS with the test's certificates.
    static func tlsEnvironment(_ bootstrap: String, _ certificates: URL, ca: String = "ca.pem") -> [String: String] {
        [
            "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SECURITY_PROTOCOL": "SSL",
            "KAFKA_SSL_CA_FILE": certificates.appending(path: ca).path,
            "KAFKA_SSL_CERTIFICATE_FILE": certificates.appending(path: "client.pem").path,
            "KAFKA_SSL_KEY_FILE": certificates.appending(path: "client.key").path,
        ]
    }

    @Test func mutualTLSCarriesTopicsRecordsAndConsumerGroups() async throws {
        try await withLocalTLSBroker { bootstrap, certificates in
            let client = try KafkaClientSettings(
                EnvironmentSettings(Self.tlsEnvironment(bootstrap, certificates)), clientID: "tls-test")
            let kafka = KafkaTestClient(client: client)
            try await kafka.createTopics([("secured", 2)])
            try await kafka.produce(
                (0..<5).map { ProducerRecord(topic: "secured", key: Array("k\($0)".utf8), value: Array("v\($0)".utf8)) }
            )
            let records = try await kafka.readAll("secured", atLeast: 5, quiet: .milliseconds(500))
            #expect(
                records.map { String(decoding: $0.value ?? [], as: UTF8.self) }.sorted() == (0..<5).map { "v\($0)" })
        }
    }

    @Test func anotherCAOrNoClientCertificateIsRefusedWithTheReason() async throws {
        try await withLocalTLSBroker { bootstrap, certificates in
            // A CA that did not sign the broker's certificate.
            let other = certificates.deletingLastPathComponent().appending(path: "other")
            _ = try await LocalComponents.script("tls-certs.sh", [other.path, "localhost"])
            var environment = Self.tlsEnvironment(bootstrap, certificates)
            environment["KAFKA_SSL_CA_FILE"] = other.appending(path: "ca.pem").path
            let wrongCA = try KafkaClientSettings(EnvironmentSettings(environment), clientID: "tls-test")
            await #expect(throws: (any Error).self) {
                try await KafkaAdmin(settings: wrongCA, logger: Self.quiet)
                    .createTopics([("refused", 1)], timeout: .seconds(3))
            }
            do {
                try await KafkaAdmin(settings: wrongCA, logger: Self.quiet)
                    .createTopics([("refused", 1)], timeout: .seconds(3))
            } catch {
                #expect("\(error)".contains("certificate verify failed"), "\(error)")
            }
            // The broker's CA, but no client certificate: the broker ends the handshake.
            environment = Self.tlsEnvironment(bootstrap, certificates)
            environment["KAFKA_SSL_CERTIFICATE_FILE"] = nil
            environment["KAFKA_SSL_KEY_FILE"] = nil
            let anonymous = try KafkaClientSettings(EnvironmentSettings(environment), clientID: "tls-test")
            do {
                try await KafkaAdmin(settings: anonymous, logger: Self.quiet)
                    .createTopics([("refused", 1)], timeout: .seconds(3))
                Issue.record("a client without a certificate created a topic")
            } catch {
                #expect("\(error)".contains("last connection failure"), "\(error)")
            }
        }
    }

    @Test func aSCRAMLoginIsAttemptedAndAnUnknownUserRefusedClearly() async throws {
        try await withLocalSASLBroker { bootstrap in
            let directory = try LocalComponents.temporaryDirectory("sasl-password")
            defer { try? FileManager.default.removeItem(at: directory) }
            let passwordFile = directory.appending(path: "password")
            try Data("not-a-user-here\n".utf8).write(to: passwordFile)
            for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
                let client = try KafkaClientSettings(
                    EnvironmentSettings([
                        "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                        "KAFKA_SASL_MECHANISM": mechanism, "KAFKA_SASL_USERNAME": "nobody",
                        "KAFKA_SASL_PASSWORD_FILE": passwordFile.path,
                    ]),
                    clientID: "sasl-test")
                do {
                    try await KafkaAdmin(settings: client, logger: Self.quiet)
                        .createTopics([("refused", 1)], timeout: .seconds(3))
                    Issue.record("\(mechanism): an unknown user created a topic")
                } catch {
                    #expect("\(error)".contains("SASL SCRAM authentication failed"), "\(mechanism): \(error)")
                    #expect(!"\(error)".contains("not-a-user-here"), "the password appeared in an error")
                }
            }
            // Without SASL the same broker answers nothing.
            await #expect(throws: (any Error).self) {
                try await KafkaAdmin(
                    settings: KafkaClientSettings(bootstrapServers: [bootstrap]),
                    logger: Self.quiet
                ).createTopics([("refused", 1)], timeout: .seconds(3))
            }
        }
    }
}
