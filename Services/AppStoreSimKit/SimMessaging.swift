import AppStoreAPI
import AppStoreModels
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// The Retention Messaging API as the sim serves it (`/inApps/v1/messaging/…` on each environment's host, tokens
/// checked as Apple checks them), the real-time requests the App Store sends to the team's URL, and the performance
/// test Apple runs before Production may be switched on.
struct SimMessaging: Sendable {
    let store: SimMessagingStore
    let simStore: SimStore
    @_spi(Testing) public let signer: SimSigner
    let tokens: APITokenValidator
    let http: HTTPClient
    /// The performance test Apple runs (its configuration is Apple's to choose; smaller in tests).
    let testConfig: PerformanceTestConfig
    /// Where a request of the performance test that got no answer is told, with the client's error.
    let logger: Logger

    /// Adds the API routes of both environments and `/sim/retention/requests` (send one real-time request now).
    func addRoutes(to router: Router<BasicRequestContext>) {
        for (prefix, environment) in [
            ("inApps/v1/messaging", AppStoreModels.Environment.production),
            ("sandbox/inApps/v1/messaging", AppStoreModels.Environment.sandbox),
        ] {
            let api = router.group(RouterPath(prefix))
                .add(
                    middleware: BearerTokenMiddleware(
                        tokens: self.tokens, bundleId: self.signer.bundleId, store: self.simStore))
            self.addImageRoutes(api, environment)
            self.addMessageRoutes(api, environment)
            api.put("default/:product/:locale") { request, context in
                let body = try await Self.decode(DefaultConfigurationRequest.self, request)
                guard let message = body?.messageIdentifier else { return SimAPI.error(400, 4_000_000) }
                return Self.done(
                    await self.store.setDefault(
                        product: try context.parameters.require("product"),
                        locale: try context.parameters.require("locale"), message: message, environment))
            }
            api.get("default/:product/:locale") { _, context in
                guard
                    let message = await self.store.defaultMessage(
                        product: try context.parameters.require("product"),
                        locale: try context.parameters.require("locale"), environment)
                else { return SimAPI.error(404, 4_040_020) }
                return SimAPI.json(DefaultConfigurationRequest(messageIdentifier: message))
            }
            api.delete("default/:product/:locale") { _, context in
                Self.done(
                    await self.store.deleteDefault(
                        product: try context.parameters.require("product"),
                        locale: try context.parameters.require("locale"), environment))
            }
            api.put("realtime/url") { request, _ in
                guard let url = try await Self.decode(RealtimeUrlRequest.self, request)?.realtimeURL else {
                    return SimAPI.error(400, 4_000_215)
                }
                return Self.done(await self.store.setRealtimeURL(url, environment))
            }
            api.get("realtime/url") { _, _ in
                guard let url = await self.store.realtimeURL(environment) else { return SimAPI.error(404, 4_040_021) }
                return SimAPI.json(RealtimeUrlRequest(realtimeURL: url))
            }
            api.delete("realtime/url") { _, _ in Self.done(await self.store.deleteRealtimeURL(environment)) }
            api.post("performanceTest") { request, _ in
                guard let body = try await Self.decode(PerformanceTestRequest.self, request),
                    !body.originalTransactionId.isEmpty
                else { return SimAPI.error(400, 4_000_211) }
                return await self.startPerformanceTest(body.originalTransactionId, environment)
            }
            api.get("performanceTest/result/:id") { _, context in
                guard let result = await self.store.test(try context.parameters.require("id"), environment) else {
                    return SimAPI.error(404, 4_040_018)
                }
                return SimAPI.json(result)
            }
        }
        router.post("sim/retention/requests") { request, _ in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            guard let ask = try? JSONDecoder().decode(RealtimeAsk.self, from: Data(bytes.readableBytesView)) else {
                return SimAPI.json(
                    ["error": "expected {environment, originalTransactionId, productId, userLocale}"],
                    status: .badRequest)
            }
            return SimAPI.json(await self.send(ask))
        }
    }

    // MARK: Images and messages

    private func addImageRoutes(_ api: RouterGroup<BasicRequestContext>, _ environment: AppStoreModels.Environment) {
        api.put("image/:id") { request, context in
            let id = try context.parameters.require("id")
            guard UUID(uuidString: id) != nil else { return SimAPI.error(400, 4_000_161) }
            let bytes = try await request.body.collect(upTo: 5 << 20)
            // A PNG, as Apple requires (its 8-byte signature).
            guard Array(bytes.readableBytesView.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
                return SimAPI.error(400, 4_000_161)
            }
            return Self.done(await self.store.uploadImage(id.lowercased(), environment))
        }
        api.delete("image/:id") { _, context in
            Self.done(await self.store.delete(image: try context.parameters.require("id").lowercased(), environment))
        }
        api.get("image/list") { _, _ in
            SimAPI.json(GetImageListResponse(imageIdentifiers: await self.store.images(environment)))
        }
    }

