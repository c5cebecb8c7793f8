import AppStoreAPI
import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Storage
import TestSupport

/// Two figures of issue 28, each against a baseline measured in the same run (`Benchmarks/run-retention.sh`):
/// 1. retention-messaging's latency at a fixed offered rate of Apple-format signed real-time requests (every answer a
///    promotional offer signed on the spot), next to a bare Hummingbird endpoint taking the same bodies;
/// 2. offer signatures per second (V2 JWS, introductory eligibility, V1) against raw P-256 signing of a message of the
///    same size on the same key.
///
/// Requests are open loop: request i is due at start + i / RATE and its latency counts from then.
///
/// Usage: `retention-benchmark DATABASE_URL PKI_DIR RETENTION_URL BASELINE_URL [RATE] [SECONDS] [CUSTOMERS] [WARMUP]`
/// (WARMUP: uncounted seconds before the measured ones, default 1), or
/// `retention-benchmark --signing` for the signing figures alone.
@main
enum RetentionBenchmarkMain {
    static let appAppleId: Int64 = 1_234_567_890

    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.dropFirst().first == "--signing" {
            Self.signingFigures()
            return
        }
        guard arguments.count >= 5 else {
            print(
                "usage: retention-benchmark DATABASE_URL PKI_DIR RETENTION_URL BASELINE_URL [RATE] [SECONDS] [CUSTOMERS] [WARMUP]"
            )
            exit(2)
        }
        let rate = arguments.count > 5 ? Double(arguments[5]) ?? 1000 : 1000
        let seconds = arguments.count > 6 ? Double(arguments[6]) ?? 10 : 10
        let customers = arguments.count > 7 ? Int(arguments[7]) ?? 2000 : 2000
        let warmUp = arguments.count > 8 ? Double(arguments[8]) ?? 1 : 1
        var logger = Logger(label: "retention-benchmark")
        logger.logLevel = .error
        let quiet = logger
        try await DatabaseClient.with(try DatabaseSettings(url: arguments[1]), logger: quiet) { client in
            try await storeLifeCycles(customers, client: client, logger: quiet)
        }
        // Apple's requests, signed ahead with the sim's PKI (the endpoint trusts its root): one for every request the
        // warm-up and the measurement send, each with its own identifier (a repeated one is answered from the replay
        // window without work, which is not what is measured), the customers in turn.
        let signer = AppStoreSigner(pki: try TestPKI.loadOrCreate(in: URL(fileURLWithPath: arguments[2])))
        let bodies = try (0..<(Int(rate * warmUp) + Int(rate * seconds))).map { index -> String in
            var request = DecodedRealtimeRequestBody()
            request.originalTransactionId = "s-\(index % customers)"
            request.appAppleId = Self.appAppleId
            request.productId = "pro"
            request.userLocale = "en-US"
            request.requestIdentifier = UUID().uuidString.lowercased()
            request.signedDate = Timestamp(Date())
            request.environment = .sandbox
            return #"{"signedPayload":""# + (try signer.sign(request)) + #""}"#
        }
        // CPU-only figures first, while nothing else runs.
        Self.signingFigures()
        let (baselineWarmUp, baseline) = try await Self.offer(
            url: arguments[4], bodies: bodies, rate: rate, warmUp: warmUp, seconds: seconds)
        _ = try baseline.checkedAsBaseline("bare Hummingbird POST", offered: Int(rate * seconds))
        let (retentionWarmUp, retention) = try await Self.offer(
            url: arguments[3], bodies: bodies, rate: rate, warmUp: warmUp, seconds: seconds)
        print(
            "Retention benchmark: \(Int(rate)) signed real-time requests/s offered for \(Int(seconds)) s, \(customers) "
                + "subscriptions, every answer a promotional offer signed on the spot (2 cores, PostgreSQL and broker co-located)"
        )
        print(
            "target                                        answered/s   errors    p50 ms    p90 ms    p99 ms    max ms")
        print(baseline.line("bare Hummingbird POST (baseline)"))
        print(retention.line("retention-messaging (verify, read, sign)"))
        print(
            String(
                format: "retention-messaging p99 %.2f ms (goal < 5 ms); %.1fx the baseline's",
                retention.milliseconds(99), retention.milliseconds(99) / max(baseline.milliseconds(99), 0.001)))
        // A queue puts a few in every second, a stall many in one (the tail's cause differs).
        print(
            "requests over 5 ms by second: baseline \(baseline.slowSeconds); "
                + "retention-messaging \(retention.slowSeconds)")
        print(
            "the same in the uncounted warm-up (\(String(format: "%g", warmUp)) s): baseline \(baselineWarmUp.slowSeconds); "
                + "retention-messaging \(retentionWarmUp.slowSeconds)")
    }

    // MARK: Signing

    /// Offer signatures per second against raw P-256 signatures of a message of the same length, same key: three rounds,
    /// each measuring all four in turn (so a noisy moment hits them alike), the best of each kept.
    static func signingFigures() {
        let key = OfferSigningKey(keyID: "OFFERKEY01", issuerID: "issuer", privateKey: .init())
        let count = 10_000
        let sample =
            (try? OfferJWS.promotionalOffer(
                bundleId: "com.example.app", productId: "pro", offerIdentifier: "COMEBACK_50",
                transactionId: "2000000001", key: key)) ?? ""
        let message = Data(repeating: 0x61, count: sample.split(separator: ".").prefix(2).joined(separator: ".").count)
        let bodies: [(String, () -> Void)] = [
            ("raw", { _ = try? key.privateKey.signature(for: message) }),
            (
                "promotional offer V2 (JWS)",
                {
                    _ = try? OfferJWS.promotionalOffer(
                        bundleId: "com.example.app", productId: "pro", offerIdentifier: "COMEBACK_50",
                        transactionId: "2000000001", key: key)
                }
            ),
            (
                "introductory eligibility (JWS)",
                {
                    _ = try? OfferJWS.introductoryOfferEligibility(
                        bundleId: "com.example.app", productId: "pro", allowIntroductoryOffer: true,
                        transactionId: "2000000001", key: key)
                }
            ),
            (
                "promotional offer V1",
                {
                    _ = try? PromotionalOfferSignatureV1.sign(
                        bundleId: "com.example.app", productId: "pro", offerIdentifier: "COMEBACK_50",
                        appAccountToken: nil, key: key)
                }
            ),
        ]
        var best = [Double](repeating: 0, count: bodies.count)
        for _ in 0..<3 {
            for (index, body) in bodies.enumerated() { best[index] = max(best[index], Self.perSecond(count, body.1)) }
        }
        print("Offer signing, one core, best of 3 rounds of \(count) signatures each (same key, measured in turn):")
        print(String(format: "  raw P-256 signature of %d bytes (baseline)  %8.0f /s", message.count, best[0]))
        for index in 1..<bodies.count {
            print(
                String(
                    format: "  %@%8.0f /s   %.2f of raw (goal >= 0.8)",
                    bodies[index].0.padding(toLength: 41, withPad: " ", startingAt: 0), best[index],
                    best[index] / best[0]))
        }
        let uuid = Self.perSecond(count) { _ = UUID().uuidString.lowercased() }
        let date = Self.perSecond(count) { _ = Date() }
        print(
            String(
                format:
                    "  (Foundation's UUID().uuidString.lowercased() would add %.1f µs per signature; the clock %.2f µs)",
                1e6 / uuid, 1e6 / date))
    }

    /// How many times a second `body` runs, over `count` runs after a warm-up.
    static func perSecond(_ count: Int, _ body: () -> Void) -> Double {
        for _ in 0..<(count / 10) { body() }
        let start = ContinuousClock.now
        for _ in 0..<count { body() }
        let elapsed = ContinuousClock.now - start
        return Double(count) / elapsed.timeInterval
    }

    // MARK: The load

    /// Offers `rate` requests a second for `seconds`, open loop (``OpenLoopHTTPLoad``), after `warmUp` uncounted
    /// seconds (their latencies returned apart); an answer counts when it is 200 with a body.
    static func offer(url: String, bodies: [String], rate: Double, warmUp: Double, seconds: Double) async throws
        -> (warmUp: OpenLoopLatencies, measured: OpenLoopLatencies)
    {
        let (host, port, path) = try OpenLoopHTTPLoad.target(of: url)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        let requests = bodies.map {
            OpenLoopRequest(method: .POST, path: path, headers: headers, body: ByteBuffer(string: $0))
        }
        let answered: @Sendable (HTTPResponseStatus, Int) -> Bool = { status, bytes in status == .ok && bytes > 2 }
        return try await OpenLoopHTTPLoad.runWithWarmUp(
            host: host, port: port, requests: requests, rate: rate, warmUp: Int(rate * warmUp),
            count: Int(rate * seconds), accept: answered)
    }
}
