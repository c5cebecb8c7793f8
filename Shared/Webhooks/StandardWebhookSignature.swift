import Crypto
public import Foundation

/// The headers of a Standard Webhooks delivery (https://www.standardwebhooks.com): `webhook-id` (the same for every
/// attempt of one delivery, so a receiver deduplicates on it), `webhook-timestamp` (seconds since 1970, of this
/// attempt) and `webhook-signature`, one `v1,<base64 HMAC-SHA256>` per secret, space-separated, over
/// `<id>.<timestamp>.<body>`. With two secrets during a rotation, a receiver holding either verifies.
public enum StandardWebhookSignature {
    /// The three headers for `body` sent as delivery `id` at `timestamp`, signed with every secret in `secrets`.
    public static func headers(id: String, timestamp: Date, body: [UInt8], secrets: [WebhookSecret]) -> [(
        name: String, value: String
    )] {
        let seconds = String(Int64(timestamp.timeIntervalSince1970.rounded(.down)))
        var signed = Array("\(id).\(seconds).".utf8)
        signed.append(contentsOf: body)
        let signatures = secrets.map { secret in
            let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: secret.key))
            return "v1," + Data(mac).base64EncodedString()
        }
        return [
            ("webhook-id", id), ("webhook-timestamp", seconds),
            ("webhook-signature", signatures.joined(separator: " ")),
        ]
    }
}
