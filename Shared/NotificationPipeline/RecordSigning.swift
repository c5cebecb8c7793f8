public import Crypto
import Foundation
import PipelineRecords
public import RdKafka
public import ServiceRuntime

/// Authenticates the records on the verified topic that Apple did not sign as such: every producer of that topic
/// (chain-verifier, customer-api, refund-resolver, `iapctl resync`) adds an HMAC-SHA256 over the record's
/// `schema` header, key and value with a key from a Secret, and the entitlement-updater applies only records
/// whose MAC one of its keys reproduces; anything else goes to the DLQ with reason `unauthenticated`. So a
/// client that can merely write to the topic grants nothing.
///
/// Keys rotate: `RECORD_SIGNING_KEYS` lists `id:base64secret` entries (or `RECORD_SIGNING_KEYS_FILE` a file of
/// them); the first signs, every one verifies. Add the new key second everywhere, then move it first, then
/// drop the old one once the topic holds no record it signed.
public struct RecordSigningKeys: Sendable {
    /// The header carrying `keyId:base64(mac)`.
    public static let header = "record-signature"
    /// The shortest secret taken (bytes).
    public static let minimumSecretBytes = 32

    /// One key.
    struct Key: Sendable {
        var id: String
        var secret: SymmetricKey
    }

    let keys: [Key]

    /// Keys from `(id, secret)` pairs; the first signs.
    public init(_ pairs: [(id: String, secret: [UInt8])]) throws(SettingsError) {
        guard !pairs.isEmpty else { throw SettingsError("RECORD_SIGNING_KEYS must name at least one key") }
        var keys: [Key] = []
        for (id, secret) in pairs {
            guard !id.isEmpty, !id.contains(":"), !id.contains(",") else {
                throw SettingsError("RECORD_SIGNING_KEYS: a key id is a name without : or ,")
            }
            guard secret.count >= Self.minimumSecretBytes else {
                throw SettingsError(
                    "RECORD_SIGNING_KEYS: key \(id) has \(secret.count) bytes; at least \(Self.minimumSecretBytes) are needed"
                )
            }
            guard !keys.contains(where: { $0.id == id }) else {
                throw SettingsError("RECORD_SIGNING_KEYS: key \(id) is named twice")
            }
            keys.append(Key(id: id, secret: SymmetricKey(data: secret)))
        }
        self.keys = keys
    }

    /// Reads `RECORD_SIGNING_KEYS` (`id:base64secret,…`) or `RECORD_SIGNING_KEYS_FILE` (the same text in a file,
    /// for a mounted Secret). One of them must be set: a service that writes or applies verified records does not
    /// start without keys.
    public init(_ settings: EnvironmentSettings) throws(SettingsError) {
        var text = settings.string("RECORD_SIGNING_KEYS", default: "")
        let file = settings.string("RECORD_SIGNING_KEYS_FILE", default: "")
        if !file.isEmpty {
            guard text.isEmpty else {
                throw SettingsError("set RECORD_SIGNING_KEYS or RECORD_SIGNING_KEYS_FILE, not both")
            }
            guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw SettingsError("RECORD_SIGNING_KEYS_FILE: cannot read \(file)")
            }
            text = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !text.isEmpty else {
            throw SettingsError(
                "RECORD_SIGNING_KEYS (or RECORD_SIGNING_KEYS_FILE) must be set: id:base64secret, at least 32 random bytes"
            )
        }
        var pairs: [(id: String, secret: [UInt8])] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        where !entry.isEmpty {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let secret = Data(base64Encoded: parts[1]) else {
                throw SettingsError("RECORD_SIGNING_KEYS entries are id:base64secret, not \(parts.first ?? ""):…")
            }
            pairs.append((parts[0], Array(secret)))
        }
        try self.init(pairs)
    }

    // MARK: Signing

    /// The record with its `record-signature` header (by the first key).
    public func sign(_ record: ProducerRecord) -> ProducerRecord {
        var signed = record
        let schema = record.headers.first { $0.name == PipelineHeaders.schema }?.text
        let key = self.keys[0]
        signed.headers.removeAll { $0.name == Self.header }
        signed.headers.append(
            KafkaHeader(
                name: Self.header,
                text: key.id + ":" + Self.mac(key.secret, schema: schema, key: record.key, value: record.value)))
        return signed
    }

    // MARK: Verifying

    /// Why a consumed record is not authenticated.
    public enum Refusal: Error, CustomStringConvertible, Hashable, Sendable {
        case unsigned
        case malformed
        case unknownKey(String)
        case wrongSignature(String)

        public var description: String {
            switch self {
            case .unsigned: "the record carries no \(RecordSigningKeys.header) header"
            case .malformed: "the \(RecordSigningKeys.header) header is not keyId:base64"
            case .unknownKey(let id): "signed with key \(id), which this service does not hold"
            case .wrongSignature(let id): "the signature by key \(id) does not match the record (forged or altered)"
            }
        }
    }

    /// Checks a consumed record's MAC: nil when one of the keys reproduces it, else why not.
    public func refusal(of record: ConsumerRecord) -> Refusal? {
        guard let header = record.header(Self.header)?.text else { return .unsigned }
        let parts = header.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let given = Data(base64Encoded: parts[1]) else { return .malformed }
        guard let key = self.keys.first(where: { $0.id == parts[0] }) else { return .unknownKey(parts[0]) }
        let message = Self.message(
            schema: record.header(PipelineHeaders.schema)?.text, key: record.key, value: record.value)
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: message, using: key.secret)
            ? nil : .wrongSignature(key.id)
    }

    // MARK: The MAC

    /// Base64 of HMAC-SHA256 over the record's parts.
    static func mac(_ secret: SymmetricKey, schema: String?, key: [UInt8]?, value: [UInt8]?) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Self.message(schema: schema, key: key, value: value), using: secret))
            .base64EncodedString()
    }

    /// What is authenticated: a version tag, then the schema header, key and value, each as an 8-byte big-endian
    /// length (or all ones when absent) and its bytes, so no two different records give the same message.
    static func message(schema: String?, key: [UInt8]?, value: [UInt8]?) -> [UInt8] {
        var message = Array("appstore-record-mac-v1".utf8)
        for part in [schema.map { Array($0.utf8) }, key, value] {
            let length = part.map { UInt64($0.count) } ?? UInt64.max
            withUnsafeBytes(of: length.bigEndian) { message.append(contentsOf: $0) }
            message.append(contentsOf: part ?? [])
        }
        return message
    }
}
