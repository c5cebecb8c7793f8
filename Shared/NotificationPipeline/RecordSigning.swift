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
        /// HMAC-SHA256 keyed with the secret: its two padded key blocks are hashed once, not for every record.
        var keyed: PreparedHMAC

        init(id: String, secret: [UInt8]) {
            self.id = id
            self.keyed = PreparedHMAC(key: secret)
        }
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
            keys.append(Key(id: id, secret: secret))
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
    /// The version tag every authenticated message starts with.
    private static let tag = Array("appstore-record-mac-v2".utf8)

    /// Base64 of HMAC-SHA256 over the record's parts, from the key's prepared state (``RecordSigningKeys/Key``).
    static func mac(_ keyed: PreparedHMAC, _ parts: RecordSignatureParts) -> String {
        Data(Self.authenticate(parts, from: keyed)).base64EncodedString()
    }

    /// Whether `given` is the MAC of the parts under the key whose prepared state is `keyed` (compared in
    /// constant time).
    static func isValid(_ given: Data, _ parts: RecordSignatureParts, keyed: PreparedHMAC) -> Bool {
        Self.authenticate(parts, from: keyed) == given
    }

    /// HMAC-SHA256 over what is authenticated: a version tag, then the producer, the signing time, the schema
    /// header, key and value, each as an 8-byte big-endian length (or all ones when absent) and its bytes, so no two
    /// different records give the same message. Everything before the value's bytes is small and goes to the hash
    /// in one piece, the value (kilobytes) in place after it, so the record is not copied into one buffer first.
    private static func authenticate(_ parts: RecordSignatureParts, from keyed: PreparedHMAC) -> SHA256.Digest {
        var prefix = Self.tag
        prefix.reserveCapacity(160 + (parts.key?.count ?? 0))
        Self.field(Array(parts.producer.utf8), into: &prefix)
        Self.field(Array(parts.signedAt.utf8), into: &prefix)
        Self.field(parts.schema.map { Array($0.utf8) }, into: &prefix)
        Self.field(parts.key, into: &prefix)
        Self.length(of: parts.value, into: &prefix)
        return keyed.code { hash in
            prefix.withUnsafeBytes { hash.update(bufferPointer: $0) }
            parts.value?.withUnsafeBytes { hash.update(bufferPointer: $0) }
        }
    }

    /// One field: its length (all ones when absent), then its bytes.
    private static func field(_ bytes: [UInt8]?, into message: inout [UInt8]) {
        Self.length(of: bytes, into: &message)
        if let bytes { message.append(contentsOf: bytes) }
    }

    /// A field's length as 8 big-endian bytes, all ones when it is absent.
    private static func length(of bytes: [UInt8]?, into message: inout [UInt8]) {
        let length = bytes.map { UInt64($0.count) } ?? UInt64.max
        withUnsafeBytes(of: length.bigEndian) { message.append(contentsOf: $0) }
    }
}

/// HMAC-SHA256 (RFC 2104) with the key's inner and outer padded blocks hashed once: a MAC copies both states and
/// hashes only the message and the inner digest. swift-crypto's `HMAC` does the same arithmetic, but its generic
/// `update(data:)` spent more on itself than on the hashing it wraps for a record's two parts (docs/performance.md,
/// "The record's MAC and JSON"); `SHA256.update(bufferPointer:)` is not generic.
/// `RecordSigningTests` checks the result against swift-crypto's `HMAC`.
struct PreparedHMAC: Sendable {
    /// SHA-256 after the key XOR ipad block.
    private let inner: SHA256
    /// SHA-256 after the key XOR opad block.
    private let outer: SHA256

    /// Prepares the key: one longer than SHA-256's 64-byte block is hashed first, a shorter one padded with zeros.
    init(key: [UInt8]) {
        var block = key.count > 64 ? Array(SHA256.hash(data: key)) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        inner.update(data: block.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(data: block.map { $0 ^ 0x5C })
        self.inner = inner
        self.outer = outer
    }

    /// The MAC of the message `write` gives the inner hash.
    func code(_ write: (inout SHA256) -> Void) -> SHA256.Digest {
        var inner = self.inner
        write(&inner)
        var outer = self.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
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
