import Crypto
public import Foundation
import JWSVerification

/// The claims of an App Store Server API bearer token.
public struct APITokenClaims: Codable, Hashable, Sendable {
    /// The issuer identifier.
    public var iss: String
    /// Issued at, seconds since 1970. Our tokens carry it; Apple also serves tokens without it (its own server
    /// libraries send none), so a verifier must not demand it.
    public var iat: Int64?
    /// Expires at, seconds since 1970; at most 60 minutes after `iat` (or after now, without `iat`).
    public var exp: Int64
    /// Always `appstoreconnect-v1`.
    public var aud: String
    /// The bundle identifier.
    public var bid: String

    public init(iss: String, iat: Int64, exp: Int64, aud: String, bid: String) {
        self.iss = iss
        self.iat = iat
        self.exp = exp
        self.aud = aud
        self.bid = bid
    }
}

/// Makes the ES256 bearer tokens the App Store Server API requires: header `{alg, kid, typ}`, claims
/// `{iss, iat, exp, aud, bid}`. A fresh token per request, as Apple recommends; 5 minutes of life by default.
public struct APITokenFactory: Sendable {
    /// The audience every token names.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime Apple accepts.
    public static let maximumLifetime: TimeInterval = 3600

    public let credentials: APICredentials
    /// How long each token is valid. Default: 5 minutes; at most 60.
    public let lifetime: TimeInterval

    /// A factory; refuses lifetimes Apple would reject.
    public init(credentials: APICredentials, lifetime: TimeInterval = 300) throws(APITokenError) {
        guard lifetime > 0, lifetime <= Self.maximumLifetime else {
            throw APITokenError("a token may live at most 60 minutes, not \(Int(lifetime)) s")
        }
        self.credentials = credentials
        self.lifetime = lifetime
    }

    /// A signed token issued at `now`.
    public func token(now: Date = Date()) throws -> String {
        let issued = Int64(now.timeIntervalSince1970)
        let claims = APITokenClaims(
            iss: self.credentials.issuerID, iat: issued, exp: issued + Int64(self.lifetime), aud: Self.audience,
            bid: self.credentials.bundleID)
        let header = ["alg": "ES256", "kid": self.credentials.keyID, "typ": "JWT"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let input = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try self.credentials.privateKey.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

/// Checks an App Store Server API bearer token as Apple does (used by the App Store stand-in): signature
/// with the key registered for `kid`, `alg` ES256, audience, issuer, bundle, and a lifetime of at most 60
/// minutes that contains `now`.
public struct APITokenValidator: Sendable {
    /// Public keys by key identifier.
    public let keys: [String: P256.Signing.PublicKey]
    public let issuerID: String

    public init(keys: [String: P256.Signing.PublicKey], issuerID: String) {
        self.keys = keys
        self.issuerID = issuerID
    }

    /// The claims of a valid token; throws ``APITokenError`` saying what is wrong otherwise.
    public func validate(_ token: String, now: Date = Date()) throws(APITokenError) -> APITokenClaims {
        let claimBytes: [UInt8]
        do throws(ES256JWS.Failure) {
            claimBytes = try ES256JWS.verifiedClaims(token, keys: self.keys, kind: "JWT")
        } catch {
            throw APITokenError(error.reason)
        }
        guard let claims = try? JSONDecoder().decode(APITokenClaims.self, from: Data(claimBytes)) else {
            throw APITokenError("the claims are missing iss, exp, aud or bid")
        }
        guard claims.aud == APITokenFactory.audience else {
            throw APITokenError("aud must be \(APITokenFactory.audience)")
        }
        guard claims.iss == self.issuerID else { throw APITokenError("unknown issuer \(claims.iss)") }
        let seconds = Int64(now.timeIntervalSince1970)
        if let issued = claims.iat {
            guard claims.exp > issued, Double(claims.exp - issued) <= APITokenFactory.maximumLifetime else {
                throw APITokenError("exp must be after iat and at most 60 minutes later")
            }
            guard issued <= seconds + 60 else { throw APITokenError("the token is not valid now") }
        } else {
            // Without iat, the lifetime is bounded from now (a minute of clock skew allowed).
            guard Double(claims.exp - seconds) <= APITokenFactory.maximumLifetime + 60 else {
                throw APITokenError("exp must be at most 60 minutes away")
            }
        }
        guard seconds < claims.exp else { throw APITokenError("the token is not valid now") }
        return claims
    }
}

/// A token that cannot be made or is not valid.
public struct APITokenError: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
