import AppStoreModels
import Foundation
import Hummingbird
import Logging
import NIOCore
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceContextModule
import ServiceRuntime

/// `POST /notifications`, `/notifications/production` and `/notifications/sandbox`: admits Apple's body,
/// verifies its outer JWS, produces it unchanged to the raw topic, and answers 200 only once the broker
/// acknowledged it. A forgery gets a 4xx and never reaches Kafka.
struct NotificationController: Sendable {
    let admission: NotificationAdmission
    /// The outer JWS's verification (nil: `INGEST_VERIFY=false`, the chain-verifier alone verifies).
    let edge: EdgeVerification?
    /// The proxies whose `X-Forwarded-For` names the client (`HTTP_TRUSTED_PROXIES`).
    let trustedProxies: TrustedProxies
    let producer: KafkaProducer
    /// The requests being handled, as the load-shedding middleware counts them (from their head to their answer): a
    /// record whose request is the only one is sent without waiting for the linger. Requests to other paths count too
    /// (the operations endpoints do not): a record beside one of them waits for the linger like any batch.
    let requests: InFlightCounter
    /// The raw topic is where accepted notifications go.
    let topics: PipelineTopics
    /// The largest body taken (413 above it). How long it may take to arrive is the server's body deadline
    /// (``RequestDeadlineHandler``, `HTTP_BODY_TIMEOUT_MS`): a stalled or trickling client gets 408.
    let maximumBodyBytes: Int
    let metrics: IngestMetrics
    let logger: Logger

    /// Registers the routes.
    func addRoutes(to router: Router<DoorContext>) {
        router.post("/notifications") { request, context in
            await self.receive(request, route: nil, peer: context.remoteAddress)
        }
        router.post("/notifications/production") { request, context in
            await self.receive(request, route: .production, peer: context.remoteAddress)
        }
        router.post("/notifications/sandbox") { request, context in
            await self.receive(request, route: .sandbox, peer: context.remoteAddress)
        }
    }

    /// Handles one delivery from Apple; `peer` is where the connection came from (with `X-Forwarded-For`, who sent
    /// it: ``TrustedProxies``, worked out only for a chain not seen before).
    func receive(_ request: Request, route: AppStoreModels.Environment?, peer: SocketAddress?) async -> Response {
        self.metrics.inFlight.increment(by: 1)
        defer { self.metrics.inFlight.decrement(by: 1) }
        let requestID = request.headers[.init("x-request-id")!] ?? RequestIdentifier.random()
        let tooLarge = AdmissionRejection(
            status: 413, code: "body-too-large", message: "the body exceeds \(self.maximumBodyBytes) bytes")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > self.maximumBodyBytes {
            return self.refuse(tooLarge, requestID: requestID)  // refused before a byte of it is read
        }
        let body: [UInt8]
        do {
            body = try await request.bodyBytes(upTo: self.maximumBodyBytes)
        } catch is BodyDeadlineExceeded {
            return self.refuse(
                AdmissionRejection(status: 408, code: "body-timeout", message: "the body did not arrive in time"),
                requestID: requestID)
        } catch {
            return self.refuse(tooLarge, requestID: requestID)
        }
        let admitted: AdmittedNotification
        do throws(AdmissionRejection) {
            admitted = try self.admission.admit(body: body, route: route)
            try await self.edge?.verify(
                admitted,
                source: self.trustedProxies.source(
                    peer: peer, forwardedFor: request.headers[values: .xForwardedFor]))
        } catch {
            return self.refuse(error, requestID: requestID)
        }
        var record = RawTopicRecords.notification(
            body: body, subject: admitted.subject, environment: admitted.environment.rawValue,
            bundleId: admitted.bundleId, requestID: requestID, topics: self.topics)
        // The request's span (TracingMiddleware) is the trace's root: every service after this one continues it.
        TraceHeaders.inject(ServiceContext.current ?? .topLevel, into: &record.headers)
        let start = ContinuousClock.now
        do {
            let delivery = try await self.producer.enqueue(record)
            if self.requests.current == 1 {
                // No other request is under way to join this record's batch: the linger would only delay the answer.
                self.producer.sendQueuedNow()
                self.metrics.sentAtOnce.increment()
            }
            _ = try await delivery.report
        } catch {
            self.metrics.count(outcome: "unavailable")
            self.logger.error(
                "not acknowledged by the broker; answering 503 so Apple retries",
                metadata: [
                    "requestID": "\(requestID)", "notificationUUID": "\(admitted.notificationUUID ?? "")",
                    "error": "\(error)",
                ])
            return Self.json(
                status: 503, ["error": "unavailable", "message": "the notification could not be stored; retry later"])
        }
        self.metrics.produceLatency.record(ContinuousClock.now - start)
        if let parked = admitted.parked {
            // Apple's, for an app or environment not configured here: stored, answered 200 (Apple may not retry a
            // 4xx), parked in the DLQ by the chain-verifier until `iapctl replay --reason …` after configuring it.
            self.metrics.count(outcome: "parked-" + parked)
            self.logger.warning(
                "stored a notification of an app or environment not configured; the chain-verifier parks it",
                metadata: [
                    "reason": "\(parked)", "bundleId": "\(admitted.bundleId)",
                    "environment": "\(admitted.environment.rawValue)",
                ])
        } else {
            self.metrics.count(outcome: "accepted")
        }
        return Self.accepted(notificationUUID: admitted.notificationUUID ?? "")
    }

    /// A 4xx answer for a refused body, logged and counted.
    private func refuse(_ rejection: AdmissionRejection, requestID: String) -> Response {
        self.metrics.count(outcome: rejection.code)
        self.logger.info(
            "refused",
            metadata: ["requestID": "\(requestID)", "code": "\(rejection.code)", "reason": "\(rejection.message)"])
        return Self.json(status: rejection.status, ["error": rejection.code, "message": rejection.message])
    }

    /// A JSON response.
    static func json(status: Int, _ object: [String: String]) -> Response {
        Response(
            status: .init(code: status), headers: Self.jsonHeaders,
            body: .init(byteBuffer: ByteBuffer(string: JSONText.object(object))))
    }

    /// The answer to a stored notification: `{"notificationUUID":"…","status":"accepted"}`, as ``json(status:_:)``
    /// writes it, without building a dictionary on the hot path.
    static func accepted(notificationUUID: String) -> Response {
        Response(
            status: .ok, headers: Self.jsonHeaders,
            body: .init(
                byteBuffer: ByteBuffer(
                    string: #"{"notificationUUID":"# + JSONText.quoted(notificationUUID) + #","status":"accepted"}"#)))
    }

    /// `Content-Type: application/json`.
    private static let jsonHeaders: HTTPFields = [.contentType: "application/json"]
}
