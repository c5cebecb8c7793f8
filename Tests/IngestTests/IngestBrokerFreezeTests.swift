import AppStoreModels
import AppStoreSigning
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ingest binary while its broker is frozen mid-delivery (SIGSTOP, then SIGCONT: the broker keeps its
/// data): it answers 503, never 200, while it cannot store; `/ready` says not ready; both recover by
/// themselves once the broker is back, and every notification answered 200 is on the raw topic.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestBrokerFreezeTests {
    /// The HTTP status of a request (0: no answer within 10 s).
    static func status(_ url: String, body: Data? = nil) async -> Int {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        if let body {
            request.httpMethod = "POST"
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return ((try? await URLSession.shared.data(for: request))?.1 as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Polls `/ready` until it answers `expected`, looking `seconds × 5` times 200 ms apart (``Polling``: a count of
    /// looks, not a deadline); how long that took, or nil.
    static func waitForReady(_ base: String, _ expected: Int, within seconds: Double) async throws -> Double? {
        let start = ContinuousClock.now
        let answered = try await Polling.until(looks: Int(seconds * 5), every: .milliseconds(200)) {
            await Self.status(base + "/ready") == expected
        }
        return answered ? Double((ContinuousClock.now - start).components.seconds) : nil
    }

    @Test func aFrozenBrokerMeans503AndNotReadyUntilItIsBack() async throws {
        try await withFreezableLocalBroker { bootstrap, brokerPID in
            let topics = PipelineTopics()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([(topics.raw, 2)])
            let fixtures = try SignedFixtures()
            let directory = try LocalComponents.temporaryDirectory("freeze")
            let (environment, base) = try IngestTestSupport.binaryEnvironment(
                bootstrap: bootstrap, fixtures: fixtures, directory: directory,
                extra: ["INGEST_PRODUCE_TIMEOUT_MS": "1500"])
            let ingest = try ServiceProcess.start(
                "ingest", environment: environment, log: directory.appendingPathComponent("ingest.log"))
            defer { ingest.terminate() }
            #expect(try await Self.waitForReady(base, 200, within: 15) != nil, "ready at start")
            var accepted: [Data] = []
            func post(_ index: Int) async throws -> Int {
                var payload = SignedFixtures.notification()
                payload.notificationUUID = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
                let body = Data(IngestTestSupport.body(try fixtures.signer.sign(payload)).readableBytesView)
                let status = await Self.status(base + "/notifications", body: body)
                if status == 200 { accepted.append(body) }
                return status
            }
            #expect(try await post(0) == 200)

            try #require(try await freezeProcess(brokerPID), "the broker is stopped before the next post")
            var frozenStatuses: [Int] = []
            for index in 1...4 { frozenStatuses.append(try await post(index)) }
            let notReadyAfter = try await Self.waitForReady(base, 503, within: 10)
            #expect(
                frozenStatuses.allSatisfy { $0 == 503 }, "never 200 while the broker cannot store: \(frozenStatuses)")
            #expect(notReadyAfter != nil, "/ready says not ready while the broker is frozen")
            kill(brokerPID, SIGCONT)

            // Either librdkafka's idempotent producer recovers by itself (a broker with KIP-360 bumps its epoch),
            // or the broker fences it (Tansu): then the process stops with that error, as an orchestrator would see
            // it, and a fresh one (restarted here as the orchestrator would) takes over. Never alive and broken.
            var current = ingest
            var restarts = 0
            var after: [Int] = []
            // A count of posts, not a deadline: a starved test process still posts as often. A process on its way
            // out (after the fence) answers nothing for a moment; it must then exit, never stay alive and silent.
            var index = 5
            for _ in 0..<120 where after.suffix(3) != [200, 200, 200] {
                if !current.isRunning {
                    restarts += 1
                    current = try ServiceProcess.start(
                        "ingest", environment: environment,
                        log: directory.appendingPathComponent("ingest-\(restarts).log"))
                    _ = try await Self.waitForReady(base, 200, within: 15)
                }
                after.append(try await post(index))
                index += 1
                if after.last != 200 { try await Task.sleep(for: .milliseconds(500)) }
            }
            defer { current.terminate() }
            // 0: no answer while the process was gone (Apple retries that like a 503).
            #expect(
                after.suffix(3) == [200, 200, 200] && after.allSatisfy { [0, 200, 503].contains($0) },
                "accepting again after \(restarts) restart(s): \(after)")
            #expect(restarts <= 1)
            if restarts == 1 {
                let log = try String(contentsOf: directory.appendingPathComponent("ingest.log"), encoding: .utf8)
                #expect(
                    ingest.terminationReason == .exit && ingest.terminationStatus == 1
                        && log.contains("ingest stopped:") && !log.contains("Program crashed"),
                    "the fenced process stops with status 1 and says why; it does not crash")
            }
            let stored = try await kafka.readAll(
                topics.raw, atLeast: accepted.count, quiet: .seconds(2), timeout: .seconds(60))
            let storedBodies = Set(stored.compactMap { $0.value.map { Data($0) } })
            #expect(Set(accepted).isSubset(of: storedBodies), "every 200 is on the raw topic")
        }
    }
}
