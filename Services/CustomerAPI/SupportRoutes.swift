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

/// The support routes (`/v1/admin/apps/{bundleId}/…`, admin keys only): what a support agent needs to answer
/// "why does this user have or lack access?" and to act on it. Reads come from PostgreSQL and the App Store
/// Server API; every write goes through Kafka (a resync's records, a replayed DLQ record) or is Apple's own
/// (a renewal-date extension, whose RENEWAL_EXTENDED then flows through the pipeline).
struct SupportRoutes: Sendable {
    let client: AppStoreServerAPIClient?
    let purchaseImport: PurchaseImport?
    let producer: KafkaProducer
    let topics: PipelineTopics
    /// Signs the resync records for the updater.
    let signing: RecordSigner
    let lookup: CustomerLookup
    let support: SupportLookup
    let deadLetters: DeadLetters
    let outcomes: LabelledCounter

    func add(to group: RouterGroup<CustomerAPIContext>) {
        let admin = group.group("admin/apps/:bundleId")
        admin.get("support/:query") { request, context in try await self.supportView(request, context) }
        admin.get("orders/:orderId") { request, context in
            try await self.asking(request, context) { client, _ in
                guard let order = try await client.lookUpOrder(try context.parameters.require("orderId")) else {
                    return APIErrorResponse.response(.notFound, "unknown-order", "Apple knows no order with this id")
                }
                return Self.json(
                    TransactionsAnswer(
                        environment: order.environment.rawValue, transactions: order.transactions.map(\.transaction)))
            }
        }
        admin.get("refunds/:transactionId") { request, context in
            try await self.asking(request, context) { client, _ in
                let refunds = try await client.refundHistory(try context.parameters.require("transactionId"))
                return Self.json(
                    TransactionsAnswer(
                        environment: refunds.environment.rawValue, transactions: refunds.transactions.map(\.transaction)
                    ))
            }
        }
        admin.get("transactions/:transactionId") { request, context in
            try await self.asking(request, context) { client, _ in
                let found = try await client.transactionInfo(try context.parameters.require("transactionId"))
                return Self.json(
                    TransactionsAnswer(
                        environment: found.transaction.rawEnvironment ?? "", transactions: [found.transaction]))
            }
        }
        // Get App Transaction Info (API 1.17): by any transaction id of the customer or their appTransactionId.
        admin.get("app-transactions/:transactionId") { request, context in
            try await self.asking(request, context) { client, _ in
                let found = try await client.appTransactionInfo(try context.parameters.require("transactionId"))
                return Self.json(
                    AppTransactionAnswer(environment: found.environment.rawValue, appTransaction: found.appTransaction))
            }
        }
        admin.post("subscriptions/:originalTransactionId/extend") { request, context in
            let body = try await self.decode(ExtensionBody.self, request)
            return try await self.asking(request, context) { client, _ in
                let answer = try await client.extendRenewalDate(
                    try context.parameters.require("originalTransactionId"),
                    ExtendRenewalDateRequest(
                        extendByDays: body.extendByDays, extendReasonCode: body.extendReasonCode,
                        requestIdentifier: body.requestIdentifier ?? UUID().uuidString.lowercased()))
                return Self.json(answer)
            }
        }
        admin.post("extensions") { request, context in
            let body = try await self.decode(MassExtensionBody.self, request)
            return try await self.asking(request, context) { client, _ in
                let answer = try await client.extendRenewalDatesForAllActiveSubscribers(
                    MassExtendRenewalDateRequest(
                        extendByDays: body.extendByDays, extendReasonCode: body.extendReasonCode,
                        requestIdentifier: body.requestIdentifier ?? UUID().uuidString.lowercased(),
                        productId: body.productId,
                        storefrontCountryCodes: body.storefrontCountryCodes))
                return Self.json(answer, status: .accepted)
            }
        }
        admin.get("extensions/:productId/:requestIdentifier") { request, context in
            try await self.asking(request, context) { client, _ in
                Self.json(
                    try await client.massExtensionStatus(
                        productId: try context.parameters.require("productId"),
                        requestIdentifier: try context.parameters.require("requestIdentifier")))
            }
        }
        admin.post("customers/:customer/resync") { request, context in try await self.resync(request, context) }
        admin.post("dead-letters/replay") { request, context in try await self.replay(request, context) }
    }

