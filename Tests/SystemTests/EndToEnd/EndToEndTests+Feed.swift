@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The event feed (`GET /v1/apps/{bundleId}/events`), read as a team without Kafka reads it, against the running
/// customer-api after the whole scenario: it holds exactly the app's events the topics hold, each once, every subject's
/// in `sequence` order; a read from a cursor kept across a restart of customer-api gets exactly what came after it;
/// and a long poll at the end answers when a new event arrives.
extension EndToEndTests {
    /// One page of the feed as the test reads it.
    struct FeedPage {
        var events: [[String: Any]]
        var next: String
    }

    static func checkFeed(_ sim: SimHarness, fleet: ServiceFleet, key: String, bootstrap: String) async throws {
        let app = sim.app.bundleId
        // What the topics hold for the app in Production (a killed publisher may repeat an event: ids are compared).
        let expected = Set(try await WebhookEndToEndTests.publishedEvents(app: app, bootstrap: bootstrap).keys)
        #expect(expected.count > 50, "the scenario published events for the app: \(expected.count)")

        // The whole feed, 200 at a time.
        var pages: [FeedPage] = []
        var cursor: String?
        repeat {
            let page = try await Self.readFeed(sim, fleet: fleet, key: key, after: cursor, limit: 200)
            pages.append(page)
            cursor = page.next
        } while pages.last!.events.count == 200
        let events = pages.flatMap(\.events)
        let ids = events.compactMap { $0["eventId"] as? String }
        #expect(ids.count == Set(ids).count, "each event once: \(ids.count) read, \(Set(ids).count) distinct")
        #expect(
            Set(ids) == expected,
            "feed / topics: \(Set(ids).subtracting(expected).count) extra, \(expected.subtracting(ids).count) missing")
        var lastNumber: [String: Int] = [:]
        var outOfOrder = 0
        for event in events {
            guard let subject = event["subject"] as? String, let number = event["sequence"] as? Int else {
                outOfOrder += 1
                continue
            }
            if number <= lastNumber[subject, default: 0] { outOfOrder += 1 }
            lastNumber[subject] = number
        }
        #expect(outOfOrder == 0, "every subject's events in sequence order, each numbered: \(outOfOrder) not")

        // A consumer keeps the cursor after its first page; customer-api restarts; it reads on from there.
        let kept = try #require(pages.first?.next)
        await fleet.kill("customer-api")
        try await fleet.start("customer-api", http: sim.http)
        var resumed: [String] = []
        var after = kept
        while true {
            let page = try await Self.readFeed(sim, fleet: fleet, key: key, after: after, limit: 200)
            resumed += page.events.compactMap { $0["eventId"] as? String }
            after = page.next
            if page.events.count < 200 { break }
        }
        #expect(resumed == Array(ids.dropFirst(pages[0].events.count)), "from the kept cursor: exactly what came after")

        // A long poll at the end of the feed answers when the next event arrives: Apple's TEST notification.
        let end = after
        let poll = Task {
            try await Self.readFeed(sim, fleet: fleet, key: key, after: end, limit: 200, wait: 30).events.map {
                $0["eventType"] as? String ?? "?"
            }
        }
        _ = try await sim.client().requestTestNotification()
        let polled = try await poll.value
        #expect(polled.contains("test.received"), "the long poll got the TEST notification's event: \(polled)")
        print(
            "event feed: \(ids.count) events in \(pages.count) pages (the topics: \(expected.count)), "
                + "\(resumed.count) read on from a cursor kept across a customer-api SIGKILL, long poll answered \(polled)"
        )
    }

    /// GET of the feed with the app's key.
    static func readFeed(
        _ sim: SimHarness, fleet: ServiceFleet, key: String, after: String?, limit: Int, wait: Int = 0
    ) async throws -> FeedPage {
        var url =
            "\(await fleet.customerAPIURL)/v1/apps/\(sim.app.bundleId)/events?environment=Production&limit=\(limit)"
        if let after { url += "&after=\(after)" }
        if wait > 0 { url += "&wait=\(wait)" }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        let response = try await sim.http.execute(request, timeout: .seconds(Int64(wait) + 30))
        let body = try await response.body.collect(upTo: 1 << 26)
        #expect(response.status == .ok, "\(String(buffer: body).prefix(300))")
        let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return FeedPage(
            events: json?["events"] as? [[String: Any]] ?? [], next: try #require(json?["next"] as? String))
    }
}
