import Foundation
import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The order hold of ``WebhookBacklog/claim(endpointId:limit:lease:predecessor:)`` in a real PostgreSQL: a delivery
/// whose predecessor is not queued waits until its order wait has passed *and* the intake was seen caught up at a
/// moment at least that late; one whose predecessor is queued, or that is first of its subject, never waits; and an
/// endpoint that filters types (no wait) takes it at once.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct WebhookPredecessorWaitTests {
    let logger: Logger = {
        var logger = Logger(label: "webhook-predecessor-wait-test")
        logger.logLevel = .error
        return logger
    }()

    /// An event of subject `subject` numbered `sequence`.
    func event(_ subject: String, _ sequence: Int64) -> WebhookEvent {
        WebhookEvent(
            environment: "Production", bundleId: "com.example.order", eventId: "\(subject)-\(sequence)",
            eventType: "entitlement.changed", subject: subject, sequence: sequence, payload: "{}", publishedAt: Date())
    }

    /// The event ids a claim with `wait` leases now (released again at once, so the next claim sees them too).
    func claimable(_ backlog: WebhookBacklog, _ wait: PredecessorWait?) async throws -> [String] {
        let claimed = try await backlog.claim(endpointId: "we_order", limit: 10, lease: 60, predecessor: wait)
        try await backlog.release(claimed.map(\.id))
        return claimed.map(\.eventId).sorted()
    }

    @Test func aDeliveryMissingItsPredecessorWaitsForTheIntakeAsWellAsTheClock() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            try await client.query(
                """
                INSERT INTO webhook_endpoints (id, environment, bundle_id, url, rate_per_second, concurrency)
                VALUES ('we_order', 'Production', 'com.example.order', 'https://hooks.example.com/x', 10, 4)
                """, logger: logger)
            let backlog = WebhookBacklog(client: client, logger: logger)
            // s-2 misses s-1; t-1 is first of its subject; u-2 follows a queued u-1 (which goes first).
            try await backlog.enqueue([
                self.event("s", 2), self.event("t", 1), self.event("u", 1), self.event("u", 2),
            ])
            // Queued 30 s ago, as by a replica killed since.
            try await client.query(
                "UPDATE webhook_deliveries SET created_at = now() - interval '30 seconds'", logger: logger)

            let always = ["t-1", "u-1"]
            let neverCaughtUp = try await self.claimable(backlog, PredecessorWait(seconds: 5, intakeCaughtUpAgo: nil))
            #expect(neverCaughtUp == always, "the intake not seen caught up since start: s-2 waits however old it is")
            let caughtUpEarly = try await self.claimable(backlog, PredecessorWait(seconds: 5, intakeCaughtUpAgo: 28))
            #expect(
                caughtUpEarly == always,
                "caught up 28 s ago, only 2 s after s-2 was queued: its predecessor may still have been unread")
            let caughtUpLater = try await self.claimable(backlog, PredecessorWait(seconds: 5, intakeCaughtUpAgo: 20))
            #expect(
                caughtUpLater == ["s-2", "t-1", "u-1"],
                "caught up 10 s after s-2 was queued: its predecessor would be queued, so it goes")
            let waitNotPassed = try await self.claimable(backlog, PredecessorWait(seconds: 40, intakeCaughtUpAgo: 0))
            #expect(waitNotPassed == always, "caught up now, but its order wait has not passed")
            let filtering = try await self.claimable(backlog, nil)
            #expect(filtering == ["s-2", "t-1", "u-1"], "an endpoint filtering types does not wait")

            // Once s-1 is queued, s-1 goes first and s-2 after it, whatever the intake.
            try await backlog.enqueue([self.event("s", 1)])
            let withPredecessor = try await self.claimable(
                backlog, PredecessorWait(seconds: 5, intakeCaughtUpAgo: nil))
            #expect(withPredecessor == ["s-1", "t-1", "u-1"])
        }
    }
}