    // MARK: The customer's page

    /// Everything about the customer a search names (app user id, appAccountToken, original transaction id,
    /// transaction id, or an order id looked up with Apple): entitlements now, subscriptions, purchases, the
    /// timeline with each outcome, DLQ records, consumption requests and (with `refunds=1`) Apple's refund
    /// history. `format=html` answers the console's server-rendered fragment.
    func supportView(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let query = try context.parameters.require("query").trimmingCharacters(in: .whitespaces)
        var notes: [String] = []
        var key = query
        if Self.looksLikeOrderId(query), let client = try? self.scoped(request, bundleId: bundleId) {
            do {
                if let order = try await client.lookUpOrder(query),
                    let first = order.transactions.first?.transaction.originalTransactionId
                {
                    key = first
                    notes.append("order \(query) holds \(order.transactions.count) transaction(s) of purchase \(first)")
                } else {
                    notes.append("Apple knows no order \(query)")
                }
            } catch {
                notes.append("order look-up failed: \(error)")
            }
        }
        let (customer, kind) = try await self.support.customer(for: key, bundleId: bundleId)
        let asOf = Int64(Date().timeIntervalSince1970 * 1000)
        let json = try await self.lookup.view(bundleId: bundleId, customer: customer, kind: kind, asOf: asOf)
        let decoder = JSONDecoder()
        var view = SupportView(
            query: query, customer: customer, asOf: asOf, notes: notes,
            entitlements: try decoder.decode([CustomerView.Entitlement].self, from: Data(json.entitlements.utf8)),
            subscriptions: try decoder.decode([CustomerView.Subscription].self, from: Data(json.subscriptions.utf8)),
            purchases: try decoder.decode([CustomerView.Purchase].self, from: Data(json.purchases.utf8)),
            timeline: [], deadLetters: [], consumptionRequests: [], refunds: nil)
        let subjects = Array(
            Set(
                view.purchases.map(\.originalTransactionId) + view.subscriptions.map(\.originalTransactionId)
                    + view.entitlements.map(\.originalTransactionId))
        ).sorted()
        view.timeline = try await self.support.timeline(bundleId: bundleId, subjects: subjects)
        view.deadLetters = try await self.deadLetters.rows(bundleId: bundleId, subjects: subjects)
        view.consumptionRequests = try await self.support.consumptionRequests(
            bundleId: bundleId, customer: customer, subjects: subjects)
        let anyTransaction = view.purchases.first?.transactionId ?? subjects.first
        if request.uri.queryParameters.get("refunds") == "1", let any = anyTransaction {
            do {
                let client = try self.scoped(request, bundleId: bundleId)
                view.refunds = try await client.refundHistory(any).transactions.map(\.transaction)
            } catch {
                view.notes.append("refund history failed: \(error)")
            }
        }
        self.outcomes.increment("support-view")
        if request.uri.queryParameters.get("format") == "html" {
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: SupportPage.fragment(view, bundleId: bundleId))))
        }
        return Self.json(view)
    }

    // MARK: Actions

    /// Resyncs every purchase of the customer (their history and statuses, through the verified topic).
    func resync(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let named = try context.parameters.require("customer")
        guard !named.isEmpty, named.count <= 128 else {
            return APIErrorResponse.response(.badRequest, "bad-customer", "a customer id is 1 to 128 characters")
        }
        let (customer, kind) = try await self.support.customer(for: named, bundleId: bundleId)
        guard let purchaseImport = self.purchaseImport else {
            return APIErrorResponse.response(
                .serviceUnavailable, "not-configured", "resync needs the App Store Server API settings")
        }
        let json = try await self.lookup.view(
            bundleId: bundleId, customer: customer, kind: kind, asOf: Int64(Date().timeIntervalSince1970 * 1000))
        // Subscriptions and the other purchases alike (each with its environment).
        let decoder = JSONDecoder()
        let purchases =
            try decoder.decode([CustomerView.Purchase].self, from: Data(json.purchases.utf8)).map {
                (original: $0.originalTransactionId, environment: $0.environment)
            }
            + decoder.decode([CustomerView.Subscription].self, from: Data(json.subscriptions.utf8)).map {
                (original: $0.originalTransactionId, environment: $0.environment)
            }
        let originals = Array(Set(purchases.map(\.original))).sorted()
        guard !originals.isEmpty else {
            return APIErrorResponse.response(.notFound, "unknown-customer", "no purchase is stored for \(customer)")
        }
        var total = PurchaseImport.Resynced(transactions: 0, statuses: 0)
        do {
            for original in originals {
                let environment = purchases.first { $0.original == original }.flatMap {
                    Environment(rawValue: $0.environment)
                }
                let resynced = try await purchaseImport.resync(
                    [original], bundleId: bundleId, environment: environment,
                    request: PurchaseImport.Request(
                        appUserId: kind == .appUserId ? customer : nil, onConflict: .refuse, source: .resync),
                    producer: self.producer, topics: self.topics, signing: self.signing,
                    statuses: .requests)
                total.transactions += resynced.transactions
                total.statuses += resynced.statuses
            }
        } catch let error as AppStoreAPIError {
            return Self.apiError(error)
        }
        self.outcomes.increment("support-resync")
        return Self.json(
            ["customer": customer, "transactions": String(total.transactions), "statuses": String(total.statuses)],
            status: .accepted)
    }

    /// Sends a DLQ record (by position) back to the topic it came from.
    func replay(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let body = try await self.decode(ReplayBody.self, request)
        guard let rejected = try await self.deadLetters.rejected(at: body.position) else {
            return APIErrorResponse.response(.notFound, "unknown-dead-letter", "no DLQ record at \(body.position)")
        }
        let bundleId = try context.parameters.require("bundleId")
        // Always checked: a record whose app neither its headers nor its value name belongs to no app.
        guard let app = rejected.bundleId, app == bundleId else {
            return APIErrorResponse.response(.forbidden, "wrong-app", "the DLQ record does not belong to \(bundleId)")
        }
        guard let record = rejected.replayRecord(from: body.position) else {
            return APIErrorResponse.response(
                .unprocessableContent, "not-replayable", "the DLQ record kept no original value")
        }
        _ = try await self.producer.enqueue(record).report
        try await self.deadLetters.markReplayed(body.position)
        self.outcomes.increment("support-replay")
        return Self.json(["replayed": body.position, "topic": record.topic], status: .accepted)
    }

    // MARK: Helpers

    /// Runs an App Store Server API call for the app in the request's environment (`environment=`, default
    /// Production then Sandbox), mapping Apple's errors to JSON errors.
    private func asking(
        _ request: Request, _ context: CustomerAPIContext,
        _ call: (AppStoreServerAPIClient, String) async throws -> Response
    ) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let client: AppStoreServerAPIClient
        do {
            client = try self.scoped(request, bundleId: bundleId)
        } catch let refusal as PurchaseRefusal {
            return refusal.response
        } catch let error as AppStoreAPIError {
            return Self.apiError(error)
        } catch {
            return APIErrorResponse.response(.serviceUnavailable, "not-configured", "\(error)")
        }
        do {
            self.outcomes.increment("support-api")
            return try await call(client, bundleId)
        } catch let error as AppStoreAPIError {
            return Self.apiError(error)
        }
    }

    /// The API client of the app and environment the request names.
    private func scoped(_ request: Request, bundleId: String) throws -> AppStoreServerAPIClient {
        guard let client = self.client else { throw NotConfigured() }
        let name = request.uri.queryParameters.get("environment")
        guard let environment = name.map({ Environment(rawValue: String($0)) }) ?? .production,
            environment.isAppStoreServer
        else {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-environment", message: "environment must be Production or Sandbox")
        }
        return try client.scoped(bundleID: bundleId, environment: environment, fallbackToSandbox: name == nil)
    }

    /// The App Store Server API is not configured for customer-api.
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String { "the support routes need APPSTORE_API_* settings" }
    }

    /// Apple's refusal as a JSON error: 404 for unknown ids, 503 + Retry-After for retryable ones, else 4xx with Apple's code.
    static func apiError(_ error: AppStoreAPIError) -> Response {
        if error.isRetryable {
            var headers = HTTPFields()
            headers[.retryAfter] = String(max(1, Int((error.retryAfter?.timeIntervalSinceNow ?? 1).rounded(.up))))
            return APIErrorResponse.response(.serviceUnavailable, "app-store-unavailable", "\(error)", headers: headers)
        }
        guard case .http(let status, let code, _) = error.kind else {
            return APIErrorResponse.response(.badGateway, "app-store-error", "\(error)")
        }
        if status == 404 { return APIErrorResponse.response(.notFound, "not-found", "Apple: \(error)") }
        if code == APIErrorCode.assignedExtensionIneligible || code == APIErrorCode.assignedTransactionNotSupported {
            return APIErrorResponse.response(
                .conflict, "assigned-transaction",
                "an assigned purchase (its organization owns it): Apple neither extends it nor takes consumption "
                    + "information for it (errorCode \(code!))")
        }
        return APIErrorResponse.response(
            HTTPResponse.Status(code: status == 401 ? 502 : status), "app-store-refused",
            "Apple errorCode \(code.map(String.init) ?? "none"): \(error)")
    }

    /// Whether a search looks like an App Store order id (ten letters and digits starting with M).
    static func looksLikeOrderId(_ text: String) -> Bool {
        text.count == 10 && text.hasPrefix("M") && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// Decodes a JSON body (at most 64 KiB, within the body deadline) or answers 400 (413, 408).
    func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        let body = try await BoundedBody.read(request, limit: 1 << 16)
        do {
            return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
        } catch {
            throw PurchaseRefusal(
                status: .badRequest, code: "bad-body", message: "expected a JSON body of \(T.self): \(error)")
        }
    }

    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

