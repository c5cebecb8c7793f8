/// A promotional offer signature of StoreKit's original form (and of Retention Messaging's
/// `promotionalOfferSignatureV1`): the fields StoreKit passes to the App Store with the Base64 DER ECDSA
/// signature over them. Signing and checking are `AppStoreAPI`'s (`PromotionalOfferSignatureV1.sign`, `verify`).
///
/// [PromotionalOfferSignatureV1](https://developer.apple.com/documentation/retentionmessaging/promotionalofferSignatureV1)
public struct PromotionalOfferSignatureV1: Codable, Hashable, Sendable {
    /// Base64 of the DER ECDSA P-256 / SHA-256 signature.
    public var encodedSignature: String
    public var productId: String
    /// A fresh UUID per signature, lowercased.
    public var nonce: String
    /// When it was signed, epoch milliseconds; StoreKit honours it for 24 hours.
    public var timestamp: Int64
    public var keyId: String
    public var offerIdentifier: String
    /// The app account token (StoreKit's `applicationUsername`), when the purchase carries one.
    public var appAccountToken: String?

    /// A signature from its fields (as StoreKit or Apple's real-time request hands them over).
    public init(
        encodedSignature: String, productId: String, nonce: String, timestamp: Int64, keyId: String,
        offerIdentifier: String, appAccountToken: String?
    ) {
        self.encodedSignature = encodedSignature
        self.productId = productId
        self.nonce = nonce
        self.timestamp = timestamp
        self.keyId = keyId
        self.offerIdentifier = offerIdentifier
        self.appAccountToken = appAccountToken
    }
}
