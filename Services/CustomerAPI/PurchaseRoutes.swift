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
    /// How long the body may take to arrive (then 408).
    let bodyTimeout: Duration
    let intake: PurchaseIntake
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
                        ? "unavailable" : refusal.code == Self.ownedByAnother.code ? "conflict" : "bad-request")
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
        let proof = try Self.deviceProof(body, transactions: transactions)
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
        return try await self.views.viewResponse(
            bundleId: bundleId, customer: appUserId, kind: .appUserId, environment: nil, ifNoneMatch: nil,
            extra: #""requestId":"# + JSONText.quoted(purchase.requestId))
    }

    // MARK: Steps

    /// The JSON body, refused above the size limit before it is read in full.
    private func body(_ request: Request) async throws(PurchaseRefusal) -> PurchaseBody {
        let buffer = try await BoundedBody.read(
            request, limit: self.settings.maximumBodyBytes, timeout: self.bodyTimeout)
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

    /// 409 before anything is written when a purchase belongs to another customer and the post has no proof that
    /// moves it (``PurchaseOwnership``; the updater decides again under the subject's lock).
    private func refuseIfOwnedByAnother(_ records: [AppPurchaseRecord], bundleId: String, appUserId: String)
        async throws
    {
        var seen = Set<String>()
        for record in records where seen.insert(record.environment + "/" + record.subject).inserted {
            let owner = try await self.lookup.owner(
                environment: record.environment, bundleId: bundleId, subject: record.subject,
                claimedToken: PurchaseOwnership.accountToken(of: record.transaction))
            if case .refuse = PurchaseOwnership.decide(
                claimant: appUserId, owner: owner, policy: record.onConflict, proof: record.transferProof)
            {
                throw Self.ownedByAnother
            }
        }
    }

    /// How old a signed transaction may be to prove its device's possession: StoreKit signs the transaction it hands
    /// the app at that moment, so a fresh one is a device's now; an old one (a support ticket's, a log's) proves
    /// only that someone once had it.
    static let deviceProofMaximumAge: TimeInterval = 10 * 60
    /// How far ahead of this server's clock a signed transaction may be dated (clocks differ a little).
    static let deviceProofClockSkew: TimeInterval = 60

    /// The device's proof of a signed transaction, when the body carries `deviceVerificationId`: 400 beside an id
    /// or receipt (which no device signed for), 403 when its hash does not match the transaction's, 403
    /// `stale-device-proof` when the transaction was signed more than ``deviceProofMaximumAge`` before `now`.
    static func deviceProof(_ body: PurchaseBody, transactions: [VerifiedTransaction], now: Date = Date())
        throws(PurchaseRefusal) -> TransferProof?
    {
        guard let id = body.deviceVerificationId else { return nil }
        guard body.signedTransaction != nil, let transaction = transactions.first?.transaction else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body", message: "deviceVerificationId goes with signedTransaction only")
        }
        guard TransferProof.deviceVerifies(transaction, verificationId: id) else {
            throw PurchaseRefusal(
                status: .forbidden, code: "device-verification-failed",
                message: "the device verification id does not match the transaction's deviceVerification")
        }
        let age = now.timeIntervalSince(transaction.signedDate?.date ?? .distantPast)
        guard age <= Self.deviceProofMaximumAge, age >= -Self.deviceProofClockSkew else {
            throw PurchaseRefusal(
                status: .forbidden, code: "stale-device-proof",
                message: "the signed transaction was signed \(Int(age)) s ago; a device proof must be at most "
                    + "\(Int(Self.deviceProofMaximumAge)) s old: send the one StoreKit gives the app now")
        }
        return .device(verificationId: id)
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
