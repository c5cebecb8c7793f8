import AppStoreModels
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The renewal-time sweep in a real PostgreSQL: an active subscription whose end passed the margin gets one
/// status request (row and outbox record, in the status-request path's format); what is not a lapsed active
/// subscription gets none; once the status snapshot settles it, nothing more is asked.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct RenewalSweepTests {
    let logger: Logger = {
        var logger = Logger(label: "sweep-test")
        logger.logLevel = .error
        return logger
    }()

    @Test func aLapsedActiveSubscriptionIsAskedOnceAndSettledByItsSnapshot() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, url in
            let repository = EntitlementRepository(client: client, logger: logger)
            let topics = PipelineTopics()
            // ended in 2023, still active
            let lapsed = VerifiedRecords.step("DID_RENEW", original: "sub-lapsed", day: 30, expiresDay: 60)
            let records = [
                lapsed,
                VerifiedRecords.step(
                    "ONE_TIME_CHARGE", original: "life-1", day: 0, expiresDay: nil, product: .nonConsumable),
                VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-ended", day: 0, expiresDay: 30),
                VerifiedRecords.step("EXPIRED", "VOLUNTARY", original: "sub-ended", day: 30, expiresDay: 30),
            ]
            for record in records { _ = try await repository.apply(record, receivedAt: nil) }
            let sweep = RenewalSweep(client: client, logger: logger, topics: topics)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(
                try await sweep.sweep(endedBefore: VerifiedRecords.start, batch: 10) == 0,
                "nothing ended before the margin")
            #expect(try await sweep.sweep(endedBefore: now, batch: 10) == 1, "only the lapsed active subscription")
            #expect(try await sweep.sweep(endedBefore: now, batch: 10) == 0, "asked once")

            var requests: [StatusRequest] = []
            for try await (key, payload) in try await client.query(
                "SELECT key, payload::text FROM outbox WHERE topic = \(topics.statusRequests)", logger: logger
            ).decode((String, String).self) {
                let request = try JSONDecoder().decode(StatusRequest.self, from: Data(payload.utf8))
                #expect(key == request.key)
                requests.append(request)
            }
            let request = try #require(requests.first)
            #expect(
                requests.count == 1 && request.originalTransactionId == "sub-lapsed" && request.environment == "Sandbox"
                    && request.bundleId == "com.example.app" && request.reason == RenewalSweep.reason)

            // refund-resolver's answer: the subscription expired.
            let snapshot = StatusSnapshot(
                requestId: request.requestId, notificationUUID: request.notificationUUID, subject: "sub-lapsed",
                environment: "Sandbox",
                status: Status.expired.rawValue, transaction: lapsed.notification.transaction!, renewalInfo: nil,
                signedTransactionInfo: "s",
                signedRenewalInfo: nil)
            var answered = snapshot
            answered.transaction.signedDate = Timestamp(millisecondsSince1970: now)
            #expect(try await repository.apply(answered, receivedAt: nil) == .recorded(.applied))
            var active: Bool?
            for try await value in try await client.query(
                "SELECT active FROM entitlements WHERE original_transaction_id = 'sub-lapsed'", logger: logger
            ).decode(Bool.self) { active = value }
            #expect(active == false)
            #expect(try await sweep.sweep(endedBefore: now, batch: 10) == 0)
        }
    }
}
