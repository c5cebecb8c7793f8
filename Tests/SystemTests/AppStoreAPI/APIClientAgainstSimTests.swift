import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Crypto
import Foundation
import JWSVerification
import NotificationPipeline
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The App Store Server API client against the stand-in: every endpoint, verified answers, Apple's error
/// codes, inline retries for 429 (until Retry-After) and 5xx, sandbox fallback, and the JWT checks the sim makes.
@Suite(.tags(.integration), .notInUnitRuns, .timeLimit(.minutes(3))) struct APIClientAgainstSimTests {
    /// A subscription of the scenario with at least two transactions.
    static func renewedSubscription(_ sim: SimHarness) throws -> SimPurchase {
        try #require(
            sim.simulator.scenario.purchases.values.sorted { $0.originalTransactionId < $1.originalTransactionId }
                .first { $0.productType == .autoRenewableSubscription && $0.transactions.count >= 2 })
    }

    @Test func statusesTransactionInfoAndHistoryAreVerifiedAnswersOfTheSimsState() async throws {
        try await SimHarness.with(customers: 30, seed: 7) { sim in
            let client = try sim.client()
            let purchase = try Self.renewedSubscription(sim)
            let statuses = try await client.subscriptionStatuses(purchase.transactions[1].transactionId!)
            #expect(statuses.environment == .production)
            let status = try #require(statuses.subscriptions.first)
            #expect(status.originalTransactionId == purchase.originalTransactionId)
            #expect(status.status == purchase.status?.rawValue)
            #expect(status.transaction.transactionId == purchase.transactions.last?.transactionId)
            #expect(status.renewalInfo?.originalTransactionId == purchase.originalTransactionId)

            let info = try await client.transactionInfo(purchase.transactions[0].transactionId!)
            #expect(info.transaction.productId == purchase.productId)
            let history = try await client.transactionHistory(purchase.originalTransactionId)
            #expect(history.map(\.transaction.transactionId) == purchase.transactions.map(\.transactionId))
        }
    }

    @Test func notificationHistoryFollowsEveryPageAndOnlyFailuresLeavesTheDelivered() async throws {
        try await SimHarness.with(customers: 12, seed: 3) { sim in
            let plan = sim.simulator.signed
            let half = plan.count / 2
            let dead = "http://127.0.0.1:\(try LocalComponents.freePortBelowEphemeralRange())/notifications"
            let failed = await sim.simulator.deliver(
                Array(plan.prefix(half)), http: sim.http, to: dead, timeout: .milliseconds(300))
            let delivered = await sim.simulator.deliver(Array(plan.dropFirst(half)), http: sim.http, to: sim.sinkURL)
            #expect(failed.failed == half && delivered.succeeded == plan.count - half)

            let client = try sim.client()
            let window = NotificationHistoryRequest(
                startDate: 0, endDate: Int64(Date().timeIntervalSince1970 * 1000) + 1)
            let all = try await client.notificationHistory(window)
            #expect(all.count == plan.count, "\(plan.count) notifications over \((plan.count + 19) / 20) pages")
            #expect(plan.count > 20)
            var onlyFailures = window
            onlyFailures.onlyFailures = true
            let failures = try await client.notificationHistory(onlyFailures)
            #expect(
                Set(failures.compactMap(\.notification.payload.notificationUUID)) == Set(plan.prefix(half).map(\.uuid)))
            #expect(failures.allSatisfy { $0.sendAttempts.last?.sendAttemptResult == "SOCKET_ISSUE" })

            var filtered = window
            filtered.transactionId = "1"
            filtered.notificationType = "DID_RENEW"
            await #expect(throws: AppStoreAPIError.self) { try await client.notificationHistory(filtered) }
            do { _ = try await client.notificationHistory(filtered) } catch let error as AppStoreAPIError {
                #expect(error.errorCode == APIErrorCode.multipleFilters)
            }
        }
    }

    @Test func testNotificationsAreSentAndReported() async throws {
        // The sim posts test notifications to its configured ingest; here, its own sink.
        let key = P256.Signing.PrivateKey()
        var sinkPort = 0
        try await SimHarness.with(
            customers: 1, seed: 1, apiKey: key,
            configure: { configuration in
                sinkPort = configuration.port
                configuration.ingestURL = "http://127.0.0.1:\(configuration.port)/sim/sink"
            }
        ) { sim in
            #expect(sinkPort > 0)
            let client = try sim.client()
            let token = try await client.requestTestNotification()
            var result: VerifiedHistoryNotification?
            for _ in 0..<50 {
                result = try await client.testNotificationStatus(token)
                if result?.sendAttempts.isEmpty == false { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(result?.notification.payload.notificationType == .test)
            #expect(result?.sendAttempts.map(\.sendAttemptResult) == ["SUCCESS"])
            do { _ = try await client.testNotificationStatus("unknown") } catch let error as AppStoreAPIError {
                #expect(error.errorCode == APIErrorCode.testNotificationNotFound && !error.isRetryable)
            }
        }
    }

    @Test func consumptionInformationAndAppAccountTokensAreWritten() async throws {
        try await SimHarness.with(customers: 20, seed: 5) { sim in
            let client = try sim.client()
            let purchase = try Self.renewedSubscription(sim)
            try await client.sendConsumptionInformation(
                purchase.transactions[0].transactionId!,
                ConsumptionRequest(
                    customerConsented: true, deliveryStatus: "DELIVERED", refundPreference: "DECLINE",
                    sampleContentProvided: false))
            let token = UUID()
            try await client.setAppAccountToken(purchase.originalTransactionId, appAccountToken: token)
            let updated = await sim.simulator.store.purchases[purchase.originalTransactionId]
            #expect(updated?.transactions.allSatisfy { $0.appAccountToken == token.uuidString.lowercased() } == true)
            do {
                try await client.setAppAccountToken("999", appAccountToken: token)
                Issue.record("an unknown transaction must fail")
            } catch let error as AppStoreAPIError {
                #expect(
                    error.status == 404 && error.errorCode == APIErrorCode.transactionIdNotFound && !error.isRetryable)
            }
        }
    }

    @Test func rateLimitsAndServerErrorsAreRetriedInlineOnlyWhenThePolicyAllows() async throws {
        try await SimHarness.with(customers: 20, seed: 5) { sim in
            let purchase = try Self.renewedSubscription(sim)
            await sim.setFaults(SimStore.Faults(serverErrors: 2, rateLimited: 2))
            let patient = try sim.client(
                retry: RetryPolicy(maximumAttempts: 6, baseDelay: .milliseconds(20), maximumDelay: .seconds(3)))
            let statuses = try await patient.subscriptionStatuses(purchase.originalTransactionId)
            #expect(statuses.subscriptions.count == 1)
            let stats = await sim.stats
            #expect(
                stats.answersByStatus["500"] == 2 && stats.answersByStatus["429"] == 2
                    && stats.answersByStatus["200"] == 1)

            let impatient = try sim.client(retry: .none)
            await sim.setFaults(SimStore.Faults(serverErrors: 1))
            do { _ = try await impatient.subscriptionStatuses(purchase.originalTransactionId) } catch let error
                as AppStoreAPIError
            {
                #expect(
                    error.status == 500 && error.errorCode == APIErrorCode.generalInternalRetryable && error.isRetryable
                )
            }
            await sim.setFaults(SimStore.Faults(rateLimited: 1))
            // The instant Retry-After names is judged against instants taken around the call, not against the
            // clock when the check runs (a busy machine reaches it seconds later).
            let asked = Date()
            do {
                _ = try await impatient.subscriptionStatuses(purchase.originalTransactionId)
                Issue.record("429 must surface without inline retries")
            } catch let error as AppStoreAPIError {
                let answered = Date()
                #expect(error.status == 429 && error.isRetryable)
                let retryAfter = try #require(error.retryAfter, "Retry-After (UNIX ms) is read")
                #expect(
                    retryAfter >= asked.addingTimeInterval(-0.001) && retryAfter <= answered.addingTimeInterval(2),
                    "Retry-After \(retryAfter) for a call between \(asked) and \(answered)")
            }
        }
    }

    @Test func productionTransactionNotFoundFallsBackToSandboxWhenConfigured() async throws {
        let key = P256.Signing.PrivateKey()
        try await SimHarness.with(customers: 0, seed: 1, apiKey: key) { production in
            try await SimHarness.with(customers: 10, seed: 2, environment: .sandbox, apiKey: key) { sandbox in
                let purchase = try #require(
                    sandbox.simulator.scenario.purchases.values.first { $0.productType == .autoRenewableSubscription })
                var trust = TrustSettings()
                trust.trustedRoots = [production.pki.root, sandbox.pki.root]
                let falling = try production.client(trust: trust, sandboxURL: sandbox.sandboxURL, fallback: true)
                let statuses = try await falling.subscriptionStatuses(purchase.originalTransactionId)
                #expect(
                    statuses.environment == .sandbox
                        && statuses.subscriptions.first?.originalTransactionId == purchase.originalTransactionId)

                let strict = try production.client(trust: trust, sandboxURL: sandbox.sandboxURL, fallback: false)
                do {
                    _ = try await strict.subscriptionStatuses(purchase.originalTransactionId)
                    Issue.record("without fallback production's 4040010 stands")
                } catch let error as AppStoreAPIError {
                    #expect(error.errorCode == APIErrorCode.transactionIdNotFound)
                }
            }
        }
    }

    @Test func theSimChecksTheBearerToken() async throws {
        try await SimHarness.with(customers: 5, seed: 1) { sim in
            let purchase = try #require(
                sim.simulator.scenario.purchases.values.first { $0.productType == .autoRenewableSubscription })
            let url = sim.baseURL.absoluteString + "/inApps/v1/subscriptions/" + purchase.originalTransactionId
            func status(_ token: String?) async throws -> UInt {
                var request = HTTPClientRequest(url: url)
                if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                return try await sim.http.execute(request, timeout: .minutes(2)).status.code
            }
            func factory(
                key: P256.Signing.PrivateKey = sim.apiKey, keyID: String = SimHarness.keyID,
                issuer: String = SimHarness.issuerID,
                bundle: String = sim.app.bundleId
            ) throws -> APITokenFactory {
                try APITokenFactory(
                    credentials: APICredentials(keyID: keyID, issuerID: issuer, bundleID: bundle, privateKey: key))
            }
            #expect(try await status(try factory().token()) == 200)
            #expect(try await status(nil) == 401)
            #expect(
                try await status(try factory(key: P256.Signing.PrivateKey()).token()) == 401, "signed with another key")
            #expect(try await status(try factory(keyID: "OTHER").token()) == 401, "unknown kid")
            #expect(try await status(try factory(issuer: "someone-else").token()) == 401, "wrong iss")
            #expect(try await status(try factory(bundle: "com.other.app").token()) == 401, "wrong bid")
            #expect(try await status(try factory().token(now: Date().addingTimeInterval(-600))) == 401, "expired")
            #expect(await sim.stats.rejectedTokens == 6)

            let stranger = try sim.client(retry: .none, trust: TrustSettings())  // trusts Apple's root only
            do {
                _ = try await stranger.subscriptionStatuses(purchase.originalTransactionId)
                Issue.record("an answer signed by an untrusted root must be refused")
            } catch let error as AppStoreAPIError {
                guard case .verification = error.kind else {
                    Issue.record("expected a verification error, got \(error)")
                    return
                }
                #expect(!error.isRetryable)
            }
        }
    }
}
