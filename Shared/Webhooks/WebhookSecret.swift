public import Foundation

/// An endpoint's signing secret in the Standard Webhooks form, `whsec_` followed by the base64 of the key bytes (what a
/// receiver passes to its Standard Webhooks library). At least 24 bytes; new ones are 32 random bytes.
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    static let prefix = "whsec_"
    static let minimumBytes = 24

    /// The HMAC key.
    public let key: [UInt8]

    /// Reads `whsec_<base64>`; nil when the prefix, the base64 or the length is wrong.
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix),
            let key = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))), key.count >= Self.minimumBytes
        else { return nil }
        self.key = Array(key)
    }

    /// A new secret of 32 bytes from the system's random generator.
    public static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        return WebhookSecret(key: (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    init(key: [UInt8]) {
        self.key = key
    }

    /// The text form, to show once and to store.
    public var description: String { Self.prefix + Data(self.key).base64EncodedString() }
}
