public import AppStoreModels
public import AsyncHTTPClient
public import Foundation
public import JWSVerification
public import Logging
import NIOCore
import NIOHTTP1

/// The App Store Server API endpoints this product uses, over AsyncHTTPClient.
///
/// Every request carries a fresh ES256 bearer token; errors come back as ``AppStoreAPIError`` with Apple's
/// code; the ``RetryPolicy`` decides inline retries (429 until `Retry-After`, 5xx/timeouts with jittered
/// back-off); production's 4040010 is asked of sandbox when ``AppStoreAPIConfiguration/sandboxFallback`` is on.
/// Every signed item in an answer is verified with the verifier of the answer's environment before it is
/// returned: nothing unverified leaves this type.
public struct AppStoreServerAPIClient: Sendable {
    let http: HTTPClient
    var tokens: APITokenFactory
    var configuration: AppStoreAPIConfiguration
    let verifiers: [Environment: SignedDataVerifier]
    let logger: Logger
    /// Pages followed at most by the paginated calls (a guard against a server that never says `hasMore: false`).
    var maximumPages = 10_000

    /// A client; `verifiers` must hold one verifier per environment answers can come from.
    public init(
        http: HTTPClient, tokens: APITokenFactory, configuration: AppStoreAPIConfiguration,
        verifiers: [Environment: SignedDataVerifier], logger: Logger
    ) {
        self.http = http
        self.tokens = tokens
        self.configuration = configuration
        self.verifiers = verifiers
        self.logger = logger
    }

    // MARK: Scope

    /// The app the calls are about (the tokens' `bid`).
    public var bundleID: String { self.tokens.credentials.bundleID }
    /// The environment the calls go to first.
    public var environment: Environment { self.configuration.environment }

    /// The same client for calls about another app and environment: its tokens name `bundleID`, its calls
    /// go to `environment`'s base URL. Production's 4040010 is asked of Sandbox only when `fallbackToSandbox`
    /// (for a bare transaction id whose environment is unknown, as Apple advises).
    public func scoped(bundleID: String, environment: Environment, fallbackToSandbox: Bool = false)
        throws(AppStoreAPIError) -> Self
    {
        guard environment.isAppStoreServer else {
            throw AppStoreAPIError(
                .invalidResponse("the App Store Server API serves Production and Sandbox, not \(environment.rawValue)"))
        }
        var scoped = self
        var credentials = self.tokens.credentials
        credentials.bundleID = bundleID
        do { scoped.tokens = try APITokenFactory(credentials: credentials, lifetime: self.tokens.lifetime) } catch {
            throw AppStoreAPIError(.invalidResponse("cannot make tokens for \(bundleID): \(error)"))
        }
        scoped.configuration.environment = environment
        scoped.configuration.sandboxFallback = environment == .production && fallbackToSandbox
        return scoped
    }

    /// The same client with every call paced by `pacer` (shared by every client it is given to).
    public func paced(by pacer: APIRequestPacer) -> Self {
        var paced = self
        paced.configuration.pacer = pacer
        return paced
    }

    // MARK: Subscriptions and transactions

