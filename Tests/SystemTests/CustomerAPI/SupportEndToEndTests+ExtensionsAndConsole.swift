import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import ServiceRuntime
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The support scenario's later checks (SupportEndToEndTests): subscription extensions through the admin routes, and
/// a dead letter shown and replayed, and the console searched in a real browser.
extension SupportEndToEndTests {
    /// One subscription extended through the admin route (RENEWAL_EXTENDED then moves its stored expiry), a bad
    /// request refused with Apple's code, and a mass extension polled to the end, its SUMMARY published as an event.
    static func checkExtensions(_ sim: SimHarness, api: Admin, database: DatabaseSettings) async throws {
        let logger = Self.logger
        let active = await sim.simulator.store.activeSubscriptions(
            of: ScenarioGenerator.subscriptionProduct, in: .production)
        let chosen = try #require(active.first)
        let before = try #require(
            await sim.simulator.store.purchase(for: chosen, in: .production)?.transactions.last?.expiresDate?
                .millisecondsSince1970)
        let (status, answer) = try await api.post(
            "/subscriptions/\(chosen)/extend", ["extendByDays": 10, "extendReasonCode": 1])
        #expect(status == 200 && answer["success"] as? Bool == true)
        let effective = answer["effectiveDate"] as? Int64 ?? (answer["effectiveDate"] as? Int).map(Int64.init) ?? 0
        #expect(effective == before + 10 * 86_400_000)
        let stored = try await pollUntil(within: .seconds(30), longestPause: .milliseconds(500)) {
            try await DatabaseClient.with(database, logger: logger) { client in
                var until: Int64?
                for try await value in try await client.query(
                    "SELECT valid_until FROM entitlements WHERE original_transaction_id = \(chosen) AND environment = 'Production'",
                    logger: logger
                )
                .decode(Int64?.self) { until = value }
                return until == effective ? until : nil
            }
        }
        #expect(stored == effective, "RENEWAL_EXTENDED moved the stored expiry")
        let (badStatus, bad) = try await api.post(
            "/subscriptions/\(chosen)/extend", ["extendByDays": 0, "extendReasonCode": 1])
        #expect(badStatus == 400 && (bad["message"] as? String ?? "").contains("4000009"))

        let (massStatus, mass) = try await api.post(
            "/extensions",
            [
                "productId": ScenarioGenerator.subscriptionProduct, "extendByDays": 3, "extendReasonCode": 3,
                "requestIdentifier": "outage-2026-11-23",
            ])
        #expect(massStatus == 202 && mass["requestIdentifier"] as? String == "outage-2026-11-23")
        // The sim extends each subscriber and delivers its RENEWAL_EXTENDED before it says complete, so on a loaded
        // machine this takes as long as those deliveries do: the wait gives up only when the count stops moving for
        // 30 s (a stall), not after a fixed time.
        var done: [String: Any]?
        var lastCount = -1
        var lastChange = ContinuousClock.now
        while ContinuousClock.now - lastChange < .seconds(30) {
            let (_, progress) = try await api.get(
                "/extensions/\(ScenarioGenerator.subscriptionProduct)/outage-2026-11-23")
            if progress["complete"] as? Bool == true {
                done = progress
                break
            }
            let count = progress["succeededCount"] as? Int ?? 0
            if count != lastCount {
                lastCount = count
                lastChange = .now
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        let succeeded = (done?["succeededCount"] as? Int) ?? -1
        #expect(succeeded == active.count, "every active subscriber extended: \(succeeded) of \(active.count)")
        let event = try await pollUntil(within: .seconds(30), longestPause: .milliseconds(500)) {
            try await DatabaseClient.with(database, logger: logger) { client in
                var payload: String?
                for try await text in try await client.query(
                    """
                    SELECT payload::text FROM outbox WHERE payload->>'eventType' = 'subscription.mass-extension-completed'
                      AND payload->'massExtension'->>'requestIdentifier' = 'outage-2026-11-23'
                    """, logger: logger
                ).decode(String.self) { payload = text }
                return payload
            }
        }
        let counts =
            (try? JSONSerialization.jsonObject(with: Data((event ?? "{}").utf8)) as? [String: Any])?["massExtension"]
            as? [String: Any]
        #expect(
            counts?["succeededCount"] as? Int == active.count && counts?["failedCount"] as? Int == 0,
            "the SUMMARY became an event with its counts: \(event ?? "none")")
    }

