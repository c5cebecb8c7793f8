import Foundation
import PipelineRecords
public import RdKafka
public import ServiceRuntime

/// Checks, in the entitlement-updater, that a verified-topic record was signed by the producer it names, with one
/// of that producer's keys, and is of a kind that producer may write (``RecordProducer/kinds``). The updater holds
/// each producer's keys; no producer holds another's.
public struct RecordVerifier: Sendable {
    let keys: [RecordProducer: RecordSigningKeys]

    /// A verifier with each producer's keys (a producer without keys has every record refused).
    public init(_ keys: [RecordProducer: RecordSigningKeys]) {
        self.keys = keys
    }

    /// Reads `RECORD_VERIFYING_KEYS` (`producer:id:base64secret,…`, producers as in `record-producer`) or
    /// `RECORD_VERIFYING_KEYS_FILE` (the same, one per line or comma-separated). The updater does not start without
    /// them, nor with an unknown producer or a bad key.
    public init(_ settings: EnvironmentSettings) throws(SettingsError) {
        let variable = "RECORD_VERIFYING_KEYS"
        guard settings.string("RECORD_SIGNING_KEYS", default: "").isEmpty else {
            throw SettingsError(
                "the entitlement-updater only verifies records: give it RECORD_VERIFYING_KEYS (every producer's keys), "
                    + "not RECORD_SIGNING_KEYS")
        }
        let text = try RecordSigningKeys.text(
            inline: settings.string("RECORD_VERIFYING_KEYS", default: ""),
            file: settings.string("RECORD_VERIFYING_KEYS_FILE", default: ""), variable: variable,
            format: "producer:id:base64secret")
        var pairs: [RecordProducer: [(id: String, secret: [UInt8])]] = [:]
        for entry in RecordSigningKeys.entries(text) {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let producer = RecordProducer(rawValue: String(parts[0])) else {
                throw SettingsError(
                    "\(variable) entries are producer:id:base64secret with a producer among "
                        + RecordProducer.allCases.map(\.rawValue).joined(separator: ", ") + ", not \(parts[0]):…")
            }
            pairs[producer, default: []].append(try RecordSigningKeys.pair(String(parts[1]), variable: variable))
        }
        var keys: [RecordProducer: RecordSigningKeys] = [:]
        for (producer, list) in pairs {
            keys[producer] = try RecordSigningKeys(list, variable: "\(variable) (\(producer.rawValue))")
        }
        self.init(keys)
    }

    // MARK: Verifying

    /// Why a consumed record is not authenticated.
    public enum Refusal: Error, CustomStringConvertible, Hashable, Sendable {
        case unsigned
        case malformed
        case unknownProducer(String)
        case kindNotAllowed(producer: String, schema: String)
        case unknownKey(producer: String, id: String)
        case wrongSignature(producer: String, id: String)

        public var description: String {
            switch self {
            case .unsigned:
                "the record carries no \(PipelineHeaders.recordSignature) or \(PipelineHeaders.recordProducer) header"
            case .malformed:
                "the \(PipelineHeaders.recordSignature) header is not keyId:base64, or \(PipelineHeaders.recordSignedAt) is missing"
            case .unknownProducer(let name): "signed as \(name), a producer this service has no keys of"
            case .kindNotAllowed(let producer, let schema): "\(producer) may not write \(schema) records"
            case .unknownKey(let producer, let id):
                "signed with \(producer)'s key \(id), which this service does not hold"
            case .wrongSignature(let producer, let id):
                "the signature by \(producer)'s key \(id) does not match the record (forged or altered)"
            }
        }
    }

    /// Checks a consumed record: nil when its producer may write its kind and one of that producer's keys
    /// reproduces its MAC, else why not.
    public func refusal(of record: ConsumerRecord) -> Refusal? {
        guard let signature = record.header(PipelineHeaders.recordSignature)?.text,
            let producerName = record.header(PipelineHeaders.recordProducer)?.text
        else { return .unsigned }
        guard let signedAt = record.header(PipelineHeaders.recordSignedAt)?.text else { return .malformed }
        let separator = signature.firstIndex(of: ":")
        guard let separator, let given = Data(base64Encoded: String(signature[signature.index(after: separator)...]))
        else { return .malformed }
        guard let producer = RecordProducer(rawValue: producerName), let keys = self.keys[producer] else {
            return .unknownProducer(producerName)
        }
        let schema = record.header(PipelineHeaders.schema)?.text
        guard producer.mayWrite(schema: schema) else {
            return .kindNotAllowed(producer: producerName, schema: schema ?? VerifiedNotificationRecord.schema)
        }
        let id = signature[..<separator]
        guard let key = keys.key(id) else { return .unknownKey(producer: producerName, id: String(id)) }
        let parts = RecordSignatureParts(
            producer: producerName, signedAt: signedAt, schema: schema, key: record.key, value: record.value)
        return RecordMAC.isValid(given, parts, keyed: key.keyed)
            ? nil : .wrongSignature(producer: producerName, id: key.id)
    }
}