    /// Get All Subscription Statuses for any transaction id of the subscription, optionally filtered by status.
    public func subscriptionStatuses(_ transactionId: String, statuses: [Status] = []) async throws(AppStoreAPIError)
        -> VerifiedStatuses
    {
        let query = statuses.map { ("status", String($0.rawValue)) }
        let (environment, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .GET, "/inApps/v1/subscriptions/\(Self.escape(transactionId))", query: query, environment: environment)
        }
        let response: StatusResponse = try Self.decode(bytes)
        let verifier = try self.verifier(environment)
        var subscriptions: [VerifiedSubscriptionStatus] = []
        for group in response.data {
            for item in group.lastTransactions {
                guard let signed = item.signedTransactionInfo, let status = item.status,
                    let original = item.originalTransactionId
                else {
                    throw AppStoreAPIError(
                        .invalidResponse(
                            "a lastTransactions item lacks status, originalTransactionId or signedTransactionInfo"))
                }
                let transaction = try await Self.verified { () async throws(VerificationError) in
                    try await verifier.verifyTransaction(signed)
                }
                var renewal: JWSRenewalInfoDecodedPayload?
                if let signedRenewal = item.signedRenewalInfo {
                    renewal = try await Self.verified { () async throws(VerificationError) in
                        try await verifier.verifyRenewalInfo(signedRenewal)
                    }
                }
                guard transaction.originalTransactionId == original else {
                    throw AppStoreAPIError(
                        .invalidResponse(
                            "item \(original) carries a transaction of \(transaction.originalTransactionId ?? "nothing")"
                        ))
                }
                subscriptions.append(
                    VerifiedSubscriptionStatus(
                        subscriptionGroupIdentifier: group.subscriptionGroupIdentifier, status: status,
                        originalTransactionId: original,
                        transaction: transaction, renewalInfo: renewal, signedTransactionInfo: signed,
                        signedRenewalInfo: item.signedRenewalInfo))
            }
        }
        return VerifiedStatuses(environment: environment, subscriptions: subscriptions)
    }

    /// Get Transaction Info.
    public func transactionInfo(_ transactionId: String) async throws(AppStoreAPIError) -> VerifiedTransaction {
        let (environment, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(.GET, "/inApps/v1/transactions/\(Self.escape(transactionId))", environment: environment)
        }
        let response: TransactionInfoResponse = try Self.decode(bytes)
        guard let signed = response.signedTransactionInfo else {
            throw AppStoreAPIError(.invalidResponse("no signedTransactionInfo"))
        }
        let verifier = try self.verifier(environment)
        return VerifiedTransaction(
            signed: signed,
            transaction: try await Self.verified { () async throws(VerificationError) in
                try await verifier.verifyTransaction(signed)
            })
    }

    /// Get App Transaction Info (API 1.17): the customer's app transaction (the app's own purchase or download),
    /// verified, from any of their transaction ids or their appTransactionId; with the environment that answered.
    public func appTransactionInfo(_ transactionId: String) async throws(AppStoreAPIError)
        -> (environment: Environment, appTransaction: AppTransaction)
    {
        let (environment, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .GET, "/inApps/v1/transactions/appTransactions/\(Self.escape(transactionId))", environment: environment)
        }
        let response: AppTransactionInfoResponse = try Self.decode(bytes)
        guard let signed = response.signedAppTransactionInfo else {
            throw AppStoreAPIError(.invalidResponse("no signedAppTransactionInfo"))
        }
        let verifier = try self.verifier(environment)
        let appTransaction = try await Self.verified { () async throws(VerificationError) in
            try await verifier.verifyAppTransaction(signed)
        }
        return (environment, appTransaction)
    }

    /// Get Transaction History (v2), every page, oldest first.
    public func transactionHistory(_ transactionId: String) async throws(AppStoreAPIError) -> [VerifiedTransaction] {
        var revision: String?
        var result: [VerifiedTransaction] = []
        var environment = self.configuration.environment
        for page in 0..<self.maximumPages {
            var query = [("sort", "ASCENDING")]
            if let revision { query.append(("revision", revision)) }
            let bytes: [UInt8]
            if page == 0 {
                (environment, bytes) = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
                    try await self.send(
                        .GET, "/inApps/v2/history/\(Self.escape(transactionId))", query: query, environment: environment
                    )
                }
            } else {
                bytes = try await self.send(
                    .GET, "/inApps/v2/history/\(Self.escape(transactionId))", query: query, environment: environment)
            }
            let response: HistoryResponse = try Self.decode(bytes)
            let verifier = try self.verifier(environment)
            for signed in response.signedTransactions {
                result.append(
                    VerifiedTransaction(
                        signed: signed,
                        transaction: try await Self.verified { () async throws(VerificationError) in
                            try await verifier.verifyTransaction(signed)
                        }))
            }
            guard response.hasMore == true, let next = response.revision else { return result }
            revision = next
        }
        throw AppStoreAPIError(.invalidResponse("transaction history did not end after \(self.maximumPages) pages"))
    }

    // MARK: Notifications

    /// Get Notification History, every page, each notification verified. `body` of each call is `request`.
    public func notificationHistory(_ request: NotificationHistoryRequest) async throws(AppStoreAPIError)
        -> [VerifiedHistoryNotification]
    {
        var all: [VerifiedHistoryNotification] = []
        try await self.notificationHistoryPages(request) { (page) throws(AppStoreAPIError) in all += page }
        return all
    }

    /// Get Notification History page by page: `onPage` gets each page's verified notifications as it arrives
    /// (so a backfill can produce them before fetching the next page).
    public func notificationHistoryPages(
        _ request: NotificationHistoryRequest,
        onPage: ([VerifiedHistoryNotification]) async throws(AppStoreAPIError) -> Void
    ) async throws(AppStoreAPIError) {
        let body: [UInt8]
        do { body = Array(try JSONEncoder().encode(request)) } catch {
            throw AppStoreAPIError(.invalidResponse("cannot encode the request: \(error)"))
        }
        let environment = self.configuration.environment
        let verifier = try self.verifier(environment)
        var token: String?
        for _ in 0..<self.maximumPages {
            let query = token.map { [("paginationToken", $0)] } ?? []
            let bytes = try await self.send(
                .POST, "/inApps/v1/notifications/history", query: query, body: body, environment: environment)
            let response: NotificationHistoryResponse = try Self.decode(bytes)
            var page: [VerifiedHistoryNotification] = []
            for item in response.notificationHistory {
                guard let signed = item.signedPayload else {
                    throw AppStoreAPIError(.invalidResponse("a history item has no signedPayload"))
                }
                let notification = try await Self.verified { () async throws(VerificationError) in
                    try await verifier.verifyNotification(signed)
                }
                page.append(
                    VerifiedHistoryNotification(
                        signedPayload: signed, notification: notification, sendAttempts: item.sendAttempts ?? []))
            }
            try await onPage(page)
            guard response.hasMore == true, let next = response.paginationToken else { return }
            token = next
        }
        throw AppStoreAPIError(.invalidResponse("notification history did not end after \(self.maximumPages) pages"))
    }

    /// Request a Test Notification; returns the token to ask its status with.
    public func requestTestNotification() async throws(AppStoreAPIError) -> String {
        let bytes = try await self.send(
            .POST, "/inApps/v1/notifications/test", environment: self.configuration.environment)
        let response: SendTestNotificationResponse = try Self.decode(bytes)
        guard let token = response.testNotificationToken else {
            throw AppStoreAPIError(.invalidResponse("no testNotificationToken"))
        }
        return token
    }

    /// Get Test Notification Status: the verified TEST notification and its delivery attempts so far.
    public func testNotificationStatus(_ token: String) async throws(AppStoreAPIError) -> VerifiedHistoryNotification {
        let environment = self.configuration.environment
        let bytes = try await self.send(
            .GET, "/inApps/v1/notifications/test/\(Self.escape(token))", environment: environment)
        let response: CheckTestNotificationResponse = try Self.decode(bytes)
        guard let signed = response.signedPayload else { throw AppStoreAPIError(.invalidResponse("no signedPayload")) }
        let verifier = try self.verifier(environment)
        let notification = try await Self.verified { () async throws(VerificationError) in
            try await verifier.verifyNotification(signed)
        }
        return VerifiedHistoryNotification(
            signedPayload: signed, notification: notification, sendAttempts: response.sendAttempts ?? [])
    }

    // MARK: Writes

    /// Send Consumption Information (v2) for a CONSUMPTION_REQUEST.
    public func sendConsumptionInformation(_ transactionId: String, _ request: ConsumptionRequest)
        async throws(AppStoreAPIError)
    {
        _ = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .PUT, "/inApps/v2/transactions/consumption/\(Self.escape(transactionId))",
                body: try Self.encode(request),
                environment: environment)
        }
    }

    /// Send Consumption Information V1 (Apple's coded buckets, with tenure, lifetime amounts and play time).
    public func sendConsumptionInformationV1(_ transactionId: String, _ request: ConsumptionRequestV1)
        async throws(AppStoreAPIError)
    {
        _ = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .PUT, "/inApps/v1/transactions/consumption/\(Self.escape(transactionId))",
                body: try Self.encode(request),
                environment: environment)
        }
    }

    /// Set App Account Token on a purchase (`appAccountToken` must be a UUID).
    public func setAppAccountToken(_ originalTransactionId: String, appAccountToken: UUID)
        async throws(AppStoreAPIError)
    {
        let body = try Self.encode(
            UpdateAppAccountTokenRequest(appAccountToken: appAccountToken.uuidString.lowercased()))
        _ = try await self.withSandboxFallback { (environment) throws(AppStoreAPIError) in
            try await self.send(
                .PUT, "/inApps/v1/transactions/\(Self.escape(originalTransactionId))/appAccountToken", body: body,
                environment: environment)
        }
    }

    // MARK: Transport

    /// Runs a call in the configured environment and, for production's 4040010 with fallback on, again in sandbox.
    func withSandboxFallback(
        _ call: (Environment) async throws(AppStoreAPIError) -> [UInt8]
    ) async throws(AppStoreAPIError) -> (Environment, [UInt8]) {
        let first = self.configuration.environment
        do {
            return (first, try await call(first))
        } catch
            where first == .production && self.configuration.sandboxFallback
            && error.errorCode == APIErrorCode.transactionIdNotFound
        {
            self.logger.debug("transaction not found in production; asking sandbox")
            return (.sandbox, try await call(.sandbox))
        }
    }

    /// Sends one request with retries as the policy allows; returns the body of a 2xx answer.
    func send(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: [UInt8]? = nil,
        contentType: String = "application/json", environment: Environment
    ) async throws(AppStoreAPIError) -> [UInt8] {
        var attempt = 1
        let pacer = self.configuration.pacer, bundleID = self.bundleID
        while true {
            do {
                await pacer?.admit(bundleID: bundleID, environment: environment, path: path)
                return try await self.sendOnce(
                    method, path, query: query, body: body, contentType: contentType, environment: environment)
            } catch {
                if let pacer, let retryAfter = error.retryAfter {
                    await pacer.pause(bundleID: bundleID, environment: environment, path: path, until: retryAfter)
                }
                guard
                    let delay = self.configuration.retry.delay(
                        after: error, attempt: attempt, now: Date(), jitter: Double.random(in: 0..<1))
                else {
                    throw error
                }
                self.logger.debug(
                    "App Store Server API call failed; retrying", metadata: ["error": "\(error)", "delay": "\(delay)"])
                do { try await Task.sleep(for: delay) } catch { throw AppStoreAPIError(.transport("cancelled")) }
                attempt += 1
            }
        }
    }

    /// One HTTP exchange.
    private func sendOnce(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], body: [UInt8]?, contentType: String,
        environment: Environment
    ) async throws(AppStoreAPIError) -> [UInt8] {
        var components = URLComponents(
            url: self.configuration.baseURL(for: environment).appendingPathComponent(path),
            resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let url = components?.url else {
            throw AppStoreAPIError(.invalidResponse("cannot build a URL for \(path)"))
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        do {
            request.headers.add(name: "Authorization", value: "Bearer \(try self.tokens.token())")
        } catch {
            throw AppStoreAPIError(.invalidResponse("cannot sign a bearer token: \(error)"))
        }
        request.headers.add(name: "User-Agent", value: "appstore-notifications/1")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let headers: HTTPHeaders
        var bytes: [UInt8]
        do {
            let timeout = TimeAmount.nanoseconds(Int64(self.configuration.requestTimeout.timeInterval * 1e9))
            let response = try await self.http.execute(request, timeout: timeout)
            status = Int(response.status.code)
            headers = response.headers
            bytes = Array(buffer: try await response.body.collect(upTo: 16 << 20))
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
            throw AppStoreAPIError(.timeout)
        } catch {
            throw AppStoreAPIError(.transport("\(error)"))
        }
        guard !(200..<300).contains(status) else { return bytes }
        let payload = try? JSONDecoder().decode(ErrorPayload.self, from: Data(bytes))
        let retryAfter = headers.first(name: "Retry-After").flatMap(Int64.init).map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
        bytes.removeAll()
        throw AppStoreAPIError(
            .http(status: status, errorCode: payload?.errorCode, message: payload?.errorMessage), retryAfter: retryAfter
        )
    }

    // MARK: Helpers

    /// The verifier for answers from an environment.
    func verifier(_ environment: Environment) throws(AppStoreAPIError) -> SignedDataVerifier {
        guard let verifier = self.verifiers[environment] else {
            throw AppStoreAPIError(.invalidResponse("no verifier is configured for \(environment.rawValue) answers"))
        }
        return verifier
    }

    /// Runs a verification, turning its failure into an API error.
    static func verified<T>(_ verify: () async throws(VerificationError) -> T) async throws(AppStoreAPIError) -> T {
        do { return try await verify() } catch { throw AppStoreAPIError(.verification(error)) }
    }

    /// Decodes a JSON answer.
    static func decode<T: Decodable>(_ bytes: [UInt8]) throws(AppStoreAPIError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch {
            throw AppStoreAPIError(.invalidResponse("\(T.self): \(error)"))
        }
    }

    /// Encodes a JSON body.
    static func encode<T: Encodable>(_ value: T) throws(AppStoreAPIError) -> [UInt8] {
        do { return Array(try JSONEncoder().encode(value)) } catch {
            throw AppStoreAPIError(.invalidResponse("cannot encode \(T.self)"))
        }
    }

    /// Percent-escapes an identifier for a path segment.
    static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? segment
    }
}
