import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NotificationPipeline
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
                self.outcomes.increment(refusal.status.code >= 500 ? "unavailable" : "bad-request")
                var headers = HTTPFields()
                if let wait = refusal.retryAfter { headers[.retryAfter] = String(wait) }
                return APIErrorResponse.response(refusal.status, refusal.code, refusal.message, headers: headers)
            }
        }
    }

    /// Verifies, checks ownership, publishes, waits for the commit, answers.
    func post(_ request: Request, context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let appUserId = try context.parameters.require("customer")
        guard !appUserId.isEmpty, appUserId.count <= 128 else {
            throw PurchaseRefusal(status: .badRequest, code: "bad-app-user-id", message: "an app user id is 1 to 128 characters")
        }
        let body = try await self.body(request)
        let (source, transactions) = try await self.intake.transactions(body, bundleId: bundleId)
        let purchase = PurchaseImport.Request(appUserId: appUserId, onConflict: self.settings.onConflict, source: source)
        let records = PurchaseImport.records(transactions, request: purchase)
        try await self.refuseIfOwnedByAnother(records, bundleId: bundleId, appUserId: appUserId)
        do {
            try await PurchaseImport.publish(records, producer: self.producer, topics: self.settings.topics)
        } catch {
            self.logger.error("cannot publish purchases", metadata: ["error": "\(error)"])
            throw PurchaseRefusal(status: .serviceUnavailable, code: "unavailable", message: "the pipeline cannot take it now", retryAfter: 1)
        }
        let location = "/v1/apps/\(bundleId)/customers/\(appUserId)"
        guard let outcomes = try await self.committed(records.map(\.logID)) else {
            self.outcomes.increment("accepted")
            var headers = HTTPFields()
            headers[.location] = location
            headers[.contentType] = "application/json"
            let accepted = #"{"status":"accepted","requestId":"# + JSONText.quoted(purchase.requestId) + #","location":"#
                + JSONText.quoted(location) + "}"
            return Response(status: .accepted, headers: headers, body: .init(byteBuffer: ByteBuffer(string: accepted)))
        }
        if outcomes.values.contains(EntitlementUpdate.Outcome.conflict.rawValue) {
            throw PurchaseRefusal(status: .conflict, code: "owned-by-another-user", message: "this purchase belongs to another app user")
        }
        self.outcomes.increment("purchase-applied")
        return try await self.views.viewResponse(bundleId: bundleId, customer: appUserId, environment: nil, ifNoneMatch: nil,
                                                 extra: #""requestId":"# + JSONText.quoted(purchase.requestId))
    }

    // MARK: Steps

    /// The JSON body, refused above the size limit before it is read in full.
    private func body(_ request: Request) async throws(PurchaseRefusal) -> PurchaseBody {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > self.settings.maximumBodyBytes {
            throw Self.tooLarge(self.settings.maximumBodyBytes)
        }
        let buffer: ByteBuffer
        let limit = self.settings.maximumBodyBytes
        do {
            buffer = try await withDeadline(self.bodyTimeout) { try await request.body.collect(upTo: limit) }
        } catch is DeadlineExceeded {
            throw PurchaseRefusal(status: .requestTimeout, code: "body-timeout", message: "the body did not arrive in time")
        } catch {
            throw Self.tooLarge(limit)
        }
        do {
            return try JSONDecoder().decode(PurchaseBody.self, from: Data(buffer.readableBytesView))
        } catch {
            throw PurchaseRefusal(status: .badRequest, code: "bad-body", message: "the body is not the JSON object this route takes")
        }
    }

    /// 413 with the limit.
    private static func tooLarge(_ limit: Int) -> PurchaseRefusal {
        PurchaseRefusal(status: .contentTooLarge, code: "body-too-large", message: "the body is larger than \(limit) bytes")
    }

    /// Under the `refuse` policy, 409 before anything is written when a purchase is bound to another user.
    private func refuseIfOwnedByAnother(_ records: [AppPurchaseRecord], bundleId: String, appUserId: String) async throws {
        guard self.settings.onConflict == .refuse else { return }
        let owners = try await self.lookup.bindings(bundleId: bundleId, subjects: records.map { ($0.environment, $0.subject) })
        if owners.contains(where: { $0.appUserId != appUserId }) {
            throw PurchaseRefusal(status: .conflict, code: "owned-by-another-user", message: "this purchase belongs to another app user")
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
