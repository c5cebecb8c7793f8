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
        try await http.shutdown()
        let baseline = try await Self.offer(
            base: arguments[3], paths: paths, token: token, rate: rate, seconds: seconds
        ).checkedAsBaseline("bare Hummingbird GET", offered: Int(rate * seconds))
        let api = try await Self.offer(base: arguments[2], paths: paths, token: token, rate: rate, seconds: seconds)
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

    /// Offers `rate` requests a second for `seconds`, open loop (``OpenLoopHTTPLoad``); a warm-up second first is not
    /// counted. An answer counts when it is 200.
    static func offer(base: String, paths: [String], token: String, rate: Double, seconds: Double) async throws
        -> OpenLoopLatencies
    {
        let (host, port, _) = try OpenLoopHTTPLoad.target(of: base)
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(token)")
        let requests = paths.map { OpenLoopRequest(method: .GET, path: $0, headers: headers) }
        let answered: @Sendable (HTTPResponseStatus, Int) -> Bool = { status, _ in status == .ok }
        return try await OpenLoopHTTPLoad.run(
            host: host, port: port, requests: requests, rate: rate, warmUp: Int(rate), count: Int(rate * seconds),
            accept: answered)
    }
}
