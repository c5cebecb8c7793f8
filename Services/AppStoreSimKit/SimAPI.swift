import AppStoreAPI
import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import JWSVerification
import Logging

/// The App Store Server API as the stand-in serves it, with bearer tokens checked as Apple checks them,
/// the sim's state as the source of truth, fault injection, and `/sim/*` endpoints for tests and operators.
struct SimAPI: Sendable {
    let store: SimStore
    @_spi(Testing) public let signer: SimSigner
    let tokens: APITokenValidator
    /// Sends a notification now (a test notification, RENEWAL_EXTENDED, RENEWAL_EXTENSION/SUMMARY).
    let deliverNow: @Sendable (SimNotification) async -> Void
    /// Items per page of paged answers (Apple: 20; smaller in tests to walk the pages).
    var pageSize: Int { self.store.pageSize }

    /// Adds every route to a router: the API of Production under `/inApps`, the API of Sandbox under
    /// `/sandbox/inApps` (point the pipeline's sandbox base URL at `…/sandbox`), each seeing only its own
    /// environment's purchases and notifications, as Apple's two hosts do.
    func addRoutes(to router: Router<BasicRequestContext>) {
        for (prefix, environment) in [
            ("inApps", AppStoreModels.Environment.production), ("sandbox/inApps", AppStoreModels.Environment.sandbox),
        ] {
            let api = router.group(RouterPath(prefix))
                .add(
                    middleware: BearerTokenMiddleware(
                        tokens: self.tokens, bundleId: self.signer.bundleId, store: self.store))
            api.get("v1/subscriptions/:id") { _, context in
                try await self.statuses(context.parameters.require("id"), environment)
            }
            api.get("v1/transactions/:id") { _, context in
                try await self.transactionInfo(context.parameters.require("id"), environment)
            }
            api.get("v1/transactions/appTransactions/:id") { _, context in
                try await self.appTransactionInfo(context.parameters.require("id"), environment)
            }
            api.get("v2/history/:id") { request, context in
                try await self.history(
                    context.parameters.require("id"), revision: request.uri.queryParameters.get("revision"), environment
                )
            }
            api.post("v1/notifications/history") { request, _ in
                try await self.notificationHistory(
                    try await request.body.collect(upTo: 1 << 16),
                    token: request.uri.queryParameters.get("paginationToken"), environment)
            }
            api.post("v1/notifications/test") { _, _ in try await self.requestTest(environment) }
            api.get("v1/notifications/test/:token") { _, context in
                try await self.testStatus(context.parameters.require("token"))
            }
            api.put("v2/transactions/consumption/:id") { request, context in
                try await self.consumption(
                    context.parameters.require("id"), body: try await request.body.collect(upTo: 1 << 16), environment)
            }
            api.put("v1/transactions/consumption/:id") { request, context in
                try await self.consumptionV1(
                    context.parameters.require("id"), body: try await request.body.collect(upTo: 1 << 16), environment)
            }
            self.addSupportRoutes(to: api, environment)
            api.post("v1/transactions/:id/finish") { _, context in
                try await self.finishTransaction(context.parameters.require("id"), environment)
            }
            api.put("v1/transactions/:id/appAccountToken") { request, context in
                try await self.appAccountToken(
                    context.parameters.require("id"), body: try await request.body.collect(upTo: 1 << 16), environment)
            }
        }
        // Accepts posts like ingest does, to measure the sim alone or to answer test notifications in tests.
        router.post("sim/sink") { _, _ in Response(status: .ok) }
        router.get("sim/expected") { _, _ in Self.json(await self.store.expected) }
        router.get("sim/stats") { _, _ in Self.json(await self.store.stats) }
        router.get("sim/consumption") { _, _ in Self.json(await self.store.consumptionAnswers) }
        router.post("sim/faults") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let faults = try JSONDecoder().decode(SimStore.Faults.self, from: Data(body.readableBytesView))
            await self.store.setFaults(faults)
            return Self.json(faults)
        }
    }

    // MARK: Endpoints

    private func statuses(_ id: String, _ environment: AppStoreModels.Environment) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "subscriptions", isStatusCall: true) {
            return Self.error(fault)
        }
        guard let purchase = await self.store.purchase(for: id, in: environment) else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        guard purchase.productType == .autoRenewableSubscription, let status = purchase.status,
            let latest = purchase.transactions.last
        else {
            return Self.error(400, 4_000_047)
        }
        let item = LastTransactionsItem(
            status: status.rawValue, originalTransactionId: purchase.originalTransactionId,
            signedTransactionInfo: try self.signer.signTransaction(latest),
            signedRenewalInfo: try purchase.renewal.map { try self.signer.signRenewal($0) })
        return Self.json(
            StatusResponse(
                environment: environment.rawValue, bundleId: self.signer.bundleId, appAppleId: self.signer.appAppleId,
                data: [
                    SubscriptionGroupIdentifierItem(
                        subscriptionGroupIdentifier: latest.subscriptionGroupIdentifier, lastTransactions: [item])
                ]))
    }

    private func transactionInfo(_ id: String, _ environment: AppStoreModels.Environment) async throws -> Response {
        try await self.answering(transaction: id, environment) { transaction in
            Self.json(TransactionInfoResponse(signedTransactionInfo: try self.signer.signTransaction(transaction)))
        }
    }

    /// Finish Transaction (API 1.20): the server has delivered what the transaction bought. 200 with no body for a
    /// transaction of this environment, 404 4040010 else (the sim keeps no state for it: StoreKit's queue is on the
    /// device).
    private func finishTransaction(_ id: String, _ environment: AppStoreModels.Environment) async throws -> Response {
        try await self.answering(transaction: id, environment) { _ in Response(status: .ok) }
    }

    /// The answer of a call about one transaction of this environment (the `transactions` endpoint's faults first):
    /// `answer`'s, or 404 4040010 when the sim has no such transaction.
    private func answering(
        transaction id: String, _ environment: AppStoreModels.Environment,
        _ answer: (JWSTransactionDecodedPayload) throws -> Response
    ) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "transactions", isStatusCall: false) {
            return Self.error(fault)
        }
        guard let purchase = await self.store.purchase(for: id, in: environment),
            let transaction = purchase.transactions.first(where: { $0.transactionId == id })
        else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        return try answer(transaction)
    }

    /// Get App Transaction Info: the customer's app transaction, found by any of their transaction ids or by its own
    /// appTransactionId (``SimAppTransactionIds``), for every kind of purchase; 404 4040019 else.
    private func appTransactionInfo(_ id: String, _ environment: AppStoreModels.Environment) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "appTransactions", isStatusCall: false) {
            return Self.error(fault)
        }
        var byAppTransaction: SimPurchase?
        for original in SimAppTransactionIds.originalCandidates(forAppTransactionId: id) where byAppTransaction == nil {
            byAppTransaction = await self.store.purchase(for: original, in: environment)
        }
        guard let purchase = await self.store.purchase(for: id, in: environment) ?? byAppTransaction else {
            return Self.error(404, 4_040_019)
        }
        return Self.json(
            AppTransactionInfoResponse(
                signedAppTransactionInfo: try self.signer.signAppTransaction(for: purchase, environment: environment)))
    }

    private func history(_ id: String, revision: String?, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admitHistory() { return Self.error(fault) }
        guard let purchase = await self.store.purchase(for: id, in: environment) else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        guard let offset = revision.map({ Int($0) }) ?? 0 else { return Self.error(400, 4_000_005) }
        let page = purchase.transactions.dropFirst(offset).prefix(self.pageSize)
        let next = offset + page.count
        return Self.json(
            HistoryResponse(
                revision: String(next), bundleId: self.signer.bundleId, appAppleId: self.signer.appAppleId,
                environment: environment.rawValue, hasMore: next < purchase.transactions.count,
                signedTransactions: try page.map { try self.signer.signTransaction($0) }))
    }

    private func notificationHistory(_ body: ByteBuffer, token: String?, _ environment: AppStoreModels.Environment)
        async throws -> Response
    {
        if let fault = await self.store.admit(endpoint: "notification-history", isStatusCall: false) {
            return Self.error(fault)
        }
        guard
            let request = try? JSONDecoder().decode(NotificationHistoryRequest.self, from: Data(body.readableBytesView))
        else {
            return Self.error(400, APIErrorCode.generalBadRequest)
        }
        if request.transactionId != nil && request.notificationType != nil {
            return Self.error(400, APIErrorCode.multipleFilters)
        }
        guard request.startDate <= request.endDate else { return Self.error(400, 4_000_013) }
        guard let offset = token.map({ Int($0) }) ?? 0 else { return Self.error(400, 4_000_014) }
        var items = await self.store.history(request, environment: environment)
        if let type = request.notificationType {
            items = items.filter { (try? SimAPI.decodeType($0.signedPayload)) == type }
        }
        let page = items.dropFirst(offset).prefix(self.pageSize)
        let next = offset + page.count
        return Self.json(
            NotificationHistoryResponse(
                paginationToken: next < items.count ? String(next) : nil, hasMore: next < items.count,
                notificationHistory: page.map {
                    NotificationHistoryResponseItem(sendAttempts: $0.attempts, signedPayload: $0.signedPayload)
                }))
    }

    private func requestTest(_ environment: AppStoreModels.Environment) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "test", isStatusCall: false) { return Self.error(fault) }
        let token = UUID().uuidString.lowercased() + "_" + String(Int64(Date().timeIntervalSince1970 * 1000))
        let notification = SimNotification(
            uuid: UUID().uuidString.lowercased(), type: "TEST", subtype: nil,
            signedDate: Int64(Date().timeIntervalSince1970 * 1000),
            environment: environment)
        await self.store.registerTest(token: token, uuid: notification.uuid)
        let deliver = self.deliverNow
        Task { await deliver(notification) }
        return Self.json(SendTestNotificationResponse(testNotificationToken: token))
    }

    private func testStatus(_ token: String) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "test-status", isStatusCall: false) { return Self.error(fault) }
        guard let sent = await self.store.testNotification(token: token) else {
            return Self.error(404, APIErrorCode.testNotificationNotFound)
        }
        return Self.json(CheckTestNotificationResponse(signedPayload: sent.signedPayload, sendAttempts: sent.attempts))
    }

    /// Send Consumption Information (v2) with Apple's checks: consent given (no consent, no answer), a known
    /// delivery status and refund preference, a percentage within 0…100000 and never for an auto-renewable,
    /// GRANT_PRORATED only with a percentage strictly between 0 and 100000.
    private func consumption(_ id: String, body: ByteBuffer, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admit(endpoint: "consumption", isStatusCall: false) { return Self.error(fault) }
        guard let request = try? JSONDecoder().decode(ConsumptionRequest.self, from: Data(body.readableBytesView))
        else {
            return Self.error(400, APIErrorCode.generalBadRequest)
        }
        guard let purchase = await self.store.purchase(for: id, in: environment) else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        if purchase.transactions.first?.inAppOwnershipType == .assigned {
            return Self.error(400, APIErrorCode.assignedTransactionNotSupported)
        }
        guard request.customerConsented else { return Self.error(400, 4_000_033) }
        let deliveryStatuses = [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
            "UNDELIVERED_OTHER",
        ]
        guard deliveryStatuses.contains(request.deliveryStatus) else { return Self.error(400, 4_000_034) }
        if let preference = request.refundPreference, !["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(preference)
        {
            return Self.error(400, 4_000_037)
        }
        if let percentage = request.consumptionPercentage {
            guard purchase.productType != .autoRenewableSubscription, (0...100_000).contains(percentage) else {
                return Self.error(400, 4_000_032)
            }
        }
        if request.refundPreference == "GRANT_PRORATED",
            !(request.consumptionPercentage.map { $0 > 0 && $0 < 100_000 } ?? false)
        {
            return Self.error(400, 4_000_032)
        }
        await self.store.recordConsumptionAnswer(id, body: String(buffer: body), version: "v2")
        return Response(status: .accepted)
    }

    /// Send Consumption Information V1 with Apple's checks: consent given and every coded field within its range.
    private func consumptionV1(_ id: String, body: ByteBuffer, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admit(endpoint: "consumption", isStatusCall: false) { return Self.error(fault) }
        guard let request = try? JSONDecoder().decode(ConsumptionRequestV1.self, from: Data(body.readableBytesView))
        else {
            return Self.error(400, APIErrorCode.generalBadRequest)
        }
        guard let purchase = await self.store.purchase(for: id, in: environment) else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        if purchase.transactions.first?.inAppOwnershipType == .assigned {
            return Self.error(400, APIErrorCode.assignedTransactionNotSupported)
        }
        guard request.customerConsented else { return Self.error(400, 4_000_033) }
        let ranges: [(Int32, ClosedRange<Int32>, Int)] = [
            (request.accountTenure, 0...7, 4_000_035), (request.consumptionStatus, 0...3, 4_000_036),
            (request.deliveryStatus, 0...5, 4_000_034),
            (request.lifetimeDollarsPurchased, 0...7, 4_000_038), (request.lifetimeDollarsRefunded, 0...7, 4_000_039),
            (request.platform, 0...2, 4_000_040), (request.playTime, 0...7, 4_000_041),
            (request.refundPreference, 0...3, 4_000_037),
            (request.userStatus, 0...4, 4_000_042),
        ]
        if let bad = ranges.first(where: { !$0.1.contains($0.0) }) { return Self.error(400, bad.2) }
        guard request.appAccountToken.isEmpty || UUID(uuidString: request.appAccountToken) != nil else {
            return Self.error(400, APIErrorCode.invalidAppAccountToken)
        }
        await self.store.recordConsumptionAnswer(id, body: String(buffer: body), version: "v1")
        return Response(status: .accepted)
    }

    private func appAccountToken(_ id: String, body: ByteBuffer, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admit(endpoint: "app-account-token", isStatusCall: false) {
            return Self.error(fault)
        }
        guard
            let request = try? JSONDecoder().decode(
                UpdateAppAccountTokenRequest.self, from: Data(body.readableBytesView)),
            UUID(uuidString: request.appAccountToken) != nil
        else { return Self.error(400, APIErrorCode.invalidAppAccountToken) }
        guard await self.store.purchase(for: id, in: environment) != nil,
            await self.store.setAppAccountToken(request.appAccountToken.lowercased(), original: id)
        else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        return Response(status: .ok)
    }

    // MARK: Helpers

    /// The notification type inside a signed payload (the sim's own data, so no verification needed).
    static func decodeType(_ signedPayload: String) throws -> String? {
        try UnverifiedJWS(signedPayload).decodePayload(as: ResponseBodyV2DecodedPayload.self).rawNotificationType
    }

    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An error answer with Apple's JSON body and, for 429, `Retry-After` in UNIX milliseconds.
    static func error(_ status: Int, _ code: Int, retryAfter: Int64? = nil) -> Response {
        var response = Self.json(
            ErrorPayload(errorCode: code, errorMessage: "sim error \(code)"), status: HTTPResponse.Status(code: status))
        if let retryAfter { response.headers[HTTPField.Name("Retry-After")!] = String(retryAfter) }
        return response
    }

    /// An injected fault's answer.
    static func error(_ fault: (Int, Int, Int64?)) -> Response { Self.error(fault.0, fault.1, retryAfter: fault.2) }
}

/// Checks `Authorization: Bearer <jwt>` on every App Store Server API route: signature with the
/// registered key, alg, kid, iss, aud, lifetime, expiry and `bid`; Apple answers 401 with a plain-text body.
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let tokens: APITokenValidator
    let bundleId: String
    let store: SimStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let header = request.headers[.authorization] ?? ""
        do {
            guard header.hasPrefix("Bearer ") else { throw APITokenError("no bearer token") }
            let claims = try self.tokens.validate(String(header.dropFirst(7)))
            guard claims.bid == self.bundleId else { throw APITokenError("bid \(claims.bid) is not \(self.bundleId)") }
        } catch {
            await self.store.countRejectedToken()
            return Response(
                status: .unauthorized, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "Unauthenticated: \(error)\n")))
        }
        return try await next(request, context)
    }
}
