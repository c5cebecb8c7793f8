import AppStoreAPI
import AppStoreModels
import Foundation
import Storage

/// What was chosen for one request: Apple's answer body and how it was reached (for the event and the metrics).
struct RetentionAnswer: Sendable {
    /// `message`, `alternateProduct`, `promotionalOffer`, `default` (the app's default message) or `none` (empty: the
    /// App Store shows the default configured there).
    var kind: String
    var rule: String?
    var body: RealtimeResponseBody
    var offerIdentifier: String?
    var signatureVersion: String?

    /// The answer of `rule` (or of the app's default when nil), with a promotional offer signed by `key`.
    static func make(
        rule: RetentionRules.Rule?, app: RetentionRules.AppRules?, request: DecodedRealtimeRequestBody,
        subject: RetentionSubject, bundleId: String, key: OfferSigningKey?, now: Date = Date()
    ) throws -> RetentionAnswer {
        guard let rule else {
            guard let message = app?.defaultMessage else { return RetentionAnswer(kind: "none", body: .init()) }
            return RetentionAnswer(kind: "default", body: .init(message: .init(messageIdentifier: message)))
        }
        if let message = rule.answer.message {
            return RetentionAnswer(
                kind: "message", rule: rule.name, body: .init(message: .init(messageIdentifier: message)))
        }
        if let product = rule.answer.alternateProduct {
            return RetentionAnswer(
                kind: "alternateProduct", rule: rule.name,
                body: .init(
                    alternateProduct: .init(
                        messageIdentifier: product.messageIdentifier, productId: product.productId,
                        billingPlanType: product.billingPlanType)))
        }
        guard let offer = rule.answer.promotionalOffer, let key else {
            throw RetentionRulesError("rule \(rule.name) answers an offer without an offer key")
        }
        let productId = offer.productId ?? request.productId ?? subject.productId ?? ""
        let version = offer.signatureVersion ?? "V2"
        var promotional = RealtimeResponseBody.PromotionalOffer(messageIdentifier: offer.messageIdentifier)
        if version == "V1" {
            promotional.promotionalOfferSignatureV1 = try PromotionalOfferSignatureV1.sign(
                bundleId: bundleId, productId: productId, offerIdentifier: offer.offerIdentifier,
                appAccountToken: subject.appAccountToken, key: key, now: now)
        } else {
            promotional.promotionalOfferSignatureV2 = try OfferJWS.promotionalOffer(
                bundleId: bundleId, productId: productId, offerIdentifier: offer.offerIdentifier,
                transactionId: subject.newestTransactionId ?? request.originalTransactionId, key: key, now: now)
        }
        return RetentionAnswer(
            kind: "promotionalOffer", rule: rule.name, body: .init(promotionalOffer: promotional),
            offerIdentifier: offer.offerIdentifier, signatureVersion: version)
    }
}
