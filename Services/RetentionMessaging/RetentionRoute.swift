import AppStoreAPI
import AppStoreModels
import Foundation
import Hummingbird
import JWSVerification
import Logging
import NIOCore
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// `POST /retention-message`: Apple's Get Retention Message call. Verifies the signed real-time request (chain to a
/// trusted root with Apple's OIDs, ES256, a configured app's appAppleId, its environment), reads the subscription,
/// lets the app's rules choose, answers Apple's `RealtimeResponseBody`, and publishes `retention.offered`. A request
/// Apple did not sign gets 401 and nothing else; when the database cannot answer, the app's default message is given
/// (Apple shows its own default on any failure anyway).
struct RetentionRoute: Sendable {
    let verifiers: [AppStoreModels.Environment: SignedDataVerifier]
    /// Chains not seen before validated per second (beyond: 503, and Apple shows its default message).
    let newChains: NewChainBudget
    /// The proxies whose `X-Forwarded-For` names the client (`HTTP_TRUSTED_PROXIES`), for its new-chain budget.
    let trustedProxies: TrustedProxies
    let facts: RetentionFacts
    let rules: RetentionRules
    let offerKey: OfferSigningKey?
    let producer: KafkaProducer
    let topic: String
    /// The largest body taken (413 above it); how long it may take to arrive is the server's body deadline
    /// (`HTTP_BODY_TIMEOUT_MS`; then 408), like every other door's.
    let maximumBodyBytes: Int
    /// Stale requests refused, repeats answered as the first time (no second event, no new signature).
    let replays: RealtimeReplayWindow
    /// Writes this replica's answers to the replicas' shared store (``RealtimeAnswers``) in batches; a request this
    /// replica has not seen is reserved there by the statement that reads its subscription. Nil: this replica's alone.
    let answerRecorder: RealtimeAnswerRecorder?
    private var sharesAnswers: Bool { self.answerRecorder != nil }
    let outcomes: LabelledCounter
    let events: LabelledCounter
    let logger: Logger

    /// The encoder of every answer and event: keys sorted, so the same answer is the same bytes (`JSONEncoder`'s with
    /// `.sortedKeys`, written directly: Foundation's took ~3 % of the service's CPU).
    private static let encoder = FastJSONEncoder(sortsKeys: true)

    /// The path Apple's real-time URL names (`iapctl retention url set https://…/retention-message`).
    static let path = "retention-message"

    func add(to router: Router<DoorContext>) {
        router.post(RouterPath(Self.path)) { request, context in
            await self.answer(request, peer: context.remoteAddress)
        }
    }

