import AppStoreAPI
import AppStoreModels
import Crypto
import Foundation
import Hummingbird

/// StoreKit's side of a purchase with a promotional offer, as the App Store checks it (`POST /sim/storekit/purchases`):
/// the app hands over the signature its server made, V2 (the JWS) or V1 (the original fields); the sim verifies it
/// with the team's In-App Purchase keys (App Store Connect's view), checks the product, the offer, the nonce (once)
/// and, for V2, that the transaction it names belongs to the buyer; then makes the purchase, sends its notification
/// and answers StoreKit's signed transaction. A bad signature makes nothing and answers 400 with the reason.
struct SimStoreKit: Sendable {
    let store: SimStore
    @_spi(Testing) public let signer: SimSigner
    let offerKeys: [String: P256.Signing.PublicKey]
    let issuerID: String
    let deliverNow: @Sendable (SimNotification) async -> Void

    /// The body: the buyer, the product, and the offer's signature in one of its two forms.
    struct Body: Decodable {
        struct Offer: Decodable {
            var signature: String?
            var signatureV1: PromotionalOfferSignatureV1?
        }
        @_spi(Testing) public var environment: String?
        @_spi(Testing) public var appUserId: String
        @_spi(Testing) public var productId: String
        var promotionalOffer: Offer
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("sim/storekit/purchases") { request, _ in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)) else {
                return Self.refusal(400, "the body is not a purchase with promotionalOffer")
            }
            return await self.purchase(body)
        }
    }

    /// Checks the offer and makes the purchase.
    @_spi(Testing) public func purchase(_ body: Body) async -> Response {
        let environment = Environment(rawValue: body.environment ?? "Production") ?? .production
        guard
            let offer = await self.store.pendingOffers[
                SimStore.offerKey(environment, body.appUserId, body.productId)]
        else {
            return Self.refusal(404, "no purchase of \(body.productId) planned for \(body.appUserId)")
        }
        let nonce: String
        do {
            nonce = try await self.check(body.promotionalOffer, offer: offer)
        } catch {
            await self.store.refuseOffer(error.description)
            return Self.refusal(400, error.description)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        guard let (notification, transaction) = await self.store.redeem(offer, nonce: nonce, now: now) else {
            return Self.refusal(409, "the purchase was already made")
        }
        await self.deliverNow(notification)
        let signed = (try? self.signer.signTransaction(transaction)) ?? ""
        return SimAPI.json(["signedTransaction": signed])
    }

    /// The offer's nonce when its signature is one the App Store honours for this purchase.
    private func check(_ given: Body.Offer, offer: OfferPurchase) async throws(OfferSignatureError) -> String {
        let nonce: String
        let productId: String
        let offerIdentifier: String
        if let jws = given.signature {
            let claims = try OfferJWS.verify(
                jws, audience: .promotionalOffer, bundleId: self.signer.bundleId, issuerID: self.issuerID,
                keys: self.offerKeys)
            if let transactionId = claims.transactionId {
                guard await self.store.purchase(for: transactionId, in: offer.environment)?.customer == offer.appUserId
                else { throw OfferSignatureError("transactionId \(transactionId) is not the buyer's") }
            }
            (nonce, productId, offerIdentifier) = (claims.nonce, claims.productId, claims.offerIdentifier ?? "")
        } else if let v1 = given.signatureV1 {
            guard let key = self.offerKeys[v1.keyId] else { throw OfferSignatureError("unknown key \(v1.keyId)") }
            try v1.verify(bundleId: self.signer.bundleId, keyID: v1.keyId, publicKey: key)
            (nonce, productId, offerIdentifier) = (v1.nonce, v1.productId, v1.offerIdentifier)
        } else {
            throw OfferSignatureError("no signature")
        }
        guard productId == offer.productId else { throw OfferSignatureError("signed for product \(productId)") }
        guard offerIdentifier == offer.offerIdentifier else {
            throw OfferSignatureError("no offer \(offerIdentifier) for \(productId)")
        }
        guard await !self.store.usedOfferNonces.contains(nonce.lowercased()) else {
            throw OfferSignatureError("the nonce was used before")
        }
        return nonce.lowercased()
    }

    /// A refusal StoreKit reports to the app.
    static func refusal(_ status: Int, _ reason: String) -> Response {
        SimAPI.json(["errorMessage": reason], status: .init(code: status))
    }
}
