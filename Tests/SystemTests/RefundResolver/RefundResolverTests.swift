import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

@testable import RefundResolver

/// refund-resolver against a real broker and the sim: status requests become verified snapshots; 429 with
/// Retry-After and bursts of 5xx lose nothing, cause no busy loop and never exceed the rate the sim allows;
/// a request that cannot succeed ends in the DLQ with its reason.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct RefundResolverTests {
    /// Runs refund-resolver, a process of its binary, against the sim and the broker (test timings, and the
    /// `settings` variables given) while `body` runs, then stops it with SIGTERM as an orchestrator would.
    static func withResolver<T>(
        _ sim: SimHarness, bootstrap: String, settings: [String: String] = [:], _ body: () async throws -> T
    ) async throws -> T {
        let directory = try LocalComponents.temporaryDirectory("refund-resolver")
        let environment = try sim.environment(directory: directory, bootstrap: bootstrap).merging(
            ["LOG_LEVEL": "warning", "KAFKA_SESSION_TIMEOUT_MS": "6000"].merging(settings) { _, new in new }
        ) { _, new in new }
        let fleet = try ServiceFleet(environment: environment, directory: directory, only: ["refund-resolver"])
        return try await fleet.whileRunning(http: sim.http, body)
    }

    @Test func statusRequestsBecomeSnapshotsDespite429And5xxWithinTheRate() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(
                customers: 48, seed: 11, configure: { $0.environments = [.production, .sandbox] }
            ) { sim in
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 2) })
                let subscriptions = sim.simulator.scenario.purchases.values.filter {
                    $0.productType == .autoRenewableSubscription
                }
                .sorted { $0.originalTransactionId < $1.originalTransactionId }
                #expect(subscriptions.count >= 30)
                #expect(
                    subscriptions.contains { $0.environment == .sandbox }, "Sandbox subscriptions are asked of Sandbox")
                // Each request names its subscription's environment and app: the token's bid and the base URL follow it.
                var requests = subscriptions.map {
                    StatusRequest(
                        requestId: "req-\($0.originalTransactionId)", originalTransactionId: $0.originalTransactionId,
                        environment: $0.environment.rawValue, bundleId: sim.app.bundleId, reason: "test",
                        notificationUUID: "n-\($0.originalTransactionId)")
                }
                requests.append(
                    StatusRequest(
                        requestId: "req-unknown", originalTransactionId: "1999", environment: "Production",
                        bundleId: sim.app.bundleId, reason: "test", notificationUUID: "n-unknown"))
                try await kafka.produce(
                    requests.map {
                        ProducerRecord(
                            topic: topics.statusRequests, key: Array($0.originalTransactionId.utf8),
                            value: Array(try! JSONEncoder().encode($0)))
                    })
                // The sim allows 5 status calls a second and fails the first 6 calls with 500; the resolver may make 10.
                await sim.setFaults(SimStore.Faults(serverErrors: 6, statusRatePerSecond: 5))

                let (snapshots, rejected) = try await Self.withResolver(
                    sim, bootstrap: bootstrap,
                    settings: [
                        "RESOLVER_RATE_PER_SECOND": "20", "RESOLVER_REPLICAS": "2", "RESOLVER_RETRY_BASE_MS": "200",
                        "RESOLVER_RETRY_MAX_MS": "2000",
                    ]
                ) {
                    // Read until every request has its snapshot (a count alone could be met by repeats while a request still waits).
                    let wanted = Set(subscriptions.map { "req-\($0.originalTransactionId)" })
                    var snapshots: [ConsumerRecord] = []
                    for _ in 0..<4 {
                        snapshots = try await kafka.readAll(
                            topics.verified, atLeast: subscriptions.count, quiet: .seconds(2), timeout: .seconds(30))
                        let seen = Set(snapshots.compactMap { $0.header(PipelineHeaders.requestID)?.text })
                        if wanted.isSubset(of: seen) { break }
                    }
                    return (
                        snapshots,
                        try await kafka.readAll(topics.rejected, atLeast: 1, quiet: .seconds(1), timeout: .seconds(30))
                    )
                }

                let decoded = try snapshots.map { record -> StatusSnapshot in
                    #expect(record.header(PipelineHeaders.schema)?.text == StatusSnapshot.schema)
                    #expect(
                        record.key
                            == Array(
                                try JSONDecoder().decode(StatusSnapshot.self, from: Data(record.value ?? [])).subject
                                    .utf8))
                    return try JSONDecoder().decode(StatusSnapshot.self, from: Data(record.value ?? []))
                }
                #expect(
                    Set(decoded.map(\.requestId)) == Set(subscriptions.map { "req-\($0.originalTransactionId)" }),
                    "no request lost")
                for snapshot in decoded {
                    let purchase = try #require(sim.simulator.scenario.purchases[snapshot.subject])
                    #expect(snapshot.status == purchase.status?.rawValue)
                    #expect(
                        snapshot.environment == purchase.environment.rawValue,
                        "answered by the subscription's own environment")
                    #expect(snapshot.transaction.transactionId == purchase.transactions.last?.transactionId)
                }
                let dead = try rejected.map {
                    try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? []))
                }
                #expect(dead.map(\.reason) == ["status-request"])
                #expect(dead.first?.original.topic == topics.statusRequests)
                #expect(dead.first?.detail.contains("4040010") == true)

                let stats = await sim.stats
                #expect(stats.maximumStatusCallsPerSecond <= 5, "the sim never answered more than it allows")
                #expect((stats.answersByStatus["500"] ?? 0) == 6)
                #expect((stats.answersByStatus["429"] ?? 0) > 0, "the resolver's 10/s met the sim's 5/s")
                let calls = stats.calls["subscriptions"] ?? 0
                #expect(calls <= 3 * requests.count, "no busy loop: \(calls) calls for \(requests.count) requests")
            }
        }
    }

    /// A long stretch of 500s delays status requests without dead-lettering them (each fails far more than the
    /// old attempt cap, then resolves); only a request still failing `giveUpAfter` past its first failure goes to
    /// the DLQ, with the attempts it took.
    @Test func anOutageOfTheAPIDelaysRequestsAndOnlyGivesUpAfterItsTime() async throws {
        for (faults, giveUp, expectDead) in [
            (45, Duration.seconds(3600), false), (100_000, Duration.milliseconds(1500), true),
        ] {
            try await withLocalBroker { bootstrap in
                try await SimHarness.with(customers: 12, seed: 11) { sim in
                    let topics = PipelineTopics()
                    let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                    try await kafka.createTopics(topics.all.map { ($0, 2) })
                    let subscriptions = sim.simulator.scenario.purchases.values.filter {
                        $0.productType == .autoRenewableSubscription
                    }
                    .sorted { $0.originalTransactionId < $1.originalTransactionId }.prefix(3)
                    let requests = subscriptions.map {
                        StatusRequest(
                            requestId: "req-\($0.originalTransactionId)",
                            originalTransactionId: $0.originalTransactionId, environment: "Production",
                            bundleId: sim.app.bundleId, reason: "test",
                            notificationUUID: "n-\($0.originalTransactionId)")
                    }
                    try await kafka.produce(
                        requests.map {
                            ProducerRecord(
                                topic: topics.statusRequests, key: Array($0.originalTransactionId.utf8),
                                value: Array(try! JSONEncoder().encode($0)))
                        })
                    await sim.setFaults(SimStore.Faults(serverErrors: faults))
                    let outputs = try await Self.withResolver(
                        sim, bootstrap: bootstrap,
                        settings: [
                            "RESOLVER_RETRY_BASE_MS": "100", "RESOLVER_RETRY_MAX_MS": "800",
                            "RESOLVER_GIVE_UP_AFTER_MS": String(Int(giveUp / .milliseconds(1))),
                        ]
                    ) {
                        try await kafka.readAll(
                            expectDead ? topics.rejected : topics.verified, atLeast: requests.count, quiet: .seconds(1),
                            timeout: .seconds(90))
                    }
                    if expectDead {
                        let dead = try outputs.map {
                            try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? []))
                        }
                        #expect(
                            dead.count == requests.count
                                && dead.allSatisfy {
                                    $0.detail.contains("gave up after") && $0.detail.contains("5000001")
                                })
                        #expect(
                            dead.allSatisfy {
                                $0.original.topic == topics.statusRequests
                                    && $0.original.headers["first-failure"] == nil
                            },
                            "a replay starts afresh")
                    } else {
                        #expect(
                            Set(outputs.compactMap { $0.header(PipelineHeaders.requestID)?.text })
                                == Set(requests.map(\.requestId)),
                            "every request resolved after the stretch of errors")
                        let rejected = try await kafka.readAll(
                            topics.rejected, atLeast: 1, quiet: .seconds(1), timeout: .seconds(3))
                        #expect(rejected.isEmpty, "nothing dead-lettered: \(rejected.count)")
                        #expect(
                            (await sim.stats.answersByStatus["500"] ?? 0) == faults,
                            "\(faults) failures, about \(faults / requests.count) per request")
                    }
                }
            }
        }
    }

    /// Consumption answers through the resolver against the sim: sent despite 500s (rescheduled, then accepted,
    /// the body as computed), `late` without any call when the deadline has passed (the 12-hour rule: reported,
    /// never dropped), `late` when the retries cannot beat a deadline seconds away, `failed` with Apple's reason for
    /// an unknown transaction. Every outcome is a record on the verified topic, keyed by the purchase.
    @Test func consumptionAnswersAreSentBeforeTheirDeadlineOrReportedLateOrFailed() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 12, seed: 5) { sim in
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 2) })
                let purchases = sim.simulator.scenario.purchases.values.sorted {
                    $0.originalTransactionId < $1.originalTransactionId
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let body = ConsumptionRequest(
                    customerConsented: true, deliveryStatus: "DELIVERED", refundPreference: "DECLINE",
                    sampleContentProvided: false)
                func answer(_ purchase: SimPurchase?, id: String? = nil, deadline: Int64) -> ConsumptionAnswer {
                    ConsumptionAnswer(
                        transactionId: id ?? purchase!.transactions.last!.transactionId!,
                        originalTransactionId: purchase?.originalTransactionId ?? "1999",
                        environment: "Production", bundleId: sim.app.bundleId,
                        notificationUUID: "n-\(id ?? purchase!.originalTransactionId)",
                        deadline: deadline, apiVersion: "v2", v2: body, v1: nil)
                }
                func request(_ answer: ConsumptionAnswer) throws -> ProducerRecord {
                    ProducerRecord(
                        topic: topics.statusRequests, key: Array(answer.key.utf8),
                        value: Array(try JSONEncoder().encode(answer)))
                }
                let inTime = answer(purchases[0], deadline: now + 12 * 3_600_000)
                let expired = answer(purchases[1], deadline: now - 1)
                let unknown = answer(nil, id: "1999", deadline: now + 12 * 3_600_000)
                // The in-time answer goes alone first, so the sim's two 500s can only fall on it: with the three
                // produced at once, the unknown transaction's call took both once (CI of 2026-11-28, 23:16) and the
                // in-time one went through at its first attempt.
                try await kafka.produce([try request(inTime)])
                await sim.setFaults(SimStore.Faults(serverErrors: 2))
                let outcomes = try await Self.withResolver(
                    sim, bootstrap: bootstrap,
                    settings: [
                        "RESOLVER_RETRY_BASE_MS": "200", "RESOLVER_RETRY_MAX_MS": "1000",
                    ]
                ) {
                    var outcomes: [String: ConsumptionOutcome] = [:]
                    /// Reads the verified topic until it holds `count` outcomes (each read waits up to 20 s).
                    func collect(_ count: Int) async throws {
                        for _ in 0..<5 where outcomes.count < count {
                            for record in try await kafka.readAll(
                                topics.verified, atLeast: count, quiet: .seconds(1), timeout: .seconds(20))
                            {
                                #expect(record.header(PipelineHeaders.schema)?.text == ConsumptionOutcome.schema)
                                let outcome = try JSONDecoder().decode(
                                    ConsumptionOutcome.self, from: Data(record.value ?? []))
                                #expect(record.key == Array(outcome.originalTransactionId.utf8))
                                outcomes[outcome.transactionId] = outcome
                            }
                        }
                    }
                    try await collect(1)
                    try await kafka.produce([try request(expired), try request(unknown)])
                    try await collect(3)
                    // The retries cannot beat a deadline two seconds away while the sim keeps failing.
                    await sim.setFaults(SimStore.Faults(serverErrors: 1_000))
                    let tight = answer(purchases[2], deadline: Int64(Date().timeIntervalSince1970 * 1000) + 2_000)
                    try await kafka.produce([try request(tight)])
                    try await collect(4)
                    return outcomes
                }

                #expect(
                    outcomes[inTime.transactionId]?.status == "sent",
                    "sent after the 500s: \(String(describing: outcomes[inTime.transactionId]))")
                #expect((outcomes[inTime.transactionId]?.attempts ?? 0) >= 2, "it took retries")
                #expect(
                    outcomes[expired.transactionId]?.status == "late" && outcomes[expired.transactionId]?.attempts == 0,
                    "no call after the deadline")
                #expect(outcomes["1999"]?.status == "failed" && outcomes["1999"]?.detail?.contains("4040010") == true)
                let tightId = purchases[2].transactions.last!.transactionId!
                #expect(
                    outcomes[tightId]?.status == "late",
                    "still failing when the window closed: \(String(describing: outcomes[tightId]))")
                let answers = await sim.simulator.store.consumptionAnswers
                #expect(answers.map(\.transactionId) == [inTime.transactionId], "only the in-time answer reached Apple")
                #expect(
                    try JSONDecoder().decode(ConsumptionRequest.self, from: Data(answers.first?.body.utf8 ?? "{}".utf8))
                        == body)
            }
        }
    }

    @Test func theTokenBucketKeepsTheRateAndDefersInsteadOfBlocking() async throws {
        let bucket = RateBudget(ratePerSecond: 20)
        let started = ContinuousClock.now
        for _ in 0..<21 { #expect(await bucket.acquire(maximumWait: .seconds(2)) == .granted) }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(950), "21 tokens at 20/s take a second, took \(elapsed)")
        let pausedUntil = Date().addingTimeInterval(5)
        await bucket.pause(until: pausedUntil)
        guard case .deferred(let until) = await bucket.acquire(maximumWait: .seconds(1)) else {
            Issue.record("a paused bucket defers")
            return
        }
        #expect(abs(until.timeIntervalSince(pausedUntil)) < 0.01, "deferred to the pause's end: \(until)")
    }
}