    /// Verifies, chooses, answers, publishes; `peer` is where the connection came from (with `X-Forwarded-For`, who
    /// sent it, for a new chain's budget).
    func answer(_ request: Request, peer: SocketAddress?) async -> Response {
        let limit = self.maximumBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return self.refuse(.contentTooLarge, "body-too-large", "the body exceeds \(limit) bytes")
        }
        let bytes: [UInt8]
        do {
            bytes = try await request.bodyBytes(upTo: limit)
        } catch is BodyDeadlineExceeded {
            return self.refuse(.requestTimeout, "body-timeout", "the body did not arrive in time")
        } catch {
            return self.refuse(.contentTooLarge, "body-too-large", "the body exceeds \(limit) bytes")
        }
        guard let body = try? FastJSONDecoder().decode(RealtimeRequestBody.self, from: bytes),
            let signed = body.signedPayload
        else {
            return self.refuse(.badRequest, "bad-body", #"expected {"signedPayload": "<JWS>"}"#)
        }
        let claimed = (try? UnverifiedJWS.decodePayload(of: signed, as: DecodedRealtimeRequestBody.self))?.environment
        guard let claimed, let verifier = self.verifiers[claimed] else {
            return self.refuse(.unauthorized, "invalid-signature", "not a real-time request of an accepted environment")
        }
        if let wait = self.newChains.admit(
            known: verifier.knowsChain(ofJWS: signed),
            source: self.trustedProxies.source(peer: peer, forwardedFor: request.headers[values: .xForwardedFor]))
        {
            return self.refuse(
                .serviceUnavailable, "verification-busy",
                "too many certificate chains not seen before; retry in \(Int(wait.rounded(.up))) s")
        }
        let verified: (request: DecodedRealtimeRequestBody, app: AppIdentity)
        do throws(VerificationError) {
            verified = try await verifier.verifyRealtimeRequest(signed)
        } catch {
            if error.isRetryable { return self.refuse(.serviceUnavailable, "unavailable", error.description) }
            return self.refuse(.unauthorized, "invalid-signature", error.description)
        }
        let (realtime, app) = verified
        let now = Date()
        let shared = realtime.requestIdentifier.map {
            RealtimeAnswers.Key(environment: claimed.rawValue, bundleId: app.bundleId, requestIdentifier: $0)
        }
        let key = shared.map { "\($0.environment)/\($0.bundleId)/\($0.requestIdentifier)" }
        switch self.replays.check(key: key, signedAt: realtime.signedDate?.date, now: now) {
        case .stale(let age):
            return self.refuse(
                .unauthorized, "stale-request",
                "signed \(age) s from now; a real-time request is answered within \(Int(self.replays.window)) s")
        case .repeated(let answer):
            return self.repeatAnswer(answer)
        case .new:
            break
        }
        let subject: RetentionSubject
        var degraded = false
        do {
            let original = realtime.originalTransactionId ?? ""
            if let shared, self.sharesAnswers {
                // One statement reads the subscription and reserves the request among every replica's.
                let reservation: RealtimeAnswers.Reservation
                (subject, reservation) = try await self.facts.subject(
                    originalTransactionId: original, reserving: shared, seenAt: now)
                if let repeated = self.repeatedElsewhere(reservation, localKey: key) { return repeated }
            } else {
                subject = try await self.facts.subject(
                    environment: claimed.rawValue, bundleId: app.bundleId, originalTransactionId: original)
            }
        } catch {
            // The replicas' answers cannot be read either: this replica's own window decided.
            self.logger.warning("cannot read the subscription", metadata: ["error": "\(error)"])
            subject = RetentionSubject(known: false)
            degraded = true
        }
        let appRules = self.rules.apps[app.bundleId]
        let rule =
            degraded ? nil : self.rules.choose(bundleId: app.bundleId, request: realtime, subject: subject, now: now)
        let answer: RetentionAnswer
        do {
            answer = try RetentionAnswer.make(
                rule: rule, app: appRules, request: realtime, subject: subject, bundleId: app.bundleId,
                key: self.offerKey, now: now)
        } catch {
            self.logger.error("cannot sign the offer", metadata: ["error": "\(error)"])
            answer =
                (try? RetentionAnswer.make(
                    rule: nil, app: appRules, request: realtime, subject: subject, bundleId: app.bundleId, key: nil))
                ?? RetentionAnswer(kind: "none", body: .init())
        }
        self.outcomes.increment(degraded ? "degraded" : answer.kind)
        await self.publish(RetentionOfferedEvent(request: realtime, app: app, answer: answer, answeredAt: now))
        let answered = (try? Self.encoder.encode(answer.body)).map { Data($0) } ?? Data("{}".utf8)
        self.replays.record(key, answer: answered)
        if let shared { self.answerRecorder?.add(shared, answer: answered) }
        return Self.answer(answered)
    }

    /// What to answer a request another replica reserved first: its answer, or 409 while it is being made. Nil when
    /// this replica reserved it and answers it.
    private func repeatedElsewhere(_ reservation: RealtimeAnswers.Reservation, localKey: String?) -> Response? {
        switch reservation {
        case .new:
            return nil
        case .answered(let answer):
            self.replays.record(localKey, answer: answer)
            return self.repeatAnswer(answer)
        case .inFlight:
            self.replays.forget(localKey)
            return self.repeatAnswer(nil)
        }
    }

    /// What a repeat gets, whichever replica saw the request first: its first answer, or 409 while it is being made.
    private func repeatAnswer(_ answer: Data?) -> Response {
        guard let answer else {
            return self.refuse(.conflict, "repeated-in-flight", "the same request is being answered")
        }
        self.outcomes.increment("repeated")
        return Self.answer(answer)
    }

    /// Apple's `RealtimeResponseBody`, as JSON bytes.
    private static func answer(_ body: Data) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Hands the event to the producer without waiting for the broker: Apple's ~700 ms budget is the customer's
    /// cancel screen; librdkafka retries delivery (idempotent, acks=all) and the outcome is counted when it is known.
    private func publish(_ event: RetentionOfferedEvent) async {
        let value = (try? Self.encoder.encode(event)) ?? []
        let record = ProducerRecord(
            topic: self.topic, key: Array(event.originalTransactionId.utf8), value: value,
            headers: [KafkaHeader(name: "event-id", value: Array(event.eventId.utf8))])
        do {
            let events = self.events
            try await self.producer.enqueue(record).whenReported { outcome in
                events.increment((try? outcome.get()) == nil ? "failed" : "published")
            }
        } catch {
            self.events.increment("failed")
            self.logger.error("cannot publish retention.offered", metadata: ["error": "\(error)"])
        }
    }

    /// A refusal: Apple shows its default message; nothing is published.
    private func refuse(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        self.outcomes.increment(code)
        let body = #"{"error":"# + JSONText.quoted(code) + #","message":"# + JSONText.quoted(message) + "}"
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
