import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO
import RdKafka
import Storage
import Synchronization
import Webhooks

/// The webhook dispatcher's benchmark (`Benchmarks/run-webhooks.sh`), against a running `webhook-dispatcher`: events
/// are produced to `entitlements.changes` as event-publisher produces them and delivered to a receiver in this process
/// that checks every signature.
///
/// 1. At RATE events/s offered for SECONDS (and then at twice RATE): deliveries per second against events published
///    per second in the same window, and event → delivery p50/p99 (from the produce call to the receiver's arrival).
/// 2. One endpoint dead while BACKLOG events queue for it: the dispatcher's resident memory as the backlog grows, and a
///    live endpoint's latency meanwhile.
///
/// Usage: webhook-benchmark BOOTSTRAP DATABASE_URL DISPATCHER_PID RATE SECONDS BACKLOG
@main
enum WebhookBenchmarkMain {
    static let bundleId = "com.example.bench"

    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 6, let pid = Int32(arguments[2]), let rate = Double(arguments[3]),
            let seconds = Double(arguments[4]), let backlog = Int(arguments[5])
        else {
            FileHandle.standardError.write(
                Data("usage: webhook-benchmark BOOTSTRAP DATABASE_URL DISPATCHER_PID RATE SECONDS BACKLOG\n".utf8))
            exit(2)
        }
        let logger = {
            var logger = Logger(label: "webhook-benchmark")
            logger.logLevel = .error
            return logger
        }()
        let receiver = Receiver()
        let port = try await receiver.start()
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                client: KafkaClientSettings(bootstrapServers: [arguments[0]], clientID: "webhook-benchmark")),
            logger: logger)
        let settings = try DatabaseSettings(url: arguments[1])
        try await DatabaseClient.with(settings, logger: logger) { client in
            let administration = WebhookAdministration(client: client, logger: logger)
            let live = try await administration.register(
                NewWebhookEndpoint(
                    environment: "Production", bundleId: Self.bundleId, url: "http://127.0.0.1:\(port)/live",
                    eventTypes: ["bench.live"], ratePerSecond: 1000, concurrency: 16),
                secret: receiver.secret.description)
            // The dispatcher reads the endpoints every WEBHOOK_ENDPOINT_REFRESH_MS: a warm-up event proves it serves it.
            var source = EventSource(producer: producer)
            try await source.produce(count: 1, rate: 1000, type: "bench.live")
            guard await receiver.waitFor(total: 1, timeout: .seconds(60)) else {
                throw BenchmarkError("the dispatcher delivered nothing in 60 s")
            }

            print("webhook-dispatcher: events offered on entitlements.changes → deliveries to a local receiver")
            print(
                "| offered | events/s published | deliveries/s | ratio (goal ≥ 0.9) | p50 | p99 (goal < 250 ms at 500/s) |"
            )
            print("|---|---|---|---|---|---|")
            for offered in [rate, 2 * rate] {
                receiver.reset()
                let started = ContinuousClock.now
                let produced = try await source.produce(
                    count: Int(offered * seconds), rate: offered, type: "bench.live")
                let publishedSeconds = (ContinuousClock.now - started) / .seconds(1)
                let complete = await receiver.waitFor(total: produced, timeout: .seconds(120))
                let window = receiver.window(from: started)
                let latencies = receiver.latencies().sorted()
                let published = Double(produced) / publishedSeconds
                let delivered = Double(receiver.count) / max(window, publishedSeconds)
                print(
                    String(
                        format: "| %.0f/s | %.0f | %.0f | %.2f | %@ | %@ |%@", offered, published, delivered,
                        delivered / published, Self.milliseconds(latencies, 0.5), Self.milliseconds(latencies, 0.99),
                        complete ? "" : " (not all delivered in 120 s)"))
            }
            guard receiver.unverified == 0 else {
                throw BenchmarkError("\(receiver.unverified) deliveries not verified")
            }

            // A dead endpoint taking every event; BACKLOG bulk events queue for it while the live endpoint keeps
            // getting its own.
            _ = try await administration.register(
                NewWebhookEndpoint(
                    environment: "Production", bundleId: Self.bundleId, url: "http://127.0.0.1:1/dead",
                    eventTypes: [], ratePerSecond: 1000, concurrency: 16),
                secret: receiver.secret.description)
            try await Task.sleep(for: .seconds(6))
            receiver.reset()
            print("")
            print(
                "one endpoint dead while \(backlog) events queue for it: the dispatcher's memory, a live endpoint meanwhile"
            )
            print("| pending for the dead endpoint | dispatcher RSS |")
            print("|---|---|")
            print("| 0 | \(Self.residentMegabytes(pid)) MB |")
            let flood = Task {
                var bulk = EventSource(producer: producer)
                try await bulk.produce(count: backlog, rate: 20_000, type: "bench.bulk")
            }
            let trickle = Task {
                var live = EventSource(producer: producer)
                return try await live.produce(count: Int(50 * seconds * 2), rate: 50, type: "bench.live")
            }
            var marks = [backlog / 4, backlog / 2, 3 * backlog / 4, backlog]
            let deadline = ContinuousClock.now + .seconds(300)
            while !marks.isEmpty && ContinuousClock.now < deadline {
                let pending = try await Self.pending(client, excluding: live.id, logger: logger)
                if pending >= marks[0] {
                    print("| \(pending) | \(Self.residentMegabytes(pid)) MB |")
                    marks.removeAll { $0 <= pending }
                }
                try await Task.sleep(for: .milliseconds(250))
            }
            try await flood.value
            let trickled = try await trickle.value
            _ = await receiver.waitFor(total: trickled, timeout: .seconds(60))
            try await Task.sleep(for: .seconds(5))
            let pending = try await Self.pending(client, excluding: live.id, logger: logger)
            print("| \(pending) (5 s later) | \(Self.residentMegabytes(pid)) MB |")
            let latencies = receiver.latencies().sorted()
            print(
                "live endpoint meanwhile: \(receiver.count) of \(trickled) delivered, p50 "
                    + "\(Self.milliseconds(latencies, 0.5)), p99 \(Self.milliseconds(latencies, 0.99))")
        }
        await producer.shutdown()
    }

    /// Deliveries pending for endpoints other than `live`.
    static func pending(_ client: PostgresClient, excluding live: String, logger: Logger) async throws -> Int {
        var count = 0
        for try await n in try await client.query(
            "SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' AND endpoint_id <> \(live)",
            logger: logger
        ).decode(Int64.self) { count = Int(n) }
        return count
    }

    /// A process's resident memory in MB (VmRSS).
    static func residentMegabytes(_ pid: Int32) -> String {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return "?" }
        return String(format: "%.1f", kilobytes / 1024)
    }

    /// A quantile of sorted latencies in ms.
    static func milliseconds(_ sorted: [Double], _ quantile: Double) -> String {
        guard !sorted.isEmpty else { return "–" }
        return String(format: "%.1f ms", sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))] * 1000)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Events

