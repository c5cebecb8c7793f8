import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import RdKafka
import TestSupport
import Testing

@testable import Ingest

/// With the broker down, ingest answers 503 and never 200; once it is back, everything answered 200 is on
/// the topic exactly as sent. Uses librdkafka's mock cluster to take the broker down and bring it back.
@Suite(.timeLimit(.minutes(2))) struct IngestOutageTests {
    @Test func brokerDownMeans503AndEvery200IsDurable() async throws {
        let cluster = try MockKafkaCluster()
        let fixtures = try SignedFixtures()
        let settings = IngestTestSupport.settings(
            bootstrap: cluster.bootstrapServers, roots: [fixtures.pki.root], produceTimeout: .milliseconds(700))
        try cluster.createTopic(settings.topics.raw, partitions: 2)
        let app = try buildApplication(
            settings: settings, registry: PrometheusCollectorRegistry(), logger: IngestTestSupport.quietLogger)
        // `unavailable`: the posts answered 503 (each signed afresh, so each a body of its own that may still arrive).
        let (accepted, unavailable) = try await app.test(.router) { client -> ([[UInt8]], Int) in
            var accepted: [[UInt8]] = []
            var unavailable = 0
            func post(_ index: Int) async throws -> Int {
                var payload = SignedFixtures.notification()
                payload.notificationUUID = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
                let body = IngestTestSupport.body(try fixtures.signer.sign(payload))
                let status = try await client.execute(uri: "/notifications", method: .post, body: body) {
                    Int($0.status.code)
                }
                if status == 200 { accepted.append(Array(buffer: body)) }
                return status
            }
            // With the broker up, a 503 only says a produce outlasted the test's short produce timeout on a loaded
            // machine (the suites run side by side on two cores); Apple retries it, and so does this.
            var retried = 0
            func postUntilAccepted(_ index: Int) async throws -> Bool {
                for _ in 0..<20 {
                    if try await post(index) == 200 { return true }
                    retried += 1
                }
                return false
            }
            for index in 0..<5 { #expect(try await postUntilAccepted(index), "answered 200 while the broker is up") }
            cluster.setBroker(1, up: false)
            for index in 5..<8 {
                let status = try await post(index)
                #expect(status == 503, "never 200 while the broker is down")
                if status == 503 { unavailable += 1 }
            }
            cluster.setBroker(1, up: true)
            var recovered = false
            for index in 8..<40 where !recovered {
                recovered = try await post(index) == 200
            }
            #expect(recovered, "ingest answers 200 again once the broker is back")
            for index in 40..<45 { #expect(try await postUntilAccepted(index), "answered 200 once the broker is back") }
            return (accepted, unavailable + retried)
        }
        #expect(unavailable >= 3, "the three posts while the broker was down, and any retried")
        let records = try await KafkaTestClient(bootstrapServers: cluster.bootstrapServers)
            .readAll(settings.topics.raw, atLeast: accepted.count, quiet: .seconds(2))
        let onTopic = records.compactMap(\.value)
        for body in accepted {
            #expect(onTopic.contains(body), "a body answered 200 is missing from the topic")
        }
        // Bodies answered 503 may also arrive later (Apple retries them anyway); nothing else may.
        #expect(Set(onTopic.map { $0 }).count <= accepted.count + unavailable + 32)
    }
}
