import AppStoreModels
import Crypto
public import Foundation
import JWSVerification
public import Logging
public import PostgresNIO

/// A secret API key of `customer-api`: it belongs to one app and has its own rate limit.
///
/// The token an app team sends is `ck_<keyId>_<secret>`: the key id finds the row, the secret (32 random
/// bytes, base64url) is compared in constant time with the SHA-256 stored for it. The secret is never
/// stored and is shown only when the key is created or rotated.
public struct APIKey: Codable, Hashable, Sendable {
    public var keyId: String
    public var bundleId: String
    public var label: String
    public var ratePerSecond: Int
    public var createdAt: Date
    /// When a rotated key stops working (its grace period's end).
    public var expiresAt: Date?
    public var revokedAt: Date?
    /// The key that replaced this one by rotation.
    public var replacedBy: String?
    /// `app` (the app's own calls) or `admin` (also the support routes and console of its app).
    public var role: String = "app"

    /// Whether the key may use the support routes and console.
    public var isAdmin: Bool { self.role == "admin" }

    public init(
        keyId: String, bundleId: String, label: String, ratePerSecond: Int, createdAt: Date, expiresAt: Date? = nil,
        revokedAt: Date? = nil, replacedBy: String? = nil, role: String = "app"
    ) {
        self.role = role
        self.keyId = keyId
        self.bundleId = bundleId
        self.label = label
        self.ratePerSecond = ratePerSecond
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.replacedBy = replacedBy
    }

    /// Whether the key authenticates at `now`.
    public func isUsable(at now: Date) -> Bool {
        self.revokedAt == nil && (self.expiresAt.map { $0 > now } ?? true)
    }
}

/// A key together with its token: what `create` and `rotate` return, the only time the secret is seen.
public struct IssuedAPIKey: Sendable {
    public var key: APIKey
    public var token: String
}

/// Why a presented token was refused (all are answered 401).
public enum APIKeyRefusal: Error, Equatable, Sendable {
    case malformed, unknown, wrongSecret, revoked, expired
}

/// Creates, lists, rotates, revokes and checks `customer-api` keys in PostgreSQL.
public struct APIKeyStore: Sendable {
    static let prefix = "ck_"
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: Administration

    /// Creates a key for an app (`role`: `app` or `admin`).
    public func create(bundleId: String, label: String = "", ratePerSecond: Int = 100, role: String = "app")
        async throws -> IssuedAPIKey
    {
        guard ["app", "admin"].contains(role) else { throw APIKeyStoreError("role must be app or admin, not \(role)") }
        let keyId = Self.randomHex(bytes: 8)
        let secret = Self.randomSecret()
        try await self.client.query(
            """
            INSERT INTO api_keys (key_id, bundle_id, label, secret_sha256, rate_per_second, role)
            VALUES (\(keyId), \(bundleId), \(label), \(Self.hash(secret)), \(ratePerSecond), \(role))
            """, logger: self.logger)
        guard let key = try await self.key(keyId) else {
            throw APIKeyStoreError("key \(keyId) vanished after its insert")
        }
        return IssuedAPIKey(key: key, token: Self.prefix + keyId + "_" + secret)
    }

    /// Every key (of one app, when given), newest first; secrets are never listed.
    public func list(bundleId: String? = nil) async throws -> [APIKey] {
        try await self.rows(keyId: nil, bundleId: bundleId).map(\.0)
    }

    /// One key by id.
    public func key(_ keyId: String) async throws -> APIKey? {
        try await self.rows(keyId: keyId, bundleId: nil).first?.0
    }

    /// Issues a new key for the same app, label and rate; the old one keeps working for `grace`, then stops.
    public func rotate(_ keyId: String, grace: Duration = .seconds(3600)) async throws -> IssuedAPIKey {
        guard let old = try await self.key(keyId), old.revokedAt == nil else {
            throw APIKeyStoreError("no usable key \(keyId)")
        }
        let issued = try await self.create(
            bundleId: old.bundleId, label: old.label, ratePerSecond: old.ratePerSecond, role: old.role)
        try await self.client.query(
            """
            UPDATE api_keys SET expires_at = now() + make_interval(secs => \(grace.timeInterval)), replaced_by = \(issued.key.keyId)
            WHERE key_id = \(keyId)
            """, logger: self.logger)
        return issued
    }