/// Produces events as event-publisher does: keyed by customer, the environment and app as headers, each subject's
/// numbered from 1.
struct EventSource {
    let producer: KafkaProducer
    var sequences: [Int: Int64] = [:]
    var next = 0
    static let subjects = 2000

    init(producer: KafkaProducer) {
        self.producer = producer
    }

    /// Produces `count` events at `rate` a second, open loop, waiting for every acknowledgement; returns `count`.
    @discardableResult
    mutating func produce(count: Int, rate: Double, type: String) async throws -> Int {
        let start = ContinuousClock.now
        var pending: [PendingDelivery] = []
        for index in 0..<count {
            let due = start + .nanoseconds(Int64(Double(index) / rate * 1e9))
            if due > .now { try await Task.sleep(until: due, clock: .continuous) }
            let subject = "\(type)-\(self.next % Self.subjects)"
            self.next += 1
            let sequence = (self.sequences[self.next % Self.subjects] ?? 0) + 1
            self.sequences[self.next % Self.subjects] = sequence
            let body =
                #"{"eventId":"\#(UUID().uuidString.lowercased())","eventType":"\#(type)","subject":"\#(subject)","#
                + #""sequence":\#(sequence),"producedAtNs":\#(DispatchTime.now().uptimeNanoseconds)}"#
            pending.append(
                try await self.producer.enqueue(
                    ProducerRecord(
                        topic: "entitlements.changes", key: Array("Production/bench/\(subject)".utf8),
                        value: Array(body.utf8),
                        headers: [
                            KafkaHeader(name: "event-id", text: "bench"),
                            KafkaHeader(name: "environment", text: "Production"),
                            KafkaHeader(name: "bundle-id", text: WebhookBenchmarkMain.bundleId),
                        ])))
            if pending.count >= 1000 {
                for delivery in pending { _ = try await delivery.report }
                pending.removeAll(keepingCapacity: true)
            }
        }
        for delivery in pending { _ = try await delivery.report }
        return count
    }
}

// MARK: - The receiver

/// Receives deliveries, checks each signature, and keeps each event's latency (first arrival only).
final class Receiver: Sendable {
    let secret = WebhookSecret.generate()
    private struct State {
        var seen = Set<String>()
        var latencies: [Double] = []
        var last = ContinuousClock.now
        var unverified = 0
    }
    private let state = Mutex(State())

    /// Starts the receiver on a free loopback port; returns the port.
    func start() async throws -> Int {
        let router = Router()
        router.post("/live") { request, _ -> HTTPResponse.Status in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            self.receive(headers: request.headers, body: Array(body.readableBytesView))
            return .noContent
        }
        let port = Int.random(in: 20_000..<30_000)
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .error
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        Task { try await app.runService() }
        try await Task.sleep(for: .milliseconds(500))
        return port
    }

    /// Checks one delivery and keeps its latency.
    func receive(headers: HTTPFields, body: [UInt8]) {
        let arrived = DispatchTime.now().uptimeNanoseconds
        guard let id = headers[HTTPField.Name("webhook-id")!],
            let stamp = headers[HTTPField.Name("webhook-timestamp")!],
            let signature = headers[HTTPField.Name("webhook-signature")!], let seconds = Double(stamp)
        else { return self.state.withLock { $0.unverified += 1 } }
        let expected = StandardWebhookSignature.headers(
            id: id, timestamp: Date(timeIntervalSince1970: seconds), body: body, secrets: [self.secret]
        ).first { $0.name == "webhook-signature" }?.value
        let produced =
            (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["producedAtNs"] as? UInt64
        self.state.withLock { state in
            guard expected.map({ signature.split(separator: " ").contains(Substring($0)) }) == true else {
                state.unverified += 1
                return
            }
            guard state.seen.insert(id).inserted else { return }
            if let produced { state.latencies.append(Double(arrived &- produced) / 1e9) }
            state.last = .now
        }
    }

    func reset() {
        self.state.withLock { state in
            state.seen.removeAll()
            state.latencies.removeAll()
        }
    }

    var count: Int { self.state.withLock { $0.seen.count } }
    var unverified: Int { self.state.withLock { $0.unverified } }
    func latencies() -> [Double] { self.state.withLock { $0.latencies } }

    /// Seconds from `start` to the last first arrival.
    func window(from start: ContinuousClock.Instant) -> Double {
        (self.state.withLock { $0.last } - start) / .seconds(1)
    }

    /// Whether `total` distinct deliveries arrived within `timeout`.
    func waitFor(total: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while self.count < total {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