    // MARK: DLQ and the console

    /// A record the chain-verifier rejects shows under its customer and is replayed; then the console, in headless
    /// chromium, searched by app user id and by order id, shows the customer's entitlements, timeline and requests.
    static func checkDeadLetterAndConsole(
        _ sim: SimHarness, api: Admin, database: DatabaseSettings, bootstrap: String, topics: PipelineTopics,
        customer purchase: SimPurchase
    ) async throws {
        let logger = Self.logger
        try await KafkaTestClient(bootstrapServers: [bootstrap]).produce([
            ProducerRecord(
                topic: topics.raw, key: Array(purchase.originalTransactionId.utf8),
                value: Array(#"{"signedPayload":"not.a.jws"}"#.utf8),
                headers: [
                    KafkaHeader(name: PipelineHeaders.environment, text: "Production"),
                    KafkaHeader(name: PipelineHeaders.bundleId, text: sim.app.bundleId),
                ])
        ])
        let position = try await pollUntil(within: .seconds(30), longestPause: .milliseconds(500)) {
            try await DatabaseClient.with(database, logger: logger) { client in
                var position: String?
                for try await text in try await client.query(
                    """
                    SELECT topic || '/' || partition || '/' || "offset" FROM dead_letters WHERE subject = \(purchase.originalTransactionId)
                    """, logger: logger
                ).decode(String.self) { position = text }
                return position
            }
        }
        let dlq = try #require(position, "the rejected record is recorded under its subject")

        let (viewStatus, view) = try await api.get("/support/\(purchase.customer)")
        #expect(viewStatus == 200 && view["customer"] as? String == purchase.customer)
        #expect((view["deadLetters"] as? [[String: Any]])?.first?["position"] as? String == dlq)
        #expect(
            (view["timeline"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "CONSUMPTION_REQUEST" })
        let (replayStatus, _) = try await api.post("/dead-letters/replay", ["position": dlq])
        #expect(replayStatus == 202)
        let (missingStatus, _) = try await api.post(
            "/dead-letters/replay", ["position": "appstore.notifications.rejected/0/999999"])
        #expect(missingStatus == 404)

        // A rejected record of another app without the app header, under the same subject: its payload names its app,
        // so the console does not list it for this app and its replay is refused.
        let foreign = #"{"signedPayload":""# + (try SignedFixtures().signedNotification()) + #""}"#
        try await KafkaTestClient(bootstrapServers: [bootstrap]).produce([
            ProducerRecord(
                topic: topics.raw, key: Array(purchase.originalTransactionId.utf8), value: Array(foreign.utf8))
        ])
        let foreignPosition = try await pollUntil(within: .seconds(30), longestPause: .milliseconds(500)) {
            try await DatabaseClient.with(database, logger: logger) { client in
                var found: (String, String?)?
                for try await (position, app) in try await client.query(
                    """
                    SELECT topic || '/' || partition || '/' || "offset", bundle_id FROM dead_letters
                    WHERE subject = \(purchase.originalTransactionId) AND record->'original'->>'value' = \(foreign)
                    """, logger: logger
                ).decode((String, String?).self) { found = (position, app) }
                return found
            }
        }
        let (otherPosition, otherApp) = try #require(foreignPosition, "the other app's record is recorded")
        #expect(otherApp == SignedFixtures.bundleId, "its app read from its payload")
        let (_, viewAfter) = try await api.get("/support/\(purchase.customer)")
        let listed = (viewAfter["deadLetters"] as? [[String: Any]] ?? []).compactMap { $0["position"] as? String }
        // (The replayed record was rejected again: it is listed too, as this app's.)
        #expect(
            listed.contains(dlq) && !listed.contains(otherPosition),
            "the console lists this app's DLQ records only: \(listed)")
        let (foreignReplay, foreignBody) = try await api.post("/dead-letters/replay", ["position": otherPosition])
        #expect(foreignReplay == 403 && foreignBody["error"] as? String == "wrong-app", "\(foreignBody)")

        // The console in a real browser: the key and the search travel in the fragment, the page's script fetches.
        let fragment = "app=\(sim.app.bundleId)&key=\(api.key)&q=\(purchase.customer)"
        let dom = try await HeadlessBrowser.dom(of: api.base + "/console#" + fragment)
        #expect(dom.contains("data-loaded=\"true\""), "the page loaded the customer: \(dom.suffix(600))")
        #expect(
            dom.contains("id=\"entitlements\"") && dom.contains(purchase.productId), "entitlements with the product")
        #expect(
            dom.contains("id=\"timeline\"") && dom.contains("CONSUMPTION_REQUEST"),
            "the timeline shows the consumption request")
        #expect(
            dom.contains("<th>Duplicates</th>") && dom.contains("<th>Outcome</th>"),
            "each entry's outcome and duplicate deliveries")
        #expect(
            dom.contains("id=\"consumption\"") && dom.contains("<b>sent</b>"), "the request's answer is shown as sent")
        #expect(dom.contains("id=\"dead-letters\"") && dom.contains("replayed"), "the replayed DLQ record")
        let orderId = SimOrders.orderId(for: purchase.transactions.last!.transactionId!)
        let byOrder = try await HeadlessBrowser.dom(
            of: api.base + "/console#app=\(sim.app.bundleId)&key=\(api.key)&q=\(orderId)")
        #expect(byOrder.contains("data-customer=\"\(purchase.customer)\""), "an order id finds the same customer")
        let wrongKey = try await HeadlessBrowser.dom(
            of: api.base + "/console#app=\(sim.app.bundleId)&key=ck_0000000000000000_x&q=\(purchase.customer)")
        #expect(
            wrongKey.contains("data-loaded=\"error\"") && wrongKey.contains("401"), "a bad key is told, nothing shown")
        // Driven by Playwright: the key leaves the address bar once read, the page runs under its CSP without a violation.
        let (browserStatus, browserOutput) = try await LocalComponents.python(
            "Tests/BrowserChecks/console_address_bar.py", [api.base + "/console#" + fragment])
        try #require(browserStatus == 0, "\(browserOutput)")
        let browser = try #require(try JSONSerialization.jsonObject(with: Data(browserOutput.utf8)) as? [String: Any])
        let address = browser["address"] as? String ?? ""
        #expect(
            browser["loaded"] as? String == "true" && !address.contains("key=") && !address.contains(api.key)
                && address.contains("q="),
            "the key is gone from the address bar, the search stays: \(address)")
        #expect((browser["violations"] as? [String])?.isEmpty == true, "no CSP violation: \(browser)")
        let headers = browser["headers"] as? [String: String] ?? [:]
        #expect(
            headers["content-security-policy"]?.contains("script-src 'self'") == true
                && headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true
                && headers["content-security-policy"]?.contains("unsafe-inline") == false, "\(headers)")
        #expect(
            headers["x-content-type-options"] == "nosniff" && headers["referrer-policy"] == "no-referrer", "\(headers)")
        let shot = FileManager.default.temporaryDirectory.appendingPathComponent("support-console.png")
        try await HeadlessBrowser.screenshot(of: api.base + "/console#" + fragment, to: shot)
        print("support: console screenshot \(shot.path) for customer \(purchase.customer)")
    }

    // MARK: Helpers
}
