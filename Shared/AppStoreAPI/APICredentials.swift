public import Crypto

/// An In-App Purchase key from App Store Connect (Users and Access → Integrations), with the identifiers
/// every App Store Server API token names.
public struct APICredentials: Sendable {
    /// The key's identifier (the JWT header's `kid`).
    public var keyID: String
    /// The team's issuer identifier (`iss`).
    public var issuerID: String
    /// The app's bundle identifier (`bid`).
    public var bundleID: String
    /// The ES256 private key.
    public var privateKey: P256.Signing.PrivateKey

    /// Credentials from a key object.
    public init(keyID: String, issuerID: String, bundleID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.privateKey = privateKey
    }

    /// Credentials from the `.p8` file App Store Connect issues (PKCS#8 PEM).
    public init(keyID: String, issuerID: String, bundleID: String, pkcs8PEM: String) throws {
        self.init(
            keyID: keyID, issuerID: issuerID, bundleID: bundleID,
            privateKey: try P256.Signing.PrivateKey(pemRepresentation: pkcs8PEM))
    }
}
