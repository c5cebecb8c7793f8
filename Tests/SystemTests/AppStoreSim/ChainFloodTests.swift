import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import JWSVerification
import NIOCore
import PipelineRecords
import RdKafka
import Synchronization
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The attack of trust round two on the `ingest` binary from a fresh start: behind a proxy (`HTTP_TRUSTED_PROXIES`),
/// one source floods it with 1,000 forged chains a second (each a valid-looking notification of the configured app
/// under a chain of its own making, and claiming Apple's address at the left of `X-Forwarded-For`) while Apple
/// delivers its genuine notifications. The forger empties only its own new-chain budget: every one of Apple's is 200
/// and stored, with the intermediates warmed at start and without (Apple's first chain then takes one token of
/// Apple's own budget).
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct ChainFloodTests {
    /// Forged notifications: the sim's genuine payloads signed under `count` chains of the forger's own PKIs.
    static func forgeries(_ sim: SimHarness, count: Int) throws -> [String] {
        let payloads = try sim.simulator.signed.prefix(count).map {
            try UnverifiedJWS.decodePayload(of: $0.signedPayload, as: ResponseBodyV2DecodedPayload.self)
        }
        return try payloads.map { try AppStoreSigner(pki: try TestPKI()).sign($0) }
    }

    /// POSTs `signedPayload` to ingest as coming through the proxy for `forwardedFor`; the status (0: no answer).
    static func post(_ http: HTTPClient, _ url: String, _ signedPayload: String, forwardedFor: String) async -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Forwarded-For", value: forwardedFor)
        request.body = .bytes(ByteBuffer(string: #"{"signedPayload":""# + signedPayload + #""}"#))
        guard let response = try? await http.execute(request, timeout: .seconds(30)) else { return 0 }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }

    @Test(arguments: [true, false])
    func applesNotificationsAreAcceptedWhileOneSourceFloodsForgedChains(warm: Bool) async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 30, seed: 17) { sim in
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                let topics = PipelineTopics()
                try await kafka.createTopics([(topics.raw, 2)])
                let directory = try LocalComponents.temporaryDirectory("chain-flood")
                defer { try? FileManager.default.removeItem(at: directory) }
                var environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                environment.merge([
                    "APPSTORE_ENVIRONMENTS": "Production,Sandbox", "LOG_LEVEL": "warning",
                    "HTTP_TRUSTED_PROXIES": "127.0.0.1", "INGEST_NEW_CHAINS_PER_SECOND": "20",
                ]) { _, new in new }
                if !warm { environment["APPSTORE_INTERMEDIATE_CERTIFICATES"] = "" }
                let genuine = sim.simulator.signed.filter { !$0.uuid.isEmpty }.prefix(60).map(\.signedPayload)
                try #require(genuine.count == 60)
                let forged = try Self.forgeries(sim, count: 40)
                let fleet = try ServiceFleet(environment: environment, directory: directory, only: ["ingest"])
                try await fleet.whileRunning(http: sim.http) {
                    let url = await fleet.ingestURL
                    let flood = FloodState()
                    let start = ContinuousClock.now
                    let forgedCopy = forged
                    var appleStatuses: [Int: Int] = [:]
                    try await withThrowingTaskGroup(of: [Int: Int].self) { group in
                        // The flood: 16 senders, each paced to 1/16 of 1,000 requests a second, until Apple is done.
                        for sender in 0..<16 {
                            group.addTask {
                                var sent = 0
                                while flood.running.load(ordering: .relaxed) {
                                    let due = start + .microseconds(sent * 16_000 + sender * 1_000)
                                    if due > .now { try? await Task.sleep(until: due) }
                                    let status = await Self.post(
                                        sim.http, url, forgedCopy[(sent * 16 + sender) % forgedCopy.count],
                                        forwardedFor: "17.58.0.1, 198.51.100.7")
                                    flood.statuses.withLock { $0[status, default: 0] += 1 }
                                    sent += 1
                                }
                                return [:]
                            }
                        }
                        // Apple: its notifications one after another while the flood runs (it started a second before).
                        group.addTask {
                            try await Task.sleep(for: .seconds(1))
                            var statuses: [Int: Int] = [:]
                            for signed in genuine {
                                let status = await Self.post(sim.http, url, signed, forwardedFor: "17.58.0.1")
                                statuses[status, default: 0] += 1
                                try await Task.sleep(for: .milliseconds(50))
                            }
                            flood.running.store(false, ordering: .relaxed)
                            return statuses
                        }
                        for try await statuses in group where !statuses.isEmpty { appleStatuses = statuses }
                    }
                    let seconds = Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000
                    let floods = flood.statuses.withLock { $0 }
                    let sent = floods.values.reduce(0, +)
                    let accepted = appleStatuses[200, default: 0]
                    print(
                        "chain flood (warm start: \(warm)): Apple's notifications answered 200: \(accepted)/\(genuine.count) "
                            + "(\(accepted * 100 / genuine.count) %); the flood sent \(sent) forged chains at "
                            + "\(Int(Double(sent) / seconds))/s from one source: \(floods.sorted { $0.key < $1.key })")
                    #expect(
                        appleStatuses == [200: genuine.count], "every genuine notification accepted: \(appleStatuses)")
                    #expect(floods[200, default: 0] == 0, "no forgery accepted: \(floods)")
                    #expect(floods[503, default: 0] > 0, "the forger ran its own budget dry: \(floods)")
                    let stored = try await kafka.readAll(
                        topics.raw, atLeast: genuine.count, quiet: .seconds(1), timeout: .seconds(60))
                    #expect(stored.count == genuine.count, "Apple's notifications, and nothing else, stored")
                }
            }
        }
    }
}

/// What the flood's senders share: whether to go on, and the statuses they got.
final class FloodState: Sendable {
    let running = Atomic<Bool>(true)
    let statuses = Mutex<[Int: Int]>([:])
}
