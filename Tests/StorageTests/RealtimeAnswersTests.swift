import Foundation
import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The real-time answers retention-messaging's replicas share, in a real PostgreSQL: a request is reserved once (by
/// the statement that reads its subscription) whichever replica asks first, its answer is what every later ask gets, each environment and app has its own
/// identifiers, concurrent asks reserve it exactly once, and old requests are pruned.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct RealtimeAnswersTests {
    let logger: Logger = {
        var logger = Logger(label: "realtime-answers-test")
        logger.logLevel = .error
        return logger
    }()

    /// Run as retention-messaging's own role (`iapctl migrate --roles`), so its grants are what is tested.
    @Test func aRequestIsReservedOnceAndItsAnswerIsWhatRepeatsGet() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { owner, url in
            try await DatabaseRoles.apply(
                passwords: [.retentionMessaging: "retention-password-1"], client: owner, logger: logger)
            let roleURL = url.replacingOccurrences(
                of: "//postgres@", with: "//\(DatabaseRoles.Service.retentionMessaging.role):retention-password-1@")
            try await DatabaseClient.with(try DatabaseSettings(url: roleURL), logger: logger) { client in
                try await Self.reserveOnceAndShareTheAnswer(client: client, logger: logger)
            }
        }
    }

    /// The first test's body, on a client of the role.
    static func reserveOnceAndShareTheAnswer(client: PostgresClient, logger: Logger) async throws {
        do {
            let answers = RealtimeAnswers(client: client, logger: logger)
            let other = RealtimeAnswers(client: client, logger: logger)  // another replica's view of the same table
            let facts = RetentionFacts(client: client, logger: logger)
            let otherFacts = RetentionFacts(client: client, logger: logger)
            let key = RealtimeAnswers.Key(environment: "Production", bundleId: "com.example", requestIdentifier: "r-1")
            let now = Date()
            #expect(try await Self.reserve(facts, key, seenAt: now) == .new)
            #expect(try await Self.reserve(otherFacts, key, seenAt: now) == .inFlight, "reserved, not answered yet")
            try await answers.record([(key, #"{"message":"first"}"#)], seenAt: now)
            #expect(
                try await Self.reserve(otherFacts, key, seenAt: now) == .answered(Data(#"{"message":"first"}"#.utf8)))

            var sandbox = key
            sandbox.environment = "Sandbox"
            var otherApp = key
            otherApp.bundleId = "com.example.other"
            #expect(try await Self.reserve(otherFacts, sandbox, seenAt: now) == .new, "Sandbox has its own identifiers")
            #expect(
                try await Self.reserve(otherFacts, otherApp, seenAt: now) == .new, "each app has its own identifiers")
            try await other.record([(sandbox, "sandbox's"), (otherApp, "the other app's")], seenAt: now)
            #expect(try await Self.reserve(facts, sandbox, seenAt: now) == .answered(Data("sandbox's".utf8)))
            #expect(try await Self.reserve(facts, otherApp, seenAt: now) == .answered(Data("the other app's".utf8)))
            #expect(
                try await Self.reserve(facts, key, seenAt: now) == .answered(Data(#"{"message":"first"}"#.utf8)),
                "a batch writes only its own requests' answers")
            #expect(try await answers.prune(before: now.addingTimeInterval(60)) == 3, "the role prunes")
        }
    }

    @Test func concurrentAsksReserveExactlyOnce() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let facts = RetentionFacts(client: client, logger: logger)
            let key = RealtimeAnswers.Key(environment: "Production", bundleId: "com.example", requestIdentifier: "r-2")
            let verdicts = try await withThrowingTaskGroup(of: RealtimeAnswers.Reservation.self) { group in
                for _ in 0..<16 { group.addTask { try await Self.reserve(facts, key, seenAt: Date()) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(verdicts.filter { $0 == .new }.count == 1, "\(verdicts)")
            #expect(verdicts.filter { $0 == .inFlight }.count == 15, "\(verdicts)")
        }
    }

    @Test func requestsFirstSeenBeforeTheCutoffArePruned() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let answers = RealtimeAnswers(client: client, logger: logger)
            let facts = RetentionFacts(client: client, logger: logger)
            let now = Date()
            let old = RealtimeAnswers.Key(environment: "Production", bundleId: "com.example", requestIdentifier: "old")
            let young = RealtimeAnswers.Key(
                environment: "Production", bundleId: "com.example", requestIdentifier: "young")
            #expect(try await Self.reserve(facts, old, seenAt: now.addingTimeInterval(-400)) == .new)
            #expect(try await Self.reserve(facts, young, seenAt: now.addingTimeInterval(-10)) == .new)
            try await answers.record([(young, "kept")], seenAt: now)
            #expect(try await answers.prune(before: now.addingTimeInterval(-360)) == 1)
            #expect(try await Self.reserve(facts, old, seenAt: now) == .new, "pruned: the identifier is free again")
            #expect(try await Self.reserve(facts, young, seenAt: now) == .answered(Data("kept".utf8)))
        }
    }

    /// Reserves `key` as retention-messaging does: by the statement that reads the subscription (none here).
    static func reserve(_ facts: RetentionFacts, _ key: RealtimeAnswers.Key, seenAt: Date) async throws
        -> RealtimeAnswers.Reservation
    {
        let (subject, reservation) = try await facts.subject(
            originalTransactionId: "2000000000000001", reserving: key, seenAt: seenAt)
        #expect(!subject.known)
        return reservation
    }
}
