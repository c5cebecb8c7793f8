public import AppStoreModels
import Foundation
import JWSVerification
import NIOHTTP1

// MARK: - Support look-ups and make-goods

/// A refunded or looked-up transaction list, each verified, with the environment that answered.
public struct VerifiedTransactions: Hashable, Sendable {
    public var environment: Environment
    public var transactions: [VerifiedTransaction]
}

/// A mass extension's progress as Apple reports it.
public typealias MassExtensionStatus = MassExtendRenewalDateStatusResponse

extension AppStoreServerAPIClient {
    /// Look Up Order ID (the id on the customer's emailed receipt): the order's transactions, verified; nil when
    /// Apple says the order id is invalid (`status` 1). Production first, then Sandbox when fallback is on.
    public func lookUpOrder(_ orderId: String) async throws(AppStoreAPIError) -> VerifiedTransactions? {
        var environment = self.configuration.environment
        var response: OrderLookupResponse = try Self.decode(
            try await self.send(.GET, "/inApps/v1/lookup/\(Self.escape(orderId))", environment: environment))
        if response.status != 0, environment == .production, self.configuration.sandboxFallback {
            environment = .sandbox
            response = try Self.decode(
                try await self.send(.GET, "/inApps/v1/lookup/\(Self.escape(orderId))", environment: environment))
        }
        guard response.status == 0 else { return nil }
        return VerifiedTransactions(
            environment: environment,
            transactions: try await self.verifiedTransactions(response.signedTransactions, environment))
    }

    /// Get Refund History (v2), every page: the customer's refunded transactions in this app, oldest refund first.
    public func refundHistory(_ transactionId: String) async throws(AppStoreAPIError) -> VerifiedTransactions {
        var revision: String?
        var result: [VerifiedTransaction] = []
        var environment = self.configuration.environment
        for page in 0..<self.maximumPages {
            let query = revision.map { [("revision", $0)] } ?? []
            let bytes: [UInt8]
            if page == 0 {
                (environment, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
                    try await self.send(
                        .GET, "/inApps/v2/refund/lookup/\(Self.escape(transactionId))", query: query,
                        environment: environment)
                }
            } else {
                bytes = try await self.send(
                    .GET, "/inApps/v2/refund/lookup/\(Self.escape(transactionId))", query: query,
                    environment: environment)
            }
            let response: RefundHistoryResponse = try Self.decode(bytes)
            result += try await self.verifiedTransactions(response.signedTransactions, environment)
            guard response.hasMore, let next = response.revision else {
                return VerifiedTransactions(environment: environment, transactions: result)
            }
            revision = next
        }
        throw AppStoreAPIError(.invalidResponse("refund history did not end after \(self.maximumPages) pages"))
    }

    /// Extend a Subscription Renewal Date for one subscription (Apple then sends RENEWAL_EXTENDED).
    public func extendRenewalDate(_ originalTransactionId: String, _ request: ExtendRenewalDateRequest)
        async throws(AppStoreAPIError)
        -> ExtendRenewalDateResponse
    {
        let body = try Self.encode(request)
        let (_, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .PUT, "/inApps/v1/subscriptions/extend/\(Self.escape(originalTransactionId))", body: body,
                environment: environment)
        }
        return try Self.decode(bytes)
    }

    /// Extend Renewal Dates for All Active Subscribers of a product (asynchronous: poll ``massExtensionStatus(productId:requestIdentifier:)``).
    public func extendRenewalDatesForAllActiveSubscribers(_ request: MassExtendRenewalDateRequest)
        async throws(AppStoreAPIError)
        -> MassExtendRenewalDateResponse
    {
        try Self.decode(
            try await self.send(
                .POST, "/inApps/v1/subscriptions/extend/mass", body: try Self.encode(request),
                environment: self.configuration.environment))
    }

    /// Get Status of Subscription Renewal Date Extensions.
    public func massExtensionStatus(productId: String, requestIdentifier: String) async throws(AppStoreAPIError)
        -> MassExtensionStatus
    {
        try Self.decode(
            try await self.send(
                .GET,
                "/inApps/v1/subscriptions/extend/mass/\(Self.escape(productId))/\(Self.escape(requestIdentifier))",
                environment: self.configuration.environment))
    }

    /// Polls a mass extension until Apple reports it complete (every `interval`, at most `limit` polls).
    public func waitForMassExtension(
        productId: String, requestIdentifier: String, interval: Duration = .seconds(5), limit: Int = 10_000,
        progress: @Sendable (MassExtensionStatus) -> Void = { _ in }
    ) async throws(AppStoreAPIError) -> MassExtensionStatus {
        for _ in 0..<limit {
            let status = try await self.massExtensionStatus(productId: productId, requestIdentifier: requestIdentifier)
            progress(status)
            if status.complete == true { return status }
            do { try await Task.sleep(for: interval) } catch { throw AppStoreAPIError(.transport("cancelled")) }
        }
        throw AppStoreAPIError(
            .invalidResponse("mass extension \(requestIdentifier) not complete after \(limit) polls"))
    }

    /// Verifies each signed transaction of an answer.
    private func verifiedTransactions(_ signed: [String], _ environment: Environment) async throws(AppStoreAPIError)
        -> [VerifiedTransaction]
    {
        let verifier = try self.verifier(environment)
        var result: [VerifiedTransaction] = []
        for item in signed {
            result.append(
                VerifiedTransaction(
                    signed: item,
                    transaction: try await Self.verified { () async throws(VerificationError) in
                        try await verifier.verifyTransaction(item)
                    }))
        }
        return result
    }
}
