@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import PipelineRecords
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

// MARK: - The app side's checks: traces, metrics and the customer view through GET

extension EndToEndTests {
    /// One notification is one trace: ingest's request span, the chain-verifier's, the updater's and the publisher's,
    /// each the parent of the next, under one trace id; and the published event carries that trace to consumers.
    static func checkTrace(_ collector: TraceCollector, bootstrap: String) async throws {
        let chain = ["ingest", "chain-verifier", "entitlement-updater", "event-publisher"]
        var found: [TraceCollector.Span]?
        try await Polling.until(looks: 40, every: .milliseconds(500)) {
            let byTrace = Dictionary(grouping: try collector.spans(), by: \.traceId)
            found = byTrace.values.first { spans in Set(spans.map(\.service)).isSuperset(of: chain) }
            return found != nil
        }
        guard let trace = found else {
            Issue.record("no trace reached all of \(chain): \(try collector.spans().count) spans collected")
            return
        }
        let span = { (service: String) in trace.first { $0.service == service } }
        let ingest = span("ingest"), verify = span("chain-verifier"), apply = span("entitlement-updater")
        let publish = span("event-publisher")
        #expect(ingest?.parentSpanId == "", "ingest's request span is the root")
        #expect(verify?.name == "verify notification" && verify?.parentSpanId == ingest?.spanId)
        #expect(apply?.name == "apply notification" && apply?.parentSpanId == verify?.spanId)
        #expect(publish?.name == "publish event" && publish?.parentSpanId == apply?.spanId)
        let traceId = trace[0].traceId
        // The notification's events went to whichever of the three streams its outcome called for: read them until
        // one carries the trace (or 300 polls bring nothing), whatever the broker's pace.
        let topics = PipelineTopics()
        var configuration = KafkaConsumerConfiguration(
            client: KafkaClientSettings(bootstrapServers: [bootstrap]), groupID: "trace-check-\(UUID().uuidString)",
            topics: [topics.entitlementChanges, topics.entitlementFamily, topics.entitlementRevocations],
            sessionTimeout: .seconds(6))
        configuration.heartbeatInterval = .milliseconds(500)
        let consumer = try KafkaConsumer(configuration: configuration, logger: Self.logger)
        var carried = false
        var emptyPolls = 0
        while !carried && emptyPolls < 300 {
            let records = try await consumer.poll(maxMessages: 1000, timeout: .milliseconds(200))
            if records.isEmpty { emptyPolls += 1 }
            carried = records.contains {
                $0.headers.contains { $0.name == "traceparent" && $0.text?.contains(traceId) == true }
            }
        }
        await consumer.close()
        #expect(
            carried,
            "the published event carries the trace id \(traceId)")

