import Foundation
import Logging
import RdKafka

/// The limit ingest is compared with (`Benchmarks/run-pipeline.sh`): the same request body (the real 18.6 KB
/// Apple notification as ingest receives it) produced to the same broker's raw topic by an idempotent, `acks=all`
/// producer as ingest's, as fast as librdkafka goes, without HTTP or verification, every message waited for, timed
/// from the first acknowledgement. It lingers 2 ms, the producers' default, not ingest's 10 ms: the limit is the
/// fastest it goes, and 1, 2 and 5 ms read alike within their spread, where at 10 ms its window of messages in flight
/// bounds it to about four fifths (docs/performance.md, "Ingest's records in batches, a lone request at once").
/// Prints one line: `<messages acknowledged per second> <messages> <seconds>`. Each `NAME=VALUE` after the topic is a
/// header every message carries (the pipeline benchmark gives a backlog for the chain-verifier the `environment` header
/// ingest sets). `traceparent=1/N` instead gives each message a trace of its own as ingest's would, one in N sampled (a
/// backlog traced as in production).
///
/// Usage: produce-baseline BOOTSTRAP BODY_FILE [SECONDS] [IN_FLIGHT] [TOPIC [NAME=VALUE ...] [traceparent=1/N]]
@main
enum ProduceBaselineMain {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2 else {
            let usage = "usage: produce-baseline BOOTSTRAP BODY_FILE [SECONDS] [IN_FLIGHT] [TOPIC [NAME=VALUE ...]]\n"
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
        let body = Array(try Data(contentsOf: URL(fileURLWithPath: arguments[1])))
        let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10
        let window = arguments.count > 3 ? Int(arguments[3]) ?? 256 : 256
        let topic = arguments.count > 4 ? arguments[4] : "appstore.notifications.raw"
        var headers: [KafkaHeader] = []
        var sampledOneIn: Int?
        for argument in arguments.dropFirst(5) {
            if argument.hasPrefix("traceparent=1/") {
                guard let every = Int(argument.dropFirst("traceparent=1/".count)), every > 0 else {
                    FileHandle.standardError.write(Data("produce-baseline: traceparent=1/N needs N > 0\n".utf8))
                    exit(2)
                }
                sampledOneIn = every
                continue
            }
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                FileHandle.standardError.write(Data("produce-baseline: a header is NAME=VALUE, not \(argument)\n".utf8))
                exit(2)
            }
            headers.append(
                KafkaHeader(name: String(argument[..<equals]), text: String(argument[argument.index(after: equals)...]))
            )
        }
        var logger = Logger(label: "produce-baseline")
        logger.logLevel = .error
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                client: KafkaClientSettings(bootstrapServers: [arguments[0]], clientID: "produce-baseline")),
            logger: logger)
        // One message first, not counted: the clock starts once the producer has its connection, metadata and
        // producer id, as ingest's has before it reports ready (counting that start-up read a 1-s baseline at a
        // tenth of what the broker takes, below ingest's own rate).
        _ = try await producer.enqueue(
            ProducerRecord(topic: topic, key: Array("baseline-warm-up".utf8), value: body, headers: headers)
        ).report
        // A ring of deliveries in flight: at most `window` unacknowledged, each waited for in order.
        var inFlight: [PendingDelivery] = []
        inFlight.reserveCapacity(window)
        var head = 0
        var acknowledged = 0
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int64(seconds * 1000))
        var sent = 0
        let traces = UInt64.random(in: 1...UInt64.max)
        while ContinuousClock.now < end {
            var record = ProducerRecord(
                topic: topic, key: Array("baseline-\(sent % 4096)".utf8), value: body, headers: headers)
            if let sampledOneIn {
                record.headers.append(Self.traceParent(trace: traces, message: sent, sampled: sent % sampledOneIn == 0))
            }
            let delivery = try await producer.enqueue(record)
            sent += 1
            if inFlight.count < window {
                inFlight.append(delivery)
            } else {
                _ = try await inFlight[head].report
                acknowledged += 1
                inFlight[head] = delivery
                head = (head + 1) % window
            }
        }
        for index in 0..<inFlight.count {
            _ = try await inFlight[(head + index) % inFlight.count].report
            acknowledged += 1
        }
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        await producer.shutdown()
        print(String(format: "%.0f %d %.2f", Double(acknowledged) / elapsed, acknowledged, elapsed))
    }

    /// A W3C `traceparent` of a trace of its own for message `message` of this run (`trace` tells the runs apart).
    static func traceParent(trace: UInt64, message: Int, sampled: Bool) -> KafkaHeader {
        let number = UInt64(message + 1)
        let value = String(format: "00-%016llx%016llx-%016llx-%@", trace, number, number, sampled ? "01" : "00")
        return KafkaHeader(name: "traceparent", text: value)
    }
}
