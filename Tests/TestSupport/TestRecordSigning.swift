import Foundation
import NotificationPipeline

/// The record-signing key the tests give every producer and the updater, in process and as
/// `RECORD_SIGNING_KEYS` to the binaries they start (a fixed test secret, never used outside tests).
public enum TestRecordSigning {
    /// The secret: 32 bytes.
    static let secret = Array("test-record-signing-secret-32-b!".utf8)

    /// The `RECORD_SIGNING_KEYS` value.
    public static let variable = "test:" + Data(secret).base64EncodedString()

    /// The keys.
    public static let keys: RecordSigningKeys = {
        do {
            return try RecordSigningKeys([(id: "test", secret: secret)])
        } catch {
            fatalError("the test key is valid: \(error)")
        }
    }()

    /// The environment entry for a binary.
    public static var environment: [String: String] { ["RECORD_SIGNING_KEYS": Self.variable] }
}