// MARK: - Bodies and answers

/// Transactions Apple returned, decoded after verification.
struct TransactionsAnswer: Encodable {
    var environment: String
    var transactions: [JWSTransactionDecodedPayload]
}

/// `GET …/app-transactions/{transactionId}`: the customer's app transaction as Apple signed it, verified.
struct AppTransactionAnswer: Encodable {
    var environment: String
    var appTransaction: AppTransaction
}

/// `POST …/subscriptions/{originalTransactionId}/extend`.
struct ExtensionBody: Decodable {
    var extendByDays: Int32
    var extendReasonCode: Int32
    var requestIdentifier: String?
}

/// `POST …/extensions`: every active subscriber of a product.
struct MassExtensionBody: Decodable {
    var productId: String
    var extendByDays: Int32
    var extendReasonCode: Int32
    var requestIdentifier: String?
    var storefrontCountryCodes: [String]?
}

/// `POST …/dead-letters/replay`.
struct ReplayBody: Decodable {
    var position: String
}

/// The customer as the console shows them.
struct SupportView: Encodable {
    var query: String
    var customer: String
    var asOf: Int64
    var notes: [String]
    var entitlements: [CustomerView.Entitlement]
    var subscriptions: [CustomerView.Subscription]
    var purchases: [CustomerView.Purchase]
    var timeline: [SupportLookup.TimelineEntry]
    var deadLetters: [DeadLetters.Row]
    var consumptionRequests: [SupportLookup.ConsumptionRequestRow]
    var refunds: [JWSTransactionDecodedPayload]?
}