        // A refund's status request continues the trace too: the publisher relays it, refund-resolver resolves it,
        // and the updater applies the snapshot in the same trace.
        var resolution: TraceCollector.Span?
        try await Polling.until(looks: 40, every: .milliseconds(500)) {
            let spans = try collector.spans()
            let byId = Dictionary(spans.map { ($0.spanId, $0) }, uniquingKeysWith: { first, _ in first })
            let appliedUnder = Set(spans.filter { $0.service == "entitlement-updater" }.map(\.parentSpanId))
            resolution = spans.first {
                $0.service == "refund-resolver" && $0.name == "resolve status request"
                    && byId[$0.parentSpanId]?.service == "event-publisher" && appliedUnder.contains($0.spanId)
            }
            return resolution != nil
        }
        #expect(resolution != nil, "no status request resolved in its notification's trace")
    }

    /// The running binaries serve what the alerts and the dashboard query: look-up latency per route, the libraries'
    /// swift-metrics (bootstrapped to the same registry by each main), consumer lag per group, gaps and freshness.
    static func checkMetrics(_ sim: SimHarness, fleet: ServiceFleet) async throws {
        let customerAPI = try await fleet.metrics("customer-api", http: sim.http)
        #expect(
            customerAPI.contains(
                #"customer_api_request_duration_seconds_count{route="/v1/apps/{bundleId}/customers/{customer}",method="GET"}"#
            ))
        #expect(customerAPI.contains("hb_requests{"), "Hummingbird's swift-metrics counter on /metrics")
        let updater = try await fleet.metrics("entitlement-updater", http: sim.http)
        #expect(
            updater.contains(
                #"kafka_consumer_lag_messages{group="entitlement-updater",topic="appstore.notifications.verified""#))
        let freshness = updater.split(separator: "\n").first {
            $0.hasPrefix("entitlement_updater_newest_applied_signed_date_seconds ")
        }
        #expect((freshness?.split(separator: " ").last).flatMap { Double($0) }.map { $0 > 1_500_000_000 } == true)
        let verifier = try await fleet.metrics("chain-verifier", http: sim.http)
        #expect(
            verifier.contains(#"kafka_consumer_lag_messages{group="chain-verifier",topic="appstore.notifications.raw""#)
        )
        // Every gap either consumer met in its partitions filled when read again: none was consumed past.
        #expect(
            updater.contains(#"kafka_consumer_offset_gaps_total{group="entitlement-updater",outcome="accepted"} 0"#))
        #expect(verifier.contains(#"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="accepted"} 0"#))
    }

    /// Every expected entitlement of the app's users, and of the customers whose renewal notification was
    /// lost, read through customer-api's GET as of now, equals the sim's; the sweep asked for statuses.
    static func checkThroughGET(_ sim: SimHarness, fleet: ServiceFleet, key: String, databaseURL: String) async throws {
        let scenario = sim.simulator.scenario
        let lostSubjects = Set(scenario.lost.compactMap { $0.transaction?.originalTransactionId })
        let checked = scenario.expected.filter {
            $0.customer.hasPrefix("app-user-") || lostSubjects.contains($0.originalTransactionId)
        }
        var wrong: [String] = []
        var renewalPrices = 0
        let base = await fleet.customerAPIURL
        for expected in checked {
            // The sim names its app users `app-user-…`; every other customer is an appAccountToken or an originalTransactionId.
            let kind: CustomerIDKind =
                expected.customer.hasPrefix("app-user-")
                ? .appUserId
                : UUID(uuidString: expected.customer) != nil ? .appAccountToken : .originalTransactionId
            var request = HTTPClientRequest(
                url:
                    "\(base)/v1/apps/\(sim.app.bundleId)/customers/\(expected.customer)?environment=\(expected.environment)&idType=\(kind.rawValue)"
            )
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            let response = try await sim.http.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 22)
            let view = try? JSONDecoder().decode(CustomerView.self, from: Data(body.readableBytesView))
            if view?.subscriptions.contains(where: { $0.renewalPrice == "4.99" && $0.currency == "USD" }) == true {
                renewalPrices += 1
            }
            let entitlement = view?.entitlements.first { $0.productId == expected.productId }
            if entitlement?.active != expected.active || (entitlement?.revokedAt != nil) != expected.revoked {
                wrong.append(
                    "\(expected.environment) \(expected.customer) \(expected.productId): GET \(entitlement.map { "\($0.active)" } ?? "none"), sim \(expected.active)"
                )
            }
        }
        #expect(checked.count > 50)
        #expect(renewalPrices > 0, "the view's subscriptions carry the next renewal's price")
        #expect(
            wrong.count == 0, "GET disagrees with the sim for \(wrong.count) of \(checked.count): \(wrong.prefix(5))")
        let logger = Self.logger
        let swept = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) { client in
            var count = 0
            for try await value in try await client.query(
                "SELECT count(*) FROM status_requests WHERE reason = \(RenewalSweep.reason)", logger: logger
            ).decode(Int.self) { count = value }
            return count
        }
        #expect(swept > 0, "the renewal-time sweep asked for statuses")
        print(
            "end-to-end app side: \(scenario.appPosts.count) purchases posted by the app, \(scenario.lost.count) notifications lost, "
                + "\(swept) sweep status requests, \(checked.count - wrong.count)/\(checked.count) entitlements right through GET"
        )
    }
}
