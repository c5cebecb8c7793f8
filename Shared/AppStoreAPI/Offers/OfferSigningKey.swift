public import Crypto
import Foundation

/// The In-App Purchase key that signs offers for StoreKit (App Store Connect → Users and Access → Integrations →
/// In-App Purchase): its key identifier, the team's issuer identifier and the P-256 private key of its `.p8`.
/// Configured apart from the App Store Server API key on purpose (see docs/offers.md): an offer signature is
/// something the app hands to StoreKit, so revoking one key must not silence the other.
public struct OfferSigningKey: Sendable {
    /// The key's identifier (V1's `keyIdentifier`, V2's header `kid`).
    public var keyID: String
    /// The team's issuer identifier (V2's `iss`).
    public var issuerID: String
    /// The ES256 private key.
    public var privateKey: P256.Signing.PrivateKey

    /// A key from its parts.
    public init(keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
    }

    /// A key from the `.p8` file App Store Connect issues (PKCS#8 PEM).
    public init(keyID: String, issuerID: String, pkcs8PEM: String) throws {
        self.init(
            keyID: keyID, issuerID: issuerID, privateKey: try P256.Signing.PrivateKey(pemRepresentation: pkcs8PEM))
    }
}