    private func addMessageRoutes(_ api: RouterGroup<BasicRequestContext>, _ environment: AppStoreModels.Environment) {
        api.put("message/:id") { request, context in
            let id = try context.parameters.require("id")
            guard UUID(uuidString: id) != nil, let body = try await Self.decode(UploadMessageRequestBody.self, request)
            else { return SimAPI.error(400, 4_000_000) }
            return Self.done(await self.store.uploadMessage(id.lowercased(), body, environment))
        }
        api.delete("message/:id") { _, context in
            Self.done(await self.store.delete(message: try context.parameters.require("id").lowercased(), environment))
        }
        api.get("message/list") { _, _ in
            SimAPI.json(GetMessageListResponse(messageIdentifiers: await self.store.messages(environment)))
        }
    }

    // MARK: Real-time requests

    /// What `/sim/retention/requests` is asked to send.
    struct RealtimeAsk: Codable, Sendable {
        @_spi(Testing) public var environment: String?
        @_spi(Testing) public var originalTransactionId: String
        @_spi(Testing) public var productId: String
        var userLocale: String?
    }

    /// One real-time request's outcome: Apple's send-attempt result, the HTTP status, the answer and the time taken.
    struct RealtimeOutcome: Codable, Sendable {
        var result: String
        var status: Int
        var milliseconds: Double
        var answer: RealtimeResponseBody?
        /// The request's identifier (the `retention.offered` event's id).
        var requestIdentifier: String?
        /// Whether the message the answer names is approved in this environment (Apple shows it only then).
        var messageApproved: Bool?
        /// The client's error when there was no answer (the sim's own, not Apple's: it names what failed).
        var error: String?
    }

    /// Signs a real-time request and posts it to the environment's real-time URL.
    func send(_ ask: RealtimeAsk, timeout: Duration = .seconds(5)) async -> RealtimeOutcome {
        let environment = AppStoreModels.Environment(rawValue: ask.environment ?? "Production") ?? .production
        let requestIdentifier = UUID().uuidString.lowercased()
        guard let url = await self.store.realtimeURL(environment),
            let signed = try? self.signer.signRealtimeRequest(
                originalTransactionId: ask.originalTransactionId, productId: ask.productId,
                userLocale: ask.userLocale ?? "en-US", environment: environment, requestIdentifier: requestIdentifier)
        else { return RealtimeOutcome(result: "OTHER", status: 0, milliseconds: 0) }
        var outcome = await Self.post(http: self.http, url: url, signedPayload: signed, timeout: timeout)
        outcome.requestIdentifier = requestIdentifier
        let named =
            outcome.answer?.message?.messageIdentifier ?? outcome.answer?.alternateProduct?.messageIdentifier
            ?? outcome.answer?.promotionalOffer?.messageIdentifier
        if let named {
            outcome.messageApproved = await self.store.messageState(named.lowercased(), environment) == "APPROVED"
        }
        return outcome
    }

    /// Posts one signed request and classifies the answer as Apple's send attempts are classified.
    static func post(http: HTTPClient, url: String, signedPayload: String, timeout: Duration) async -> RealtimeOutcome {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"signedPayload":""# + signedPayload + #""}"#))
        let start = ContinuousClock.now
        let elapsed = { (ContinuousClock.now - start).timeInterval * 1000 }
        do {
            let response = try await http.execute(request, timeout: .init(timeout))
            let body = try await response.body.collect(upTo: 1 << 20)
            let milliseconds = elapsed()
            guard response.status == .ok else {
                return RealtimeOutcome(
                    result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", status: Int(response.status.code),
                    milliseconds: milliseconds)
            }
            guard let answer = try? JSONDecoder().decode(RealtimeResponseBody.self, from: Data(body.readableBytesView)),
                [answer.message != nil, answer.alternateProduct != nil, answer.promotionalOffer != nil].filter({ $0 })
                    .count <= 1
            else { return RealtimeOutcome(result: "INVALID_RESPONSE", status: 200, milliseconds: milliseconds) }
            return RealtimeOutcome(result: "SUCCESS", status: 200, milliseconds: milliseconds, answer: answer)
        } catch {
            return RealtimeOutcome(
                result: SendAttemptResult.of(error), status: 0, milliseconds: elapsed(),
                error: String(describing: error))
        }
    }

    // MARK: Performance test

    /// The thread the performance test's requests are sent and timed on (``DedicatedThreadExecutor``).
    private static let performanceTestExecutor = DedicatedThreadExecutor(name: "sim-performance-test")

