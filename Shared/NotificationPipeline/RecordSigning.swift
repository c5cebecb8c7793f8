import Crypto
import Foundation
public import ServiceRuntime

/// One producer's record-signing keys (or, in the entitlement-updater, one producer's verifying keys): HMAC-SHA256
/// secrets named by id. The records on the verified topic that Apple did not sign as such carry a MAC by their
/// producer's key (``RecordSigner``), and the updater applies only records whose producer, kind and MAC check out
/// (``RecordVerifier``); anything else goes to the DLQ with reason `unauthenticated`. So a client that can merely
/// write to the topic grants nothing, and a producer's key writes only that producer's kinds.
///
/// Keys rotate: a producer's `RECORD_SIGNING_KEYS` lists `id:base64secret` entries (or `RECORD_SIGNING_KEYS_FILE`
/// a file of them) and its first key signs; the updater's `RECORD_VERIFYING_KEYS` lists every producer's keys.
/// Add the new key to the updater, then put it first in the producer, then drop the old one from both once the
/// topic holds no record it signed.
public struct RecordSigningKeys: Sendable {
    /// The shortest secret taken (bytes).
    public static let minimumSecretBytes = 32

    /// One key.
    struct Key: Sendable {
        var id: String
        var secret: SymmetricKey
    }

    let keys: [Key]

    /// The key with this id.
    func key(_ id: some StringProtocol) -> Key? { self.keys.first { $0.id == id } }

    /// Keys from `(id, secret)` pairs; the first signs. `variable` names the setting in errors.
    public init(_ pairs: [(id: String, secret: [UInt8])], variable: String = "RECORD_SIGNING_KEYS")
        throws(SettingsError)
    {
        guard !pairs.isEmpty else { throw SettingsError("\(variable) must name at least one key") }
        var keys: [Key] = []
        for (id, secret) in pairs {
            guard !id.isEmpty, !id.contains(":"), !id.contains(",") else {
                throw SettingsError("\(variable): a key id is a name without : or ,")
            }
            guard secret.count >= Self.minimumSecretBytes else {
                throw SettingsError(
                    "\(variable): key \(id) has \(secret.count) bytes; at least \(Self.minimumSecretBytes) are needed")
            }
            guard !keys.contains(where: { $0.id == id }) else {
                throw SettingsError("\(variable): key \(id) is named twice")
            }
            keys.append(Key(id: id, secret: SymmetricKey(data: secret)))
        }
        self.keys = keys
    }

    /// Reads `RECORD_SIGNING_KEYS` (`id:base64secret,…`) or `RECORD_SIGNING_KEYS_FILE` (the same text in a file,
    /// for a mounted Secret). One of them must be set: a service that writes verified records does not start
    /// without keys.
    public init(_ settings: EnvironmentSettings) throws(SettingsError) {
        let text = try Self.text(
            inline: settings.string("RECORD_SIGNING_KEYS", default: ""),
            file: settings.string("RECORD_SIGNING_KEYS_FILE", default: ""), variable: "RECORD_SIGNING_KEYS",
            format: "id:base64secret")
        var pairs: [(id: String, secret: [UInt8])] = []
        for entry in Self.entries(text) {
            pairs.append(try Self.pair(entry, variable: "RECORD_SIGNING_KEYS"))
        }
        try self.init(pairs)
    }

    // MARK: Reading settings

    /// The value of `variable` (`inline`), or the contents of the file `variable_FILE` names (`file`); exactly one
    /// must be set. The callers read both with their names written out, so the configuration reference finds them.
    static func text(inline: String, file: String, variable: String, format: String) throws(SettingsError) -> String {
        guard !file.isEmpty else {
            guard !inline.isEmpty else {
                throw SettingsError(
                    "\(variable) (or \(variable)_FILE) must be set: \(format), at least 32 random bytes each")
            }
            return inline
        }
        guard inline.isEmpty else { throw SettingsError("set \(variable) or \(variable)_FILE, not both") }
        guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw SettingsError("\(variable)_FILE: cannot read \(file)")
        }
        let text = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw SettingsError("\(variable)_FILE: \(file) is empty") }
        return text
    }

    /// The comma- (or newline-) separated entries of a key list.
    static func entries(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isNewline })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// One `id:base64secret` entry.
    static func pair(_ entry: String, variable: String) throws(SettingsError)
        -> (id: String, secret: [UInt8])
    {
        let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let secret = Data(base64Encoded: parts[1]) else {
            throw SettingsError("\(variable) entries are id:base64secret, not \(parts.first ?? ""):…")
        }
        return (parts[0], Array(secret))
    }
}

// MARK: - The MAC

/// What a record signature covers, and how it is computed: shared by ``RecordSigner`` and ``RecordVerifier``.
enum RecordMAC {
    /// Base64 of HMAC-SHA256 over the record's parts.
    static func mac(_ secret: SymmetricKey, _ parts: RecordSignatureParts) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Self.message(parts), using: secret)).base64EncodedString()
    }

    /// Whether `given` is the MAC of the parts under `secret` (compared in constant time).
    static func isValid(_ given: Data, _ parts: RecordSignatureParts, secret: SymmetricKey) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Self.message(parts), using: secret)
    }

    /// What is authenticated: a version tag, then the producer, the signing time, the schema header, key and value,
    /// each as an 8-byte big-endian length (or all ones when absent) and its bytes, so no two different records give
    /// the same message.
    static func message(_ parts: RecordSignatureParts) -> [UInt8] {
        var message = Array("appstore-record-mac-v2".utf8)
        message.reserveCapacity(64 + (parts.key?.count ?? 0) + (parts.value?.count ?? 0))
        let fields: [[UInt8]?] = [
            Array(parts.producer.utf8), Array(parts.signedAt.utf8), parts.schema.map { Array($0.utf8) }, parts.key,
            parts.value,
        ]
        for part in fields {
            let length = part.map { UInt64($0.count) } ?? UInt64.max
            withUnsafeBytes(of: length.bigEndian) { message.append(contentsOf: $0) }
            message.append(contentsOf: part ?? [])
        }
        return message
    }
}

/// The parts of a record its signature covers.
struct RecordSignatureParts {
    var producer: String
    var signedAt: String
    var schema: String?
    var key: [UInt8]?
    var value: [UInt8]?
}
