public import AppStoreModels
public import Crypto
public import Foundation

extension PromotionalOfferSignatureV1 {
    /// How long after `timestamp` the App Store accepts a V1 signature.
    public static let validity: TimeInterval = 24 * 3600
    /// The separator Apple joins the signed fields with (U+2063, INVISIBLE SEPARATOR).
    public static let separator = "\u{2063}"

    /// The text the signature covers: bundle id, key id, product, offer, lowercased app account token (or empty),
    /// lowercased nonce and timestamp, joined by U+2063.
    public static func signedText(
        bundleId: String, keyId: String, productId: String, offerIdentifier: String, appAccountToken: String?,
        nonce: String, timestamp: Int64
    ) -> String {
        [
            bundleId, keyId, productId, offerIdentifier, (appAccountToken ?? "").lowercased(), nonce.lowercased(),
            String(timestamp),
        ].joined(separator: Self.separator)
    }

    /// Signs an offer for `bundleId` with `key`, with a fresh nonce unless one is given.
    public static func sign(
        bundleId: String, productId: String, offerIdentifier: String, appAccountToken: String?,
        key: OfferSigningKey, nonce: UUID? = nil, now: Date = Date()
    ) throws -> Self {
        let nonceText = OfferNonce.text(nonce)
        let timestamp = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let text = Self.signedText(
            bundleId: bundleId, keyId: key.keyID, productId: productId, offerIdentifier: offerIdentifier,
            appAccountToken: appAccountToken, nonce: nonceText, timestamp: timestamp)
        let signature = try key.privateKey.signature(for: Data(text.utf8))
        return Self(
            encodedSignature: signature.derRepresentation.base64EncodedString(), productId: productId,
            nonce: nonceText, timestamp: timestamp, keyId: key.keyID, offerIdentifier: offerIdentifier,
            appAccountToken: appAccountToken?.lowercased())
    }

    /// Checks the signature as the App Store does before granting the offer: the key id, the signature over the
    /// fields for `bundleId` with `publicKey`, and a timestamp at most 24 hours old (a minute of skew allowed).
    public func verify(
        bundleId: String, keyID: String, publicKey: P256.Signing.PublicKey, now: Date = Date()
    ) throws(OfferSignatureError) {
        guard self.keyId == keyID else { throw OfferSignatureError("unknown key \(self.keyId)") }
        guard let der = Data(base64Encoded: self.encodedSignature),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { throw OfferSignatureError("the signature is not Base64 DER") }
        let text = Self.signedText(
            bundleId: bundleId, keyId: self.keyId, productId: self.productId, offerIdentifier: self.offerIdentifier,
            appAccountToken: self.appAccountToken, nonce: self.nonce, timestamp: self.timestamp)
        guard publicKey.isValidSignature(signature, for: Data(text.utf8)) else {
            throw OfferSignatureError("the signature does not verify")
        }
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        guard self.timestamp <= nowMillis + 60_000 else { throw OfferSignatureError("the timestamp is in the future") }
        guard nowMillis - self.timestamp <= Int64(Self.validity * 1000) else {
            throw OfferSignatureError("the signature is older than 24 hours")
        }
    }
}

/// An offer signature the App Store would refuse, with the reason.
public struct OfferSignatureError: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
