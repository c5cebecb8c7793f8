import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import Hummingbird
import NotificationPipeline
import ServiceRuntime
import Storage

/// `POST /v1/apps/{bundleId}/customers/{appUserId}/offers`: what StoreKit needs from the server to show an offer to
/// this app user, decided from their stored history (docs/offers.md):
/// - `"offer": "promotional"`: a promotional offer signature (`"signatureVersion": "V2"`, the JWS, default; or `"V1"`,
///   the original fields) for a customer who has subscribed in the product's group (409 `not-eligible` otherwise);
/// - `"offer": "introductory"`: whether the stored history leaves them the introductory offer (new to the group); the
///   introductory-offer eligibility JWS only when the history proves they are not (`false`), bound to one of their
///   transactions. StoreKit takes a server's JWS over its own answer, and what is stored here is never all of a
///   customer's App Store history (another app account on the same Apple ID, the group's products bought before this
///   pipeline ran): a signed `true` could give a free trial twice, so a `true` is never signed and StoreKit decides.
/// Both answers list the win-back offers Apple named in the newest renewal info of their subscriptions in the group.
/// Products, their groups and the offer identifiers each may be given come from the catalog (``OfferCatalog``), never
/// from stored transactions: an unknown product is 400 `unknown-product`, an offer the product is not given 400
/// `unknown-offer`.
struct OfferRoute: Sendable {
    let history: OfferHistoryLookup
    /// nil: the route answers 503 `not-configured`.
    let key: OfferSigningKey?
    let catalog: OfferCatalog
    let outcomes: LabelledCounter

    /// The JSON body.
    struct Body: Decodable {
        var offer: String
        var productId: String
        var offerIdentifier: String?
        var signatureVersion: String?
        var environment: String?
    }

    /// The answer.
    struct Answer: Encodable {
        var offer: String
        var productId: String
        var environment: String
        var subscriptionGroupIdentifier: String?
        var offerIdentifier: String?
        var allowIntroductoryOffer: Bool?
        var transactionId: String?
        /// V2 promotional offer or introductory eligibility: the compact JWS for StoreKit.
        var signature: String?
        var signatureV1: PromotionalOfferSignatureV1?
        var eligibleWinBackOfferIds: [String]
    }

    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.post("apps/:bundleId/customers/:customer/offers") { request, context in
            do {
                return try await self.sign(request, context)
            } catch let refusal as PurchaseRefusal {
                self.outcomes.increment(refusal.status.code >= 500 ? "unavailable" : "bad-request")
                return refusal.response
            }
        }
    }

    /// Validates, reads the history, decides, signs.
    func sign(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let appUserId = try context.parameters.require("customer")
        guard let key = self.key else {
            throw PurchaseRefusal(
                status: .serviceUnavailable, code: "not-configured",
                message: "signing offers needs APPSTORE_OFFER_KEY_FILE")
        }
        guard !appUserId.isEmpty, appUserId.count <= 128 else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-app-user-id", message: "an app user id is 1 to 128 characters")
        }
        let bytes = try await BoundedBody.read(request, limit: 4096)
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)),
            !body.productId.isEmpty, body.productId.count <= 256
        else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body",
                message:
                    #"expected {"offer": "promotional" or "introductory", "productId": "…", "offerIdentifier": "…"}"#)
        }
        let environment = body.environment ?? "Production"
        guard ["Production", "Sandbox"].contains(environment) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-environment", message: "environment must be Production or Sandbox")
        }
        guard let product = self.catalog.product(body.productId, of: bundleId) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "unknown-product",
                message: "\(body.productId) is not a product of \(bundleId) in the offer catalog")
        }
        let history = try await self.history.history(
            bundleId: bundleId, environment: environment, appUserId: appUserId, groupId: product.groupId,
            groupProducts: product.groupProducts)
        var answer = Answer(
            offer: body.offer, productId: body.productId, environment: environment,
            subscriptionGroupIdentifier: product.groupId,
            eligibleWinBackOfferIds: history.eligibleWinBackOfferIds)
        switch body.offer {
        case "promotional":
            try self.promotional(
                body, product: product, history: history, bundleId: bundleId, key: key, into: &answer)
        case "introductory":
            answer.allowIntroductoryOffer = history.eligibleForIntroductoryOffer
            answer.transactionId = history.newestTransactionId
            if let transactionId = history.newestTransactionId, !history.eligibleForIntroductoryOffer {
                answer.signature = try OfferJWS.introductoryOfferEligibility(
                    bundleId: bundleId, productId: body.productId,
                    allowIntroductoryOffer: history.eligibleForIntroductoryOffer, transactionId: transactionId, key: key
                )
            }
        default:
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-offer", message: "offer must be promotional or introductory")
        }
        self.outcomes.increment("offer-signed")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(answer))))
    }

    /// A promotional offer the catalog gives the product, only for a customer who has subscribed in the group
    /// (Apple's rule for promotional offers).
    private func promotional(
        _ body: Body, product: OfferCatalog.Product, history: OfferHistory, bundleId: String, key: OfferSigningKey,
        into answer: inout Answer
    ) throws {
        guard let offerIdentifier = body.offerIdentifier, !offerIdentifier.isEmpty, offerIdentifier.count <= 256 else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body", message: "a promotional offer needs offerIdentifier")
        }
        guard product.promotionalOffers.contains(offerIdentifier) else {
            throw PurchaseRefusal(
                status: .badRequest, code: "unknown-offer",
                message: "the offer catalog gives \(product.productId) no promotional offer \(offerIdentifier)")
        }
        guard history.subscribedInGroup else {
            throw PurchaseRefusal(
                status: .conflict, code: "not-eligible",
                message: "promotional offers are for customers who have subscribed in the product's group")
        }
        answer.offerIdentifier = offerIdentifier
        switch body.signatureVersion ?? "V2" {
        case "V2":
            answer.transactionId = history.newestTransactionId
            answer.signature = try OfferJWS.promotionalOffer(
                bundleId: bundleId, productId: body.productId, offerIdentifier: offerIdentifier,
                transactionId: history.newestTransactionId, key: key)
        case "V1":
            answer.signatureV1 = try PromotionalOfferSignatureV1.sign(
                bundleId: bundleId, productId: body.productId, offerIdentifier: offerIdentifier,
                appAccountToken: history.appAccountToken, key: key)
        default:
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-signature-version", message: "signatureVersion must be V1 or V2")
        }
    }
}
