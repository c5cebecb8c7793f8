import AppStoreAPI
import AppStoreModels
import AsyncHTTPClient
import Foundation
import Histogram
import NIOCore
import NIOHTTP1

/// Posts signed notifications to ingest as the App Store does (`{"signedPayload": …}`, success = HTTP
/// 200–206), at an offered rate and concurrency, recording every attempt in the store (notification
/// history) and each answer's latency in an HDR histogram; prints a progress line every second.
@_spi(Testing) public struct SimDelivery: Sendable {
    /// One post to make.
    @_spi(Testing) public struct Item: Sendable {
        @_spi(Testing) public var uuid: String
        @_spi(Testing) public var signedPayload: String
    }

    /// What a pass did.
    @_spi(Testing) public struct Report: Sendable, CustomStringConvertible {
        var sent = 0
        @_spi(Testing) public var succeeded = 0
        @_spi(Testing) public var failed = 0
        var seconds = 0.0
        var latencyMicros = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)

        @_spi(Testing) public var description: String {
            let rate = self.seconds > 0 ? Double(self.sent) / self.seconds : 0
            func ms(_ p: Double) -> String {
                String(format: "%.2f", Double(self.latencyMicros.valueAtPercentile(p)) / 1000)
            }
            return
                "posted \(self.sent) (\(self.succeeded) accepted, \(self.failed) failed) in \(String(format: "%.1f", self.seconds)) s = "
                + "\(String(format: "%.0f", rate))/s; latency ms p50 \(ms(50)) p90 \(ms(90)) p99 \(ms(99)) max \(ms(100))"
        }
    }

    let http: HTTPClient
    let store: SimStore
    /// Where posts go: one URL as Apple's, or several playing a cluster's load balancer in front of ingest
    /// replicas (post `n` goes to URL `n mod count`).
    var ingestURLs: [String]
    /// Posts per second offered (nil: as fast as the concurrency allows).
    var rate: Double?
    var concurrency: Int
    var timeout: Duration = .seconds(10)
    /// Where the progress line goes (nil: nowhere).
    var progress: (@Sendable (String) -> Void)?
    /// Posts to plain `http://` URLs go through this lighter client when it is set.
    var poster: PlainHTTPPoster?

    /// Posts every item once, `concurrency` at a time, paced at `rate`.
    @_spi(Testing) public func deliver(_ items: [Item]) async -> Report {
        let started = ContinuousClock.now
        var report = Report()
        let reporter = ProgressTicker(total: items.count, output: self.progress)
        await withTaskGroup(of: (Bool, UInt64).self) { group in
            var running = 0
            for (index, item) in items.enumerated() {
                if let rate = self.rate {
                    let due = started + .milliseconds(Int64(Double(index) / rate * 1000))
                    if due > ContinuousClock.now { try? await Task.sleep(until: due, clock: .continuous) }
                }
                if running >= max(1, self.concurrency), let (ok, micros) = await group.next() {
                    report.record(ok: ok, micros: micros)
                    reporter.tick(report)
                    running -= 1
                }
                let url = self.ingestURLs[index % self.ingestURLs.count]
                group.addTask { await self.post(item, to: url) }
                running += 1
            }
            for await (ok, micros) in group {
                report.record(ok: ok, micros: micros)
                reporter.tick(report)
            }
        }
        report.seconds = (ContinuousClock.now - started).timeInterval
        reporter.finish(report)
        return report
    }

    /// One post; returns whether ingest accepted it and how long the answer took.
    func post(_ item: Item, to url: String) async -> (Bool, UInt64) {
        var body = ByteBuffer()
        body.reserveCapacity(item.signedPayload.utf8.count + 20)
        body.writeString(#"{"signedPayload":""#)
        body.writeString(item.signedPayload)
        body.writeString(#""}"#)
        let started = ContinuousClock.now
        let result: String
        if let poster = self.poster, url.hasPrefix("http://") {
            switch await poster.post(body, to: url, timeout: .nanoseconds(Int64(self.timeout.timeInterval * 1e9))) {
            case .answered(let status):
                result = (200...206).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
            case .timedOut: result = "TIMED_OUT"
            case .socketIssue: result = "SOCKET_ISSUE"
            }
        } else {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
            do {
                let response = try await self.http.execute(
                    request, timeout: .milliseconds(Int64(self.timeout.timeInterval * 1000)))
                _ = try await response.body.collect(upTo: 1 << 20)
                result = (200...206).contains(response.status.code) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                result = "TIMED_OUT"
            } catch {
                result = "SOCKET_ISSUE"
            }
        }
        let micros = UInt64(max(0, (ContinuousClock.now - started).timeInterval * 1_000_000))
        await self.store.recordAttempt(uuid: item.uuid, result: result)
        return (result == "SUCCESS", micros)
    }
}

extension SimDelivery.Report {
    /// Adds one post's outcome.
    mutating func record(ok: Bool, micros: UInt64) {
        self.sent += 1
        if ok { self.succeeded += 1 } else { self.failed += 1 }
        _ = self.latencyMicros.record(micros)
    }
}

/// Prints `sent/total, accepted, failed, rate` at most once a second.
final class ProgressTicker: @unchecked Sendable {
    private let total: Int
    private let output: (@Sendable (String) -> Void)?
    private let started = Date()
    private var last = Date.distantPast
    private let lock = NSLock()

    init(total: Int, output: (@Sendable (String) -> Void)?) {
        self.total = total
        self.output = output
    }

    func tick(_ report: SimDelivery.Report) {
        guard let output else { return }
        let now = Date()
        self.lock.lock()
        defer { self.lock.unlock() }
        guard now.timeIntervalSince(self.last) >= 1 else { return }
        self.last = now
        let rate = Double(report.sent) / max(now.timeIntervalSince(self.started), 0.001)
        output(
            "  delivering \(report.sent)/\(self.total): \(report.succeeded) accepted, \(report.failed) failed, \(Int(rate))/s"
        )
    }

    func finish(_ report: SimDelivery.Report) {
        self.output?("  delivered \(report)")
    }
}
