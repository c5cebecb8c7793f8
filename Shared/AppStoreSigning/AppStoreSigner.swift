public import AppStoreModels
public import Crypto
public import Foundation
import JWSVerification

/// Signs payloads the way the App Store does: compact JWS, header `{"alg":"ES256","x5c":[leaf, intermediate,
/// root]}`, raw r‖s P-256 signature, base64url without padding.
///
/// Every part can be overridden to build the malformed or forged inputs a verifier must refuse.
public struct AppStoreSigner: Sendable {
    /// How the signature bytes are written.
    public enum SignatureFormat: Sendable {
        /// Raw 64-byte r‖s, as JWS requires.
        case raw
        /// ASN.1 DER, a common mistake a verifier must refuse.
        case der
    }

    /// The protected header fields.
    public struct Header: Sendable {
        /// The algorithm; nil leaves it out.
        public var alg: String?
        /// The certificate chain; nil leaves it out.
        public var x5c: [String]?

        /// Creates a header.
        public init(alg: String? = "ES256", x5c: [String]?) {
            self.alg = alg
            self.x5c = x5c
        }
    }

    /// The key that signs.
    public let signingKey: P256.Signing.PrivateKey
    /// The header written unless a call overrides it.
    public let header: Header

    /// A signer using a test PKI's leaf key and its full chain in `x5c`.
    public init(pki: TestPKI) {
        self.signingKey = pki.leafKey
        self.header = Header(x5c: pki.x5c)
    }

    /// A signer with any key and header (for forged and Xcode-style data).
    public init(signingKey: P256.Signing.PrivateKey, header: Header) {
        self.signingKey = signingKey
        self.header = header
    }

    // MARK: Signing

    /// Signs a payload encoded as canonical JSON.
    public func sign(_ payload: some Encodable) throws -> String {
        try self.sign(payloadJSON: Array(AppStoreJSON.makeCanonicalEncoder().encode(payload)))
    }

    /// Signs raw payload bytes, with an optional header override and signature format.
    public func sign(payloadJSON: [UInt8], header: Header? = nil, format: SignatureFormat = .raw) throws -> String {
        let headerJSON = try Self.encode(header ?? self.header)
        let signingInput = Self.base64URL(headerJSON) + "." + Self.base64URL(payloadJSON)
        let signature = try self.signingKey.signature(for: Data(signingInput.utf8))
        let signatureBytes = format == .raw ? signature.rawRepresentation : signature.derRepresentation
        return signingInput + "." + Self.base64URL(signatureBytes)
    }

    /// Signs a notification after signing its nested data with `nestedSigner` (self by default): the
    /// transaction and renewal info go into `data`, the app transaction into `appData`.
    public func signNotification(
        _ payload: ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload? = nil,
        renewalInfo: JWSRenewalInfoDecodedPayload? = nil,
        appTransaction: AppTransaction? = nil,
        nestedSigner: AppStoreSigner? = nil
    ) throws -> String {
        let nested = nestedSigner ?? self
        var payload = payload
        if let transaction { payload.data?.signedTransactionInfo = try nested.sign(transaction) }
        if let renewalInfo { payload.data?.signedRenewalInfo = try nested.sign(renewalInfo) }
        if let appTransaction { payload.appData?.signedAppTransactionInfo = try nested.sign(appTransaction) }
        return try self.sign(payload)
    }

    // MARK: Encoding helpers

    /// base64url without padding.
    public static func base64URL(_ bytes: some DataProtocol) -> String {
        Base64URL.encode(bytes)
    }

    /// The header as compact JSON, leaving out absent fields.
    private static func encode(_ header: Header) throws -> [UInt8] {
        var object: [String: any Sendable] = [:]
        if let alg = header.alg { object["alg"] = alg }
        if let x5c = header.x5c { object["x5c"] = x5c }
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
