import AppStoreAPI
import AppStoreModels
import Foundation
import Hummingbird

// MARK: - Look Up Order ID, Get Refund History, renewal-date extensions

extension SimAPI {
    /// Adds the support endpoints of one environment's API.
    func addSupportRoutes(to api: RouterGroup<BasicRequestContext>, _ environment: AppStoreModels.Environment) {
        api.get("v1/lookup/:orderId") { _, context in
            try await self.lookUpOrder(context.parameters.require("orderId"), environment)
        }
        api.get("v2/refund/lookup/:id") { request, context in
            try await self.refundHistory(
                context.parameters.require("id"), revision: request.uri.queryParameters.get("revision"), environment)
        }
        api.post("v1/subscriptions/extend/mass") { request, _ in
            try await self.massExtend(try await request.body.collect(upTo: 1 << 16), environment)
        }
        api.get("v1/subscriptions/extend/mass/:productId/:requestIdentifier") { _, context in
            try await self.massExtensionStatus(
                context.parameters.require("productId"), context.parameters.require("requestIdentifier"), environment)
        }
        api.put("v1/subscriptions/extend/:original") { request, context in
            try await self.extend(
                context.parameters.require("original"), body: try await request.body.collect(upTo: 1 << 16), environment
            )
        }
    }

    /// Look Up Order ID: status 0 with the order's transactions, or status 1 (an invalid order id is not an HTTP error).
    private func lookUpOrder(_ orderId: String, _ environment: AppStoreModels.Environment) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "order-lookup", isStatusCall: false) {
            return Self.error(fault)
        }
        let transactions = await self.store.transactions(ofOrder: orderId, in: environment)
        return Self.json(
            OrderLookupResponse(
                status: transactions.isEmpty ? 1 : 0,
                signedTransactions: try transactions.map { try self.signer.signTransaction($0) }))
    }

    /// Get Refund History (v2): 20 per page, oldest refund first; `revision` continues.
    private func refundHistory(_ id: String, revision: String?, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admit(endpoint: "refund-history", isStatusCall: false) {
            return Self.error(fault)
        }
        guard let refunded = await self.store.refundedTransactions(of: id, in: environment) else {
            return Self.error(404, APIErrorCode.transactionIdNotFound)
        }
        guard let offset = revision.map({ Int($0) }) ?? 0 else { return Self.error(400, 4_000_005) }
        let page = refunded.dropFirst(offset).prefix(self.pageSize)
        let next = offset + page.count
        return Self.json(
            RefundHistoryResponse(
                signedTransactions: try page.map { try self.signer.signTransaction($0) }, revision: String(next),
                hasMore: next < refunded.count))
    }

    /// Checks an extension's days, reason and request identifier as Apple does: (status, errorCode) when wrong.
    private static func invalidExtension(days: Int32, reason: Int32, requestIdentifier: String) -> (Int, Int)? {
        guard (1...90).contains(days) else { return (400, 4_000_009) }
        guard (0...3).contains(reason) else { return (400, 4_000_010) }
        guard !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else { return (400, 4_000_011) }
        return nil
    }

    /// Extend a Subscription Renewal Date: the period grows, RENEWAL_EXTENDED goes out.
    private func extend(_ original: String, body: ByteBuffer, _ environment: AppStoreModels.Environment) async throws
        -> Response
    {
        if let fault = await self.store.admit(endpoint: "extend", isStatusCall: false) { return Self.error(fault) }
        guard let request = try? JSONDecoder().decode(ExtendRenewalDateRequest.self, from: Data(body.readableBytesView))
        else {
            return Self.error(400, APIErrorCode.generalBadRequest)
        }
        if let invalid = Self.invalidExtension(
            days: request.extendByDays, reason: request.extendReasonCode, requestIdentifier: request.requestIdentifier)
        {
            return Self.error(invalid.0, invalid.1)
        }
        switch await self.store.extend(
            original, days: request.extendByDays, requestIdentifier: request.requestIdentifier, environment: environment
        ) {
        case .refused(let status, let code):
            return Self.error(status, code)
        case .extended(let original, let webOrderLineItemId, let effectiveDate, let notification):
            if let notification { await self.deliverNow(notification) }
            return Self.json(
                ExtendRenewalDateResponse(
                    originalTransactionId: original, webOrderLineItemId: webOrderLineItemId, success: true,
                    effectiveDate: effectiveDate))
        }
    }

    /// Extend Renewal Dates for All Active Subscribers: answered at once; the work runs on, each subscription
    /// extended with its RENEWAL_EXTENDED, then RENEWAL_EXTENSION/SUMMARY with the counts.
    private func massExtend(_ body: ByteBuffer, _ environment: AppStoreModels.Environment) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "extend-mass", isStatusCall: false) { return Self.error(fault) }
        guard
            let request = try? JSONDecoder().decode(
                MassExtendRenewalDateRequest.self, from: Data(body.readableBytesView))
        else {
            return Self.error(400, APIErrorCode.generalBadRequest)
        }
        if let invalid = Self.invalidExtension(
            days: request.extendByDays, reason: request.extendReasonCode, requestIdentifier: request.requestIdentifier)
        {
            return Self.error(invalid.0, invalid.1)
        }
        guard !request.productId.isEmpty else { return Self.error(400, 4_000_023) }
        if let countries = request.storefrontCountryCodes,
            countries.isEmpty || countries.contains(where: { $0.count != 3 })
        {
            return Self.error(400, 4_000_027)
        }
        let store = self.store, deliver = self.deliverNow, signer = self.signer
        if await store.startMassExtension(request, environment: environment) {
            Task {
                for original in await store.activeSubscriptions(of: request.productId, in: environment) {
                    switch await store.extend(
                        original, days: request.extendByDays, requestIdentifier: request.requestIdentifier,
                        environment: environment)
                    {
                    case .extended(_, _, _, let notification):
                        await store.recordMassExtension(
                            request.requestIdentifier, environment: environment, succeeded: true)
                        if let notification { await deliver(notification) }
                    case .refused:
                        await store.recordMassExtension(
                            request.requestIdentifier, environment: environment, succeeded: false)
                    }
                }
                let at = Int64(Date().timeIntervalSince1970 * 1000)
                guard
                    let done = await store.completeMassExtension(
                        request.requestIdentifier, environment: environment, at: at)
                else { return }
                var summary = Summary()
                summary.environment = environment
                summary.appAppleId = signer.appAppleId
                summary.bundleId = signer.bundleId
                summary.productId = request.productId
                summary.requestIdentifier = request.requestIdentifier
                summary.storefrontCountryCodes = request.storefrontCountryCodes ?? []
                summary.succeededCount = done.succeededCount
                summary.failedCount = done.failedCount
                await deliver(
                    SimNotification(
                        uuid: UUID().uuidString.lowercased(), type: "RENEWAL_EXTENSION", subtype: "SUMMARY",
                        signedDate: at, container: .summary,
                        environment: environment, summary: summary))
            }
        }
        return Self.json(MassExtendRenewalDateResponse(requestIdentifier: request.requestIdentifier))
    }

    /// Get Status of Subscription Renewal Date Extensions.
    private func massExtensionStatus(
        _ productId: String, _ requestIdentifier: String, _ environment: AppStoreModels.Environment
    ) async throws -> Response {
        if let fault = await self.store.admit(endpoint: "extend-mass-status", isStatusCall: false) {
            return Self.error(fault)
        }
        guard
            let status = await self.store.massExtension(
                productId: productId, requestIdentifier: requestIdentifier, environment: environment)
        else {
            return Self.error(404, 4_040_009)
        }
        return Self.json(status)
    }
}