    /// Starts Apple's performance test against the environment's real-time URL: `totalRequests` signed requests for
    /// `originalTransactionId`, at most `maxConcurrentRequests` at once, spread over `totalDuration`. An answer counts
    /// when it is a valid 200 within `responseTimeThreshold`; the test passes at `successRateThreshold` percent.
    private func startPerformanceTest(_ original: String, _ environment: AppStoreModels.Environment) async -> Response {
        guard let url = await self.store.realtimeURL(environment) else { return SimAPI.error(404, 4_040_021) }
        guard let purchase = await self.simStore.purchase(for: original, in: environment) else {
            return SimAPI.error(404, 4_040_005)
        }
        let id = UUID().uuidString.lowercased()
        let config = self.testConfig
        let initial = PerformanceTestResultResponse(
            config: config, target: url, result: "PENDING", successRate: nil, numPending: config.totalRequests,
            responseTimes: nil, failures: nil)
        guard await self.store.startTest(id, initial, environment) else { return SimAPI.error(400, 4_000_213) }
        let run = self
        Task {
            let result = await run.runTest(
                url: url, original: original, productId: purchase.productId, environment: environment, id: id)
            await run.store.updateTest(id, result, environment)
        }
        return SimAPI.json(PerformanceTestResponse(config: config, requestId: id))
    }

    /// Runs the test and computes Apple's result.
    private func runTest(
        url: String, original: String, productId: String, environment: AppStoreModels.Environment, id: String
    ) async
        -> PerformanceTestResultResponse
    {
        let config = self.testConfig
        let total = config.totalRequests ?? 100
        let concurrency = max(1, config.maxConcurrentRequests ?? 10)
        let threshold = Double(config.responseTimeThreshold ?? 700)
        let spacing = Duration.milliseconds(Double(config.totalDuration ?? 0) / Double(max(total, 1)))
        let timeout = Duration.milliseconds(Int64(threshold) * 3)
        var latencies: [Double] = []
        var failures: [String: Int] = [:]
        var succeeded = 0
        let start = ContinuousClock.now
        // On a thread of its own: the answers are timed as they arrive, not when a thread of the process (shared with
        // whatever else runs in it, in tests) is free to take them.
        await withTaskExecutorPreference(Self.performanceTestExecutor) {
            await withTaskGroup(of: RealtimeOutcome.self) { group in
                var running = 0
                for index in 0..<total {
                    if running == concurrency, let outcome = await group.next() {
                        running -= 1
                        self.tally(outcome, threshold: threshold, &latencies, &failures, &succeeded)
                    }
                    try? await Task.sleep(until: start + spacing * index)
                    running += 1
                    let signer = self.signer, http = self.http
                    group.addTask {
                        guard
                            let signed = try? signer.signRealtimeRequest(
                                originalTransactionId: original, productId: productId, userLocale: "en-US",
                                environment: environment)
                        else { return RealtimeOutcome(result: "OTHER", status: 0, milliseconds: 0) }
                        return await Self.post(http: http, url: url, signedPayload: signed, timeout: timeout)
                    }
                }
                for await outcome in group {
                    self.tally(outcome, threshold: threshold, &latencies, &failures, &succeeded)
                }
            }
        }
        latencies.sort()
        let percentile = { (p: Double) -> Int? in
            latencies.isEmpty
                ? nil : Int(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))].rounded(.up))
        }
        let rate = total == 0 ? 0 : succeeded * 100 / total
        return PerformanceTestResultResponse(
            config: config, target: url, result: rate >= (config.successRateThreshold ?? 95) ? "PASS" : "FAIL",
            successRate: rate, numPending: 0,
            responseTimes: PerformanceTestResponseTimes(
                average: latencies.isEmpty ? nil : Int((latencies.reduce(0, +) / Double(latencies.count)).rounded(.up)),
                p50: percentile(0.5), p90: percentile(0.9), p95: percentile(0.95), p99: percentile(0.99)),
            failures: failures.isEmpty ? nil : failures)
    }

    /// Counts one outcome: a valid answer within the threshold succeeds; a late one is TIMED_OUT. A request without
    /// an answer is logged with the client's error.
    private func tally(
        _ outcome: RealtimeOutcome, threshold: Double, _ latencies: inout [Double], _ failures: inout [String: Int],
        _ succeeded: inout Int
    ) {
        latencies.append(outcome.milliseconds)
        if let error = outcome.error {
            self.logger.warning(
                "a request of the performance test got no answer",
                metadata: ["result": "\(outcome.result)", "error": "\(error)", "ms": "\(outcome.milliseconds)"])
        }
        if outcome.result == "SUCCESS" && outcome.milliseconds <= threshold {
            succeeded += 1
        } else {
            failures[outcome.result == "SUCCESS" ? "TIMED_OUT" : outcome.result, default: 0] += 1
        }
    }

    // MARK: Helpers

    /// A JSON body, or nil when it is not one.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T? {
        let bytes = try await request.body.collect(upTo: 1 << 16)
        return try? JSONDecoder().decode(type, from: Data(bytes.readableBytesView))
    }

    /// 200 with an empty body, or Apple's error for `code` (its HTTP status is the code's first three digits).
    static func done(_ code: Int?) -> Response {
        guard let code else { return Response(status: .ok) }
        return SimAPI.error(code / 10_000, code)
    }
}
