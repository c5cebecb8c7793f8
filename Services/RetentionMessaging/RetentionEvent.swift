import AppStoreModels
import Foundation
import JWSVerification

/// The `retention.offered` event: what one real-time request was answered, for analytics (schema:
/// Shared/Entitlements/Schemas/retention.offered.schema.json). `eventId` is Apple's requestIdentifier, so a request
/// Apple repeats is one event to a consumer that deduplicates.
struct RetentionOfferedEvent: Codable, Hashable, Sendable {
    var schemaVersion = 1
    var eventId: String
    var eventType = "retention.offered"
    var stream = "retention"
    var environment: String
    var bundleId: String
    var appAppleId: Int64
    var originalTransactionId: String
    var productId: String?
    var userLocale: String?
    var requestIdentifier: String
    /// When Apple signed the request, and when it was answered (epoch ms).
    var requestSignedDate: Int64?
    var answeredAt: Int64
    /// The rule that chose the answer (nil: the default or nothing).
    var rule: String?
    /// `message`, `alternateProduct`, `promotionalOffer`, `default` or `none`.
    var answer: String
    var messageIdentifier: String?
    var alternateProductId: String?
    var offerIdentifier: String?
    var signatureVersion: String?

    /// The event of an answered request.
    init(
        request: DecodedRealtimeRequestBody, app: AppIdentity, answer: RetentionAnswer, answeredAt: Date = Date()
    ) {
        self.eventId = request.requestIdentifier ?? ""
        self.environment = request.rawEnvironment ?? ""
        self.bundleId = app.bundleId
        self.appAppleId = request.appAppleId ?? 0
        self.originalTransactionId = request.originalTransactionId ?? ""
        self.productId = request.productId
        self.userLocale = request.userLocale
        self.requestIdentifier = request.requestIdentifier ?? ""
        self.requestSignedDate = request.signedDate?.millisecondsSince1970
        self.answeredAt = Int64(answeredAt.timeIntervalSince1970 * 1000)
        self.rule = answer.rule
        self.answer = answer.kind
        self.messageIdentifier =
            answer.body.message?.messageIdentifier ?? answer.body.alternateProduct?.messageIdentifier
            ?? answer.body.promotionalOffer?.messageIdentifier
        self.alternateProductId = answer.body.alternateProduct?.productId
        self.offerIdentifier = answer.offerIdentifier
        self.signatureVersion = answer.signatureVersion
    }
}
