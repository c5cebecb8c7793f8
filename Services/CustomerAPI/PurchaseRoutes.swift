import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// `POST /v1/apps/{bundleId}/customers/{appUserId}/transactions`: the app (or the team's backend) hands over a
/// purchase, as StoreKit 2's signed transaction, a transaction id or a StoreKit 1 receipt. The verified
/// purchases go to the verified topic as ``AppPurchaseRecord``s (customer-api writes nothing else); the
/// entitlement-updater binds them to the app user and applies them; the answer is the user's view once that
/// is committed, or 202 with where to look when the wait bound passes first.
struct PurchaseRoutes {
    let settings: CustomerAPISettings.PurchaseSettings
    let intake: PurchaseIntake
    let proofs: DeviceProofs
    let producer: KafkaProducer
    let lookup: CustomerLookup
    let views: CustomerRoutes
    let outcomes: LabelledCounter
    let logger: Logger

    /// Adds the route to a router group that already authenticates.
    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.post("apps/:bundleId/customers/:customer/transactions") { request, context in
            do {
                return try await self.post(request, context: context)
            } catch let refusal as PurchaseRefusal {
                self.outcomes.increment(
                    refusal.status.code >= 500
                        ? "unavailable"
                        : [Self.ownedByAnother.code, Self.proofRequired.code].contains(refusal.code)
                            ? "conflict" : "bad-request")
                return refusal.response
            }
        }
    }

    /// Verifies, checks ownership, publishes, waits for the commit, answers.
    func post(_ request: Request, context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let appUserId = try context.parameters.require("customer")
        guard !appUserId.isEmpty, appUserId.count <= 128 else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-app-user-id", message: "an app user id is 1 to 128 characters")
        }
        let body = try await self.body(request)
        let (source, transactions) = try await self.intake.transactions(body, bundleId: bundleId)
        let proof = try await self.proofs.proof(body, transactions: transactions)
        let purchase = PurchaseImport.Request(
            appUserId: appUserId, onConflict: self.settings.onConflict, transferProof: proof, source: source)
        let records = PurchaseImport.records(transactions, request: purchase)
        try await self.refuseIfOwnedByAnother(records, bundleId: bundleId, appUserId: appUserId)
        do {
            try await PurchaseImport.publish(
                records, producer: self.producer, topics: self.settings.topics, signing: self.settings.signing)
        } catch {
            self.logger.error("cannot publish purchases", metadata: ["error": "\(error)"])
            throw PurchaseRefusal(
                status: .serviceUnavailable, code: "unavailable", message: "the pipeline cannot take it now",
                retryAfter: 1)
        }
        let location = "/v1/apps/\(bundleId)/customers/\(appUserId)"
        guard let outcomes = try await self.committed(records.map(\.logID)) else {
            self.outcomes.increment("accepted")
            var headers = HTTPFields()
            headers[.location] = location
            headers[.contentType] = "application/json"
            let accepted =
                #"{"status":"accepted","requestId":"# + JSONText.quoted(purchase.requestId) + #","location":"#
                + JSONText.quoted(location) + "}"
            return Response(status: .accepted, headers: headers, body: .init(byteBuffer: ByteBuffer(string: accepted)))
        }
        if outcomes.values.contains(EntitlementUpdate.Outcome.conflict.rawValue) {
            throw Self.ownedByAnother
        }
        self.outcomes.increment("purchase-applied")
        // The view of the environment the purchases are of (a Sandbox purchase answers the Sandbox view).
        let environments = Set(records.map(\.environment))
        return try await self.views.viewResponse(
            bundleId: bundleId, customer: appUserId, kind: .appUserId,
            environment: environments.count == 1 ? environments.first : nil, ifNoneMatch: nil,
            extra: #""requestId":"# + JSONText.quoted(purchase.requestId))
    }

    // MARK: Steps

    /// The JSON body, refused above the size limit before it is read in full.
    private func body(_ request: Request) async throws(PurchaseRefusal) -> PurchaseBody {
        let buffer = try await BoundedBody.read(
            request, limit: self.settings.maximumBodyBytes)
        do {
            return try JSONDecoder().decode(PurchaseBody.self, from: Data(buffer.readableBytesView))
        } catch {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body", message: "the body is not the JSON object this route takes")
        }
    }

    /// The 409 of a purchase that belongs to another customer.
    static let ownedByAnother = PurchaseRefusal(
        status: .conflict, code: "owned-by-another-customer",
        message:
            "this purchase belongs to another customer (bound to another app user, or bought under an appAccountToken not declared "
            + "for this app user); a transaction id, receipt or signed transaction is not proof of ownership")

    /// The 409 of a purchase nobody owns yet, claimed without proof from the buyer's device.
    static let proofRequired = PurchaseRefusal(
        status: .conflict, code: "device-proof-required",
        message:
            "nobody owns this purchase yet and it carries no appAccountToken declared for this app user: binding it needs "
            + "the buyer's device, deviceVerificationId beside a signedTransaction or signedAppTransaction signed in the "
            + "last 10 minutes; a transaction id or receipt alone is not proof of ownership")

    /// 409 before anything is written when a purchase belongs to another customer and the post has no proof that
    /// moves it, or nobody owns it and the post has no proof that binds it (``PurchaseOwnership``; the updater decides again under the subject's lock).
    private func refuseIfOwnedByAnother(_ records: [AppPurchaseRecord], bundleId: String, appUserId: String)
        async throws
    {
        var seen = Set<String>()
        for record in records where seen.insert(record.environment + "/" + record.subject).inserted {
            let owner = try await self.lookup.owner(
                environment: record.environment, bundleId: bundleId, subject: record.subject,
                claimedToken: PurchaseOwnership.accountToken(of: record.transaction))
            switch PurchaseOwnership.decide(
                claimant: appUserId, owner: owner, policy: record.onConflict, proof: record.transferProof)
            {
            case .refuse: throw Self.ownedByAnother
            case .needsProof: throw Self.proofRequired
            case .alreadyOwned, .bind, .transfer: continue
            }
        }
    }

    /// Polls the notification log until every record is committed (its outcomes) or the wait bound passes (nil).
    private func committed(_ ids: [String]) async throws -> [String: String]? {
        let lookup = self.lookup
        return try await pollUntil(within: self.settings.applyWait) {
            let outcomes = try await lookup.outcomes(of: ids)
            return outcomes.count == Set(ids).count ? outcomes : nil
        }
    }
}
