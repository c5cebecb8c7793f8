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
        switch self {
        case .verified(var record):
            TraceHeaders.inject(context, into: &record.headers)
            return .verified(record)
        case .rejected(var record, let reason):
            TraceHeaders.inject(context, into: &record.headers)
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
        } catch {
            return self.reject(
                message, reason: error.kind.rawValue, detail: error.detail, uuid: untrusted()?.notificationUUID)
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
