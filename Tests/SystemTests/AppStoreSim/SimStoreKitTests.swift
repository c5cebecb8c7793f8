import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Crypto
import Foundation
import JWSVerification
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The sim plays StoreKit and the App Store for purchases with a promotional offer: only a signature the App Store
/// would honour makes the purchase (the team's key, the app, the product and offer, a buyer's own transaction, a
/// fresh nonce, a recent time); each bad one is refused with its reason and makes nothing.
@Suite(.tags(.integration), .notInUnitRuns) struct SimStoreKitTests {
    @Test func onlyAValidOfferSignatureMakesThePurchase() async throws {
        try await SimHarness.with(
            customers: 300, seed: 28,
            configure: {
                $0.appPostShare = 0.8
                $0.offerPurchaseShare = 1
            }
        ) { sim in
            let scenario = sim.simulator.scenario
            #expect(scenario.offerPurchases.count >= 2, "the scenario plans offer purchases")
            let offer = scenario.offerPurchases[0], second = scenario.offerPurchases[1]
            let bundle = sim.app.bundleId
            let key = OfferSigningKey(
                keyID: SimHarness.offerKeyID, issuerID: SimHarness.issuerID, privateKey: sim.offerKey)
            let stranger = try #require(
                scenario.purchases.values.first { $0.customer != offer.appUserId && $0.environment == .production })
            let url = sim.baseURL.absoluteString + "/sim/storekit/purchases"
            func buy(_ offer: OfferPurchase, _ promotional: [String: Any]) async -> (Int, [String: Any]) {
                await Simulator.postJSON(
                    sim.http, url,
                    [
                        "environment": offer.environment.rawValue, "appUserId": offer.appUserId,
                        "productId": offer.productId, "promotionalOffer": promotional,
                    ], key: nil)
            }
            func v2(
                bundleId: String? = nil, product: String? = nil, offerId: String? = nil, transaction: String? = nil,
                signer: OfferSigningKey? = nil, at: Date = Date()
            ) throws -> [String: Any] {
                [
                    "signature": try OfferJWS.promotionalOffer(
                        bundleId: bundleId ?? bundle, productId: product ?? offer.productId,
                        offerIdentifier: offerId ?? offer.offerIdentifier,
                        transactionId: transaction ?? offer.originalTransactionId, key: signer ?? key, now: at)
                ]
            }
            let otherKey = OfferSigningKey(keyID: key.keyID, issuerID: key.issuerID, privateKey: .init())
            let refusals: [([String: Any], String)] = [
                (try v2(signer: otherKey), "the signature does not verify with key SIMOFFER01"),
                (try v2(bundleId: "com.other.app"), "signed for another app (com.other.app)"),
                (try v2(product: "com.example.other"), "signed for product com.example.other"),
                (try v2(offerId: "FREE_FOREVER"), "no offer FREE_FOREVER for \(offer.productId)"),
                (
                    try v2(transaction: stranger.originalTransactionId),
                    "transactionId \(stranger.originalTransactionId) is not the buyer's"
                ),
                (try v2(at: Date().addingTimeInterval(-25 * 3600)), "the signature is older than 24 hours"),
                ([:], "no signature"),
            ]
            for (promotional, reason) in refusals {
                let (status, answer) = await buy(offer, promotional)
                #expect(status == 400 && answer["errorMessage"] as? String == reason, "\(reason): \(answer)")
            }
            #expect(await sim.simulator.store.purchase(for: offer.transactionId, in: offer.environment) == nil)

            let nonce = UUID()
            let valid = try OfferJWS.promotionalOffer(
                bundleId: bundle, productId: offer.productId, offerIdentifier: offer.offerIdentifier,
                transactionId: offer.originalTransactionId, key: key, nonce: nonce)
            let (status, answer) = await buy(offer, ["signature": valid])
            #expect(status == 200, "\(answer)")
            let signed = try #require(answer["signedTransaction"] as? String)
            let payload = try JSONDecoder().decode(
                JWSTransactionDecodedPayload.self,
                from: Data(Base64URL.decode(String(signed.split(separator: ".")[1]))!))
            #expect(payload.offerType == .promotionalOffer && payload.offerIdentifier == offer.offerIdentifier)
            #expect(payload.transactionId == offer.transactionId)
            let bought = await sim.simulator.store.purchase(for: offer.transactionId, in: offer.environment)
            #expect(bought?.status == .active && bought?.transactions.last?.transactionId == offer.transactionId)
            let (again, _) = await buy(offer, ["signature": valid])
            #expect(again == 404, "a purchase is made once")

            // The same nonce again, on another purchase, in V1's form: refused.
            let reused = try PromotionalOfferSignatureV1.sign(
                bundleId: bundle, productId: second.productId, offerIdentifier: second.offerIdentifier,
                appAccountToken: nil, key: key, nonce: nonce)
            let (reusedStatus, reusedAnswer) = await buy(
                second, ["signatureV1": try JSONSerialization.jsonObject(with: JSONEncoder().encode(reused))])
            #expect(reusedStatus == 400 && reusedAnswer["errorMessage"] as? String == "the nonce was used before")
            let fresh = try PromotionalOfferSignatureV1.sign(
                bundleId: bundle, productId: second.productId, offerIdentifier: second.offerIdentifier,
                appAccountToken: nil, key: key)
            let (freshStatus, _) = await buy(
                second, ["signatureV1": try JSONSerialization.jsonObject(with: JSONEncoder().encode(fresh))])
            #expect(freshStatus == 200)
            let stats = await sim.simulator.store.stats.offers
            #expect(stats["bought"] == 2 && stats.filter { $0.key.hasPrefix("refused") }.values.reduce(0, +) == 8)
        }
    }
}