    /// Revokes a key at once; returns false when there is no such key.
    @discardableResult
    public func revoke(_ keyId: String) async throws -> Bool {
        var found = false
        for try await _ in try await self.client.query(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE key_id = \(keyId) RETURNING 1",
            logger: self.logger
        ).decode(Int.self) { found = true }
        return found
    }

    // MARK: Authentication

    /// The key a token names, if its secret matches and the key is usable now.
    public func authenticate(_ token: String, now: Date = Date()) async throws -> Result<APIKey, APIKeyRefusal> {
        guard let (keyId, _) = Self.parts(of: token) else { return .failure(.malformed) }
        return Self.check(token, against: try await self.rows(keyId: keyId, bundleId: nil).first, now: now)
    }

    /// Every key with the SHA-256 of its secret (what customer-api holds in memory; a few hundred bytes a key).
    public func allKeysWithHashes() async throws -> [(key: APIKey, secretHash: [UInt8])] {
        try await self.rows(keyId: nil, bundleId: nil).map { ($0.0, $0.1) }
    }

    /// The key id and secret of a well-formed token.
    public static func parts(of token: String) -> (keyId: String, secret: String)? {
        guard Self.isWellFormed(token) else { return nil }
        let parts = token.dropFirst(Self.prefix.count).split(separator: "_", maxSplits: 1).map(String.init)
        return (parts[0], parts[1])
    }

    /// Whether `token` is the key `stored` (found by its id, with its secret's hash) and usable at `now`; no I/O.
    public static func check(_ token: String, against stored: (APIKey, [UInt8])?, now: Date) -> Result<
        APIKey, APIKeyRefusal
    > {
        guard let (_, secret) = Self.parts(of: token) else { return .failure(.malformed) }
        guard let (key, hash) = stored else { return .failure(.unknown) }
        guard Self.constantTimeEqual(hash, Array(buffer: Self.hash(secret))) else { return .failure(.wrongSecret) }
        if key.revokedAt != nil { return .failure(.revoked) }
        if !key.isUsable(at: now) { return .failure(.expired) }
        return .success(key)
    }

    /// Whether a token has a key's shape (`ck_` + 16 hex digits + `_` + secret), so it is worth a look-up.
    public static func isWellFormed(_ token: String) -> Bool {
        guard token.hasPrefix(Self.prefix) else { return false }
        let parts = token.dropFirst(Self.prefix.count).split(separator: "_", maxSplits: 1)
        return parts.count == 2 && parts[0].count == 16 && parts[0].allSatisfy(\.isHexDigit)
    }

    /// Compares two byte strings in time that depends only on their lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    // MARK: Rows

    /// The keys with this id and of this app (either filter left out when nil), newest first, with their stored
    /// hashes. One statement, both values bound.
    private func rows(keyId: String?, bundleId: String?) async throws -> [(APIKey, [UInt8])] {
        var result: [(APIKey, [UInt8])] = []
        let query: PostgresQuery = """
            SELECT key_id, bundle_id, label, rate_per_second, created_at, expires_at, revoked_at, replaced_by, secret_sha256, role
            FROM api_keys
            WHERE (\(keyId)::text IS NULL OR key_id = \(keyId)) AND (\(bundleId)::text IS NULL OR bundle_id = \(bundleId))
            ORDER BY created_at DESC, key_id
            """
        for try await row in try await self.client.query(query, logger: self.logger)
            .decode((String, String, String, Int32, Date, Date?, Date?, String?, ByteBuffer, String).self)
        {
            let key = APIKey(
                keyId: row.0, bundleId: row.1, label: row.2, ratePerSecond: Int(row.3), createdAt: row.4,
                expiresAt: row.5,
                revokedAt: row.6, replacedBy: row.7, role: row.9)
            result.append((key, Array(buffer: row.8)))
        }
        return result
    }

    private static func hash(_ secret: String) -> ByteBuffer { ByteBuffer(bytes: SHA256.hash(data: Data(secret.utf8))) }

    private static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    private static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }
}

/// A key operation that cannot be done (a permanent error: the key does not exist or is revoked).
public struct APIKeyStoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
