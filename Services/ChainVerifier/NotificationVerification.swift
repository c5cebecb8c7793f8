import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceContextModule
import ServiceRuntime

/// What verifying one raw message produced.
enum VerificationOutcome: Sendable {
    /// A record for the verified topic.
    case verified(ProducerRecord)
    /// A record for the rejected topic (DLQ), with the reason counted in metrics.
    case rejected(ProducerRecord, reason: String)
    /// A failure that says nothing about the message; the batch is tried again.
    case retry(VerificationError)

    /// The outcome with its record carrying the trace context.
    func carrying(_ context: ServiceContext) -> VerificationOutcome {
        self.withHeaders { TraceHeaders.inject(context, into: &$0) }
    }

    /// The outcome with its record carrying `trace`: the input's trace headers, forwarded unchanged.
    func forwarding(_ trace: [KafkaHeader]) -> VerificationOutcome {
        self.withHeaders { headers in
            headers.removeAll { $0.name == "traceparent" || $0.name == "tracestate" }
            headers += trace
        }
    }

    /// The outcome with `change` applied to its record's headers (a retry has no record).
    private func withHeaders(_ change: (inout [KafkaHeader]) -> Void) -> VerificationOutcome {
        switch self {
        case .verified(var record):
            change(&record.headers)
            return .verified(record)
        case .rejected(var record, let reason):
            change(&record.headers)
            return .rejected(record, reason: reason)
        case .retry: return self
        }
    }
}

/// Verifies one raw message with the verifier of its environment and builds the output record.
struct NotificationVerification: Sendable {
    let verifiers: [AppStoreModels.Environment: SignedDataVerifier]
    let topics: PipelineTopics
    /// Signs each verified record for the updater.
    let signing: RecordSigner

    /// Verifies a raw message; never throws: every input ends as a verified record, a DLQ record, or a retry.
    func verify(_ message: ConsumerRecord) async -> VerificationOutcome {
        guard let value = message.value, let signedPayload = EnvelopeReader.signedPayload(in: value) else {
            return self.reject(
                message, reason: "envelope", detail: "the value is not Apple's {\"signedPayload\": …} body", uuid: nil)
        }
        // Decoded without verification only where needed: a missing environment header, or a DLQ record.
        let untrusted = { try? UnverifiedJWS(signedPayload).decodePayload(as: ResponseBodyV2DecodedPayload.self) }
        let environmentName = message.header(PipelineHeaders.environment)?.text ?? untrusted()?.rawEnvironment
        guard let environment = environmentName.flatMap(AppStoreModels.Environment.init(rawValue:)),
            let verifier = self.verifiers[environment]
        else {
            if let environment = environmentName.flatMap(AppStoreModels.Environment.init(rawValue:)),
                environment.isAppStoreServer
            {
                return await self.park(message, signedPayload, reason: "unknown-environment", uuid: untrusted)
            }
            return self.reject(
                message, reason: VerificationError.Kind.environment.rawValue,
                detail: "no verifier for environment \(environmentName ?? "(none)")",
                uuid: untrusted()?.notificationUUID)
        }
        do {
            let (verified, signedJSON) = try await verifier.verifyNotificationKeepingJSON(signedPayload)
            // Encoding plain decoded values cannot fail. Apple's JSON goes out as Apple signed it.
            return .verified(
                try! VerifiedTopicRecords.notification(
                    verified, json: signedJSON,
                    source: .init(topic: message.topic, partition: message.partition, offset: message.offset),
                    carrying: message.headers.filter {
                        [PipelineHeaders.receivedAt, PipelineHeaders.requestID].contains($0.name)
                    }, topics: self.topics, signing: self.signing))
        } catch  where error.isRetryable {
            return .retry(error)
        } catch  where error.kind == .appIdentifier {
            // The app is checked after Apple's signature verified: Apple's notification of an app not configured.
            return self.reject(
                message, reason: "unknown-app", detail: Self.parkedDetail(error.detail),
                uuid: untrusted()?.notificationUUID)
        } catch {
            return self.reject(
                message, reason: error.kind.rawValue, detail: error.detail, uuid: untrusted()?.notificationUUID)
        }
    }

    /// What a parked notification's DLQ record says.
    static func parkedDetail(_ why: String) -> String {
        "\(why): Apple's signature verified; configure the app and environment, then `iapctl replay --reason` it"
    }

    /// A notification of an App Store environment without a verifier here: parked under `reason` in the DLQ when
    /// Apple's signature verifies (with any verifier: they share the roots), refused like any forgery otherwise.
    private func park(
        _ message: ConsumerRecord, _ signedPayload: String, reason: String,
        uuid: () -> ResponseBodyV2DecodedPayload?
    ) async -> VerificationOutcome {
        guard let verifier = self.verifiers.anyAppStoreVerifier else {
            return self.reject(message, reason: reason, detail: "no App Store verifier configured", uuid: nil)
        }
        do {
            let notification = try UnverifiedJWS(signedPayload).decodeNotification()
            _ = try await verifier.verifyNotificationSignatureOnly(notification)
            return self.reject(
                message, reason: reason,
                detail: Self.parkedDetail("environment \(notification.payload.rawEnvironment ?? "") is not configured"),
                uuid: notification.payload.notificationUUID)
        } catch  where error.isRetryable {
            return .retry(error)
        } catch {
            return self.reject(
                message, reason: error.kind.rawValue, detail: error.detail, uuid: uuid()?.notificationUUID)
        }
    }

    /// A DLQ record carrying the original message and why it was refused.
    private func reject(_ message: ConsumerRecord, reason: String, detail: String, uuid: String?) -> VerificationOutcome
    {
        let record = RejectedNotificationRecord(
            reason: reason, detail: detail, notificationUUID: uuid, original: .init(message))
        return .rejected(
            ProducerRecord(
                topic: self.topics.rejected, key: message.key, value: try! record.encoded(),
                headers: message.headers + [
                    KafkaHeader(name: PipelineHeaders.schema, text: RejectedNotificationRecord.schema)
                ]),
            reason: reason)
    }
}
