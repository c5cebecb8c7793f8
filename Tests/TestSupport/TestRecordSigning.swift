import Foundation
import NotificationPipeline

/// The record-signing keys the tests give each producer, and the updater's list of all of them, in process and as
/// `RECORD_SIGNING_KEYS` / `RECORD_VERIFYING_KEYS` to the binaries they start (fixed test secrets, a different one
/// per producer, never used outside tests).
public enum TestRecordSigning {
    /// The producer's secret: 32 bytes naming it.
    public static func secret(_ producer: RecordProducer) -> [UInt8] {
        Array(
            (Array("test-record-key-\(producer.rawValue)".utf8) + Array(repeating: UInt8(ascii: "!"), count: 32))
                .prefix(32))
    }

    /// The producer's `RECORD_SIGNING_KEYS` value.
    public static func variable(_ producer: RecordProducer) -> String {
        "test:" + Data(Self.secret(producer)).base64EncodedString()
    }

    /// The producer's signer.
    public static func signer(_ producer: RecordProducer) -> RecordSigner {
        do {
            return RecordSigner(producer, keys: try RecordSigningKeys([(id: "test", secret: Self.secret(producer))]))
        } catch {
            fatalError("the test key is valid: \(error)")
        }
    }

    /// The updater's `RECORD_VERIFYING_KEYS` value: every producer's key.
    public static let verifyingVariable = RecordProducer.allCases.map { "\($0.rawValue):\(Self.variable($0))" }
        .joined(separator: ",")

    /// The updater's verifier.
    public static let verifier: RecordVerifier = {
        do {
            return RecordVerifier(
                try Dictionary(
                    uniqueKeysWithValues: RecordProducer.allCases.map {
                        ($0, try RecordSigningKeys([(id: "test", secret: Self.secret($0))]))
                    }))
        } catch {
            fatalError("the test keys are valid: \(error)")
        }
    }()

    /// The environment entry for a producer's binary.
    public static func environment(_ producer: RecordProducer) -> [String: String] {
        ["RECORD_SIGNING_KEYS": Self.variable(producer)]
    }

    /// The record keys a service's binary gets, by its name: a producer its own signing key, the updater every
    /// producer's keys (and no signing key), any other service neither.
    public static func environment(service: String) -> [String: String] {
        if service == "entitlement-updater" {
            return Self.verifyingEnvironment.merging(["RECORD_SIGNING_KEYS": ""]) { a, _ in a }
        }
        guard let producer = RecordProducer(rawValue: service) else { return ["RECORD_SIGNING_KEYS": ""] }
        return Self.environment(producer)
    }

    /// The environment entry for the entitlement-updater's binary.
    public static var verifyingEnvironment: [String: String] { ["RECORD_VERIFYING_KEYS": Self.verifyingVariable] }
}
