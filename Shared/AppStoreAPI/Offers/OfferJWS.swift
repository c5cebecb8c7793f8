import AppStoreModels
public import Crypto
public import Foundation
import JWSVerification

/// The claims of the JWS forms StoreKit takes from a server ("Generating JWS to sign App Store requests"):
/// the common `bid`, `iss`, `aud`, `iat`, `nonce`, and the feature's own fields.
public struct OfferJWSClaims: Codable, Hashable, Sendable {
    /// The app's bundle identifier.
    public var bid: String
    /// The team's issuer identifier.
    public var iss: String
    /// Which request this is: ``OfferJWS/Audience``.
    public var aud: String
    /// When it was signed, seconds since 1970.
    public var iat: Int64
    /// A fresh UUID per signature (lowercased).
    public var nonce: String
    public var productId: String
    /// Promotional offers: the offer's identifier in App Store Connect.
    public var offerIdentifier: String?
    /// Any transaction id of the customer (promotional: optional; introductory eligibility: required).
    public var transactionId: String?
    /// Introductory-offer eligibility: whether the customer may have the introductory offer.
    public var allowIntroductoryOffer: Bool?
}

/// Signs and checks the JWS forms of offers: a promotional offer (V2) and introductory-offer eligibility,
/// ES256 with the header `{alg, kid, typ}` Apple's libraries write.
public enum OfferJWS {
    /// The audiences Apple defines for these requests.
    public enum Audience: String, Sendable, CaseIterable {
        case promotionalOffer = "promotional-offer"
        case introductoryOfferEligibility = "introductory-offer-eligibility"
    }

    /// How long after `iat` a signature is honoured here (StoreKit's V1 window: 24 hours).
    public static let validity: TimeInterval = 24 * 3600

    /// A promotional offer signature (V2) for `productId` and `offerIdentifier`, optionally bound to a transaction.
    public static func promotionalOffer(
        bundleId: String, productId: String, offerIdentifier: String, transactionId: String?, key: OfferSigningKey,
        nonce: UUID? = nil, now: Date = Date()
    ) throws -> String {
        try self.sign(
            OfferJWSClaims(
                bid: bundleId, iss: key.issuerID, aud: Audience.promotionalOffer.rawValue,
                iat: Int64(now.timeIntervalSince1970), nonce: OfferNonce.text(nonce), productId: productId,
                offerIdentifier: offerIdentifier, transactionId: transactionId),
            key: key)
    }

    /// An introductory-offer eligibility signature: whether the customer of `transactionId` may have the
    /// introductory offer of `productId`.
    public static func introductoryOfferEligibility(
        bundleId: String, productId: String, allowIntroductoryOffer: Bool, transactionId: String,
        key: OfferSigningKey, nonce: UUID? = nil, now: Date = Date()
    ) throws -> String {
        try self.sign(
            OfferJWSClaims(
                bid: bundleId, iss: key.issuerID, aud: Audience.introductoryOfferEligibility.rawValue,
                iat: Int64(now.timeIntervalSince1970), nonce: OfferNonce.text(nonce), productId: productId,
                transactionId: transactionId, allowIntroductoryOffer: allowIntroductoryOffer),
            key: key)
    }

    /// The compact JWS of `claims`. Header and claims are written by hand, keys sorted (the bytes JSONEncoder's
    /// `.sortedKeys` writes): a general serializer cost half as much again as the P-256 signature itself.
    static func sign(_ claims: OfferJWSClaims, key: OfferSigningKey) throws -> String {
        let header = #"{"alg":"ES256","kid":"# + JSONText.quoted(key.keyID) + #","typ":"JWT"}"#
        var json = "{"
        if let allow = claims.allowIntroductoryOffer { json += #""allowIntroductoryOffer":\#(allow),"# }
        json += #""aud":"# + JSONText.quoted(claims.aud) + #","bid":"# + JSONText.quoted(claims.bid)
        json +=
            #","iat":\#(claims.iat),"iss":"# + JSONText.quoted(claims.iss) + #","nonce":"#
            + JSONText.quoted(claims.nonce)
        if let offer = claims.offerIdentifier { json += #","offerIdentifier":"# + JSONText.quoted(offer) }
        json += #","productId":"# + JSONText.quoted(claims.productId)
        if let transaction = claims.transactionId { json += #","transactionId":"# + JSONText.quoted(transaction) }
        json += "}"
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(json.utf8))
        let signature = try key.privateKey.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Checks a signature as the App Store does before honouring it: ES256 with the key of `kid`, the audience,
    /// the app, the issuer, the feature's required fields, and an `iat` at most 24 hours old (a minute of skew).
    /// Returns the claims; nonce reuse is the caller's to refuse (it needs memory).
    public static func verify(
        _ jws: String, audience: Audience, bundleId: String, issuerID: String,
        keys: [String: P256.Signing.PublicKey], now: Date = Date()
    ) throws(OfferSignatureError) -> OfferJWSClaims {
        let claimBytes: [UInt8]
        do throws(ES256JWS.Failure) {
            claimBytes = try ES256JWS.verifiedClaims(jws, keys: keys)
        } catch {
            throw OfferSignatureError(error.reason)
        }
        guard let claims = try? JSONDecoder().decode(OfferJWSClaims.self, from: Data(claimBytes)) else {
            throw OfferSignatureError("the claims lack bid, iss, aud, iat, nonce or productId")
        }
        guard claims.aud == audience.rawValue else { throw OfferSignatureError("aud must be \(audience.rawValue)") }
        guard claims.bid == bundleId else { throw OfferSignatureError("signed for another app (\(claims.bid))") }
        guard claims.iss == issuerID else { throw OfferSignatureError("unknown issuer \(claims.iss)") }
        guard UUID(uuidString: claims.nonce) != nil else { throw OfferSignatureError("the nonce is not a UUID") }
        switch audience {
        case .promotionalOffer:
            guard claims.offerIdentifier?.isEmpty == false else { throw OfferSignatureError("no offerIdentifier") }
        case .introductoryOfferEligibility:
            guard claims.allowIntroductoryOffer != nil, claims.transactionId?.isEmpty == false else {
                throw OfferSignatureError("allowIntroductoryOffer and transactionId are required")
            }
        }
        let seconds = Int64(now.timeIntervalSince1970)
        guard claims.iat <= seconds + 60 else { throw OfferSignatureError("iat is in the future") }
        guard Double(seconds - claims.iat) <= Self.validity else {
            throw OfferSignatureError("the signature is older than 24 hours")
        }
        return claims
    }
}
