import AppStoreModels
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationPipeline
import Storage
import TestSupport

/// customer-api's look-up latency at a fixed offered rate, next to a bare Hummingbird endpoint measured in
/// the same run (`Benchmarks/run-lookup.sh` starts PostgreSQL and both servers).
///
/// It stores `CUSTOMERS` life cycles through the updater's own repository, creates an API key, then offers
/// `RATE` GETs a second for `SECONDS` to each server, open loop: request i is due at start + i / RATE and its
/// latency counts from then, so a slow answer delays nothing and hides nothing (no coordinated omission).
///
/// Usage: `lookup-benchmark DATABASE_URL API_URL BASELINE_URL [RATE] [SECONDS] [CUSTOMERS]`.
@main
enum LookupBenchmarkMain {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4 else {
            print("usage: lookup-benchmark DATABASE_URL API_URL BASELINE_URL [RATE] [SECONDS] [CUSTOMERS]")
            exit(2)
        }
        let rate = arguments.count > 4 ? Double(arguments[4]) ?? 1000 : 1000
        let seconds = arguments.count > 5 ? Double(arguments[5]) ?? 10 : 10
        let customers = arguments.count > 6 ? Int(arguments[6]) ?? 2000 : 2000
        var logger = Logger(label: "lookup-benchmark")
        logger.logLevel = .error
        let quiet = logger
        let token = try await DatabaseClient.with(try DatabaseSettings(url: arguments[1]), logger: quiet) { client in
            try await storeLifeCycles(customers, client: client, logger: quiet)
            return try await APIKeyStore(client: client, logger: quiet).create(
                bundleId: "com.example.app", ratePerSecond: 1_000_000
            ).token
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        // The stored life cycles are Sandbox's (a look-up without `environment` reads Production).
        let paths = (0..<customers).map {
            "/v1/apps/com.example.app/customers/s-\($0)?idType=originalTransactionId&environment=Sandbox"
        }
        // customer-api reads its keys every CUSTOMER_API_KEY_REFRESH_MS: the new key works within it.
        try await waitUntilCustomerAPIKnows(key: token, baseURL: arguments[2], http: http)
        let baseline = try await Self.offer(
            http: http, base: arguments[3], paths: paths, token: token, rate: rate, seconds: seconds
        ).checkedAsBaseline("bare Hummingbird GET", offered: Int(rate * seconds))
        let api = try await Self.offer(
            http: http, base: arguments[2], paths: paths, token: token, rate: rate, seconds: seconds)
        try await http.shutdown()
        print(
            "Look-up benchmark: \(Int(rate)) GETs/s offered for \(Int(seconds)) s, \(customers) customers (2 cores, PostgreSQL co-located)"
        )
        print(
            "target                                        answered/s   errors    p50 ms    p90 ms    p99 ms    max ms")
        print(baseline.line("bare Hummingbird GET (baseline)"))
        print(api.line("customer-api GET customer (PostgreSQL)"))
        print(
            String(
                format: "customer-api p99 is %.1fx the baseline's",
                api.milliseconds(99) / max(baseline.milliseconds(99), 0.001)))
    }

    /// Offers `rate` requests a second for `seconds`, open loop; a warm-up second first is not counted.
    static func offer(http: HTTPClient, base: String, paths: [String], token: String, rate: Double, seconds: Double)
        async throws -> OpenLoopLatencies
    {
        _ = try await Self.run(http: http, base: base, paths: paths, token: token, rate: rate, count: Int(rate))
        return try await Self.run(
            http: http, base: base, paths: paths, token: token, rate: rate, count: Int(rate * seconds))
    }

    static func run(http: HTTPClient, base: String, paths: [String], token: String, rate: Double, count: Int)
        async throws -> OpenLoopLatencies
    {
        var result = OpenLoopLatencies()
        let started = ContinuousClock.now
        await withTaskGroup(of: (Bool, UInt64).self) { group in
            for index in 0..<count {
                let due = started + .nanoseconds(Int64(Double(index) / rate * 1e9))
                if due > ContinuousClock.now { try? await Task.sleep(until: due, clock: .continuous) }
                var request = HTTPClientRequest(url: base + paths[index % paths.count])
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                group.addTask {
                    let ok =
                        ((try? await http.execute(request, timeout: .seconds(10)))?.status.code).map { $0 == 200 }
                        ?? false
                    let latency = ContinuousClock.now - due
                    return (ok, UInt64(max(0, latency.timeInterval * 1_000_000)))
                }
            }
            for await (ok, micros) in group { result.record(ok: ok, micros: micros) }
        }
        result.elapsed = (ContinuousClock.now - started).timeInterval
        return result
    }
}
