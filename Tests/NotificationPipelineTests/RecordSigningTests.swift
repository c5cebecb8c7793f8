import Crypto
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Testing

/// The verified topic's record signatures: each producer signs as itself, the updater checks who signed what,
/// how keys rotate, and which settings stop a service.
@Suite struct RecordSigningTests {
    static func secret(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

    static func consumed(_ record: ProducerRecord) -> ConsumerRecord {
        ConsumerRecord(
            topic: record.topic, partition: 0, offset: 0, key: record.key, value: record.value, headers: record.headers)
    }

    static let purchase = ProducerRecord(
        topic: "appstore.notifications.verified", key: Array("sub-1".utf8), value: Array(#"{"a":1}"#.utf8),
        headers: [KafkaHeader(name: PipelineHeaders.schema, text: "appstore.app.purchase/v1")])

    /// A producer's signer with one key.
    static func signer(_ producer: RecordProducer, _ entries: String) throws -> RecordSigner {
        try RecordSigner(producer, EnvironmentSettings(["RECORD_SIGNING_KEYS": entries]))
    }

    /// The updater's verifier from a `RECORD_VERIFYING_KEYS` value.
    static func verifier(_ entries: String) throws -> RecordVerifier {
        try RecordVerifier(EnvironmentSettings(["RECORD_VERIFYING_KEYS": entries]))
    }

    /// A field as the authenticated message holds it: 8-byte big-endian length, then the bytes.
    static func field(_ bytes: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { Array($0) } + bytes
    }

    /// An absent field (no key, no schema) in the authenticated message: a length of all ones.
    static let absent = withUnsafeBytes(of: UInt64.max.bigEndian) { Array($0) }

    /// The MAC is HMAC-SHA256 over the documented message, whatever way the code feeds it to the hash: built here
    /// byte by byte, so a record signed by an older or newer release of any producer still checks out.
    @Test func theSignatureIsHMACOverTheDocumentedMessage() throws {
        let secret = Data(repeating: 7, count: 32)
        let signer = try Self.signer(.customerAPI, "k7:\(secret.base64EncodedString())")
        let signed = signer.sign(Self.purchase, at: Date(timeIntervalSince1970: 1_700_000_000.5))
        let message =
            Array("appstore-record-mac-v2".utf8) + Self.field(Array("customer-api".utf8))
            + Self.field(Array("1700000000500".utf8)) + Self.field(Array("appstore.app.purchase/v1".utf8))
            + Self.field(Array("sub-1".utf8)) + Self.field(Array(#"{"a":1}"#.utf8))
        let expected = Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        #expect(
            signed.headers.first { $0.name == PipelineHeaders.recordSignature }?.text
                == "k7:" + expected.base64EncodedString())
        // A record without key and schema marks both absent with a length of all ones.
        let bare = signer.sign(
            ProducerRecord(topic: "t", key: nil, value: Array("v".utf8), headers: []),
            at: Date(timeIntervalSince1970: 1))
        let bareMessage =
            Array("appstore-record-mac-v2".utf8) + Self.field(Array("customer-api".utf8))
            + Self.field(Array("1000".utf8))
            + Self.absent + Self.absent + Self.field(Array("v".utf8))
        let bareExpected = Data(HMAC<SHA256>.authenticationCode(for: bareMessage, using: SymmetricKey(data: secret)))
        #expect(
            bare.headers.first { $0.name == PipelineHeaders.recordSignature }?.text
                == "k7:" + bareExpected.base64EncodedString())
        let verifier = try Self.verifier("customer-api:k7:\(secret.base64EncodedString())")
        #expect(verifier.refusal(of: Self.consumed(signed)) == nil)
        // A MAC cut short (its first half, say) is a wrong signature, not a match of its prefix.
        var truncated = signed
        truncated.headers.removeAll { $0.name == PipelineHeaders.recordSignature }
        truncated.headers.append(
            KafkaHeader(
                name: PipelineHeaders.recordSignature, text: "k7:" + expected.prefix(16).base64EncodedString()))
        #expect(verifier.refusal(of: Self.consumed(truncated)) == .wrongSignature(producer: "customer-api", id: "k7"))
    }

    /// The MAC is swift-crypto's HMAC-SHA256 for secrets shorter than SHA-256's 64-byte block, as long, and longer
    /// (hashed first, RFC 2104), over values shorter and longer than a block.
    @Test(arguments: [32, 63, 64, 65, 100], [0, 1, 55, 64, 200])
    func theMACIsHMACSHA256ForEverySecretLength(secretLength: Int, valueLength: Int) throws {
        let secret = Data((0..<secretLength).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let value = [UInt8](repeating: 0x61, count: valueLength)
        let signer = try Self.signer(.customerAPI, "k:\(secret.base64EncodedString())")
        let record = ProducerRecord(topic: "t", key: nil, value: value, headers: [])
        let signed = signer.sign(record, at: Date(timeIntervalSince1970: 1))
        let message =
            Array("appstore-record-mac-v2".utf8) + Self.field(Array("customer-api".utf8))
            + Self.field(Array("1000".utf8))
            + Self.absent + Self.absent + Self.field(value)
        let expected = Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        #expect(
            signed.headers.first { $0.name == PipelineHeaders.recordSignature }?.text
                == "k:" + expected.base64EncodedString())
        // The key's prepared state is copied for each MAC, never changed by one: the same record signs the same.
        let again = signer.sign(record, at: Date(timeIntervalSince1970: 1))
        #expect(again.headers == signed.headers)
    }

    @Test func aSignedRecordNamesItsProducerAndTimeAndAnyChangeBreaksIt() throws {
        let signer = try Self.signer(.customerAPI, "k1:\(Self.secret(1))")
        let verifier = try Self.verifier("customer-api:k1:\(Self.secret(1))")
        let signed = signer.sign(Self.purchase, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(signed.headers.first { $0.name == PipelineHeaders.recordProducer }?.text == "customer-api")
        #expect(signed.headers.first { $0.name == PipelineHeaders.recordSignedAt }?.text == "1700000000000")
        #expect(verifier.refusal(of: Self.consumed(signed)) == nil)
        #expect(verifier.refusal(of: Self.consumed(Self.purchase)) == .unsigned)
        var otherValue = signed
        otherValue.value = Array(#"{"a":2}"#.utf8)
        var otherKey = signed
        otherKey.key = Array("sub-2".utf8)
        let altered = [
            otherValue, otherKey,
            signed.replacingHeader(PipelineHeaders.schema, with: "appstore.consumption.facts/v1"),
            signed.replacingHeader(PipelineHeaders.recordSignedAt, with: "1800000000000"),
        ]
        for record in altered {
            #expect(verifier.refusal(of: Self.consumed(record)) == .wrongSignature(producer: "customer-api", id: "k1"))
        }
        #expect(
            verifier.refusal(of: Self.consumed(signed.replacingHeader(PipelineHeaders.recordSignature, with: "x")))
                == .malformed)
        var timeless = signed
        timeless.headers.removeAll { $0.name == PipelineHeaders.recordSignedAt }
        #expect(verifier.refusal(of: Self.consumed(timeless)) == .malformed)
    }

    @Test func eachProducerWritesOnlyItsKindsWithItsOwnKey() throws {
        let verifier = try Self.verifier(
            "chain-verifier:k1:\(Self.secret(1)),customer-api:k1:\(Self.secret(2)),"
                + "refund-resolver:k1:\(Self.secret(3)),iapctl:k1:\(Self.secret(4))")
        let chainVerifier = try Self.signer(.chainVerifier, "k1:\(Self.secret(1))")
        let customerAPI = try Self.signer(.customerAPI, "k1:\(Self.secret(2))")
        let refundResolver = try Self.signer(.refundResolver, "k1:\(Self.secret(3))")
        let iapctl = try Self.signer(.iapctl, "k1:\(Self.secret(4))")
        var notification = Self.purchase
        notification.headers = [KafkaHeader(name: PipelineHeaders.schema, text: VerifiedNotificationRecord.schema)]
        var unnamed = Self.purchase
        unnamed.headers = []
        let snapshot = Self.purchase.replacingHeader(PipelineHeaders.schema, with: "appstore.status.snapshot/v1")
        // Who may write what.
        for (signer, record) in [
            (chainVerifier, notification), (chainVerifier, unnamed), (customerAPI, Self.purchase),
            (refundResolver, snapshot), (iapctl, Self.purchase), (iapctl, snapshot),
        ] {
            #expect(verifier.refusal(of: Self.consumed(signer.sign(record))) == nil, "\(signer.producer)")
        }
        // customer-api's key on a verified notification (named or not), refund-resolver's on a purchase, chain-verifier's on a snapshot.
        #expect(
            verifier.refusal(of: Self.consumed(customerAPI.sign(notification)))
                == .kindNotAllowed(producer: "customer-api", schema: VerifiedNotificationRecord.schema))
        #expect(
            verifier.refusal(of: Self.consumed(customerAPI.sign(unnamed)))
                == .kindNotAllowed(producer: "customer-api", schema: VerifiedNotificationRecord.schema))
        #expect(
            verifier.refusal(of: Self.consumed(refundResolver.sign(Self.purchase)))
                == .kindNotAllowed(producer: "refund-resolver", schema: "appstore.app.purchase/v1"))
        #expect(
            verifier.refusal(of: Self.consumed(chainVerifier.sign(snapshot)))
                == .kindNotAllowed(producer: "chain-verifier", schema: "appstore.status.snapshot/v1"))
        // customer-api's key passed off as chain-verifier's, and a producer the updater does not know.
        let passedOff = customerAPI.sign(notification).replacingHeader(
            PipelineHeaders.recordProducer, with: "chain-verifier")
        #expect(
            verifier.refusal(of: Self.consumed(passedOff)) == .wrongSignature(producer: "chain-verifier", id: "k1"))
        let stranger = customerAPI.sign(notification).replacingHeader(PipelineHeaders.recordProducer, with: "billing")
        #expect(verifier.refusal(of: Self.consumed(stranger)) == .unknownProducer("billing"))
        // A producer the updater holds no keys of.
        let partial = try Self.verifier("chain-verifier:k1:\(Self.secret(1))")
        #expect(partial.refusal(of: Self.consumed(customerAPI.sign(Self.purchase))) == .unknownProducer("customer-api"))
    }

    @Test func keysRotate() throws {
        let old = try Self.signer(.refundResolver, "old:\(Self.secret(1))")
        let both = try Self.signer(.refundResolver, "new:\(Self.secret(2)),old:\(Self.secret(1))")
        let snapshot = Self.purchase.replacingHeader(PipelineHeaders.schema, with: "appstore.status.snapshot/v1")
        let byOld = Self.consumed(old.sign(snapshot)), byNew = Self.consumed(both.sign(snapshot))
        let during = try Self.verifier("refund-resolver:new:\(Self.secret(2)),refund-resolver:old:\(Self.secret(1))")
        let after = try Self.verifier("refund-resolver:new:\(Self.secret(2))")
        #expect(during.refusal(of: byOld) == nil && during.refusal(of: byNew) == nil, "during the rotation both verify")
        #expect(byNew.header(PipelineHeaders.recordSignature)?.text?.hasPrefix("new:") == true, "the first key signs")
        #expect(
            after.refusal(of: byOld) == .unknownKey(producer: "refund-resolver", id: "old"),
            "after it, the old key's records are refused")
    }

    @Test(arguments: [
        [:], ["RECORD_SIGNING_KEYS": "k1"], ["RECORD_SIGNING_KEYS": "k1:%%%"],
        ["RECORD_SIGNING_KEYS": "k1:\(Data(repeating: 1, count: 16).base64EncodedString())"],
        ["RECORD_SIGNING_KEYS": "k1:\(RecordSigningTests.secret(1)),k1:\(RecordSigningTests.secret(2))"],
        ["RECORD_SIGNING_KEYS": "k1:\(RecordSigningTests.secret(1))", "RECORD_SIGNING_KEYS_FILE": "/nonexistent"],
        ["RECORD_SIGNING_KEYS_FILE": "/nonexistent/keys"],
    ])
    func badSigningKeysStopTheService(values: [String: String]) {
        #expect(throws: SettingsError.self) { try RecordSigner(.chainVerifier, EnvironmentSettings(values)) }
    }

    @Test(arguments: [
        [:], ["RECORD_VERIFYING_KEYS": "k1:\(RecordSigningTests.secret(1))"],
        ["RECORD_VERIFYING_KEYS": "billing:k1:\(RecordSigningTests.secret(1))"],
        ["RECORD_VERIFYING_KEYS": "customer-api:k1:%%%"],
        ["RECORD_VERIFYING_KEYS": "customer-api:k1:\(Data(repeating: 1, count: 16).base64EncodedString())"],
        [
            "RECORD_VERIFYING_KEYS":
                "iapctl:k1:\(RecordSigningTests.secret(1)),iapctl:k1:\(RecordSigningTests.secret(2))"
        ],
        // The updater holds no signing key: a deployment that gives it one is wrong.
        [
            "RECORD_VERIFYING_KEYS": "iapctl:k1:\(RecordSigningTests.secret(1))",
            "RECORD_SIGNING_KEYS": "k1:\(RecordSigningTests.secret(1))",
        ],
    ])
    func badVerifyingKeysStopTheUpdater(values: [String: String]) {
        #expect(throws: SettingsError.self) { try RecordVerifier(EnvironmentSettings(values)) }
    }

    @Test func keysComeFromAFileToo() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("record-keys-\(UUID().uuidString)")
        try Data("chain-verifier:k1:\(Self.secret(3))\ncustomer-api:k1:\(Self.secret(4))\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try RecordVerifier(EnvironmentSettings(["RECORD_VERIFYING_KEYS_FILE": file.path]))
        let signer = try Self.signer(.customerAPI, "k1:\(Self.secret(4))")
        #expect(fromFile.refusal(of: Self.consumed(signer.sign(Self.purchase))) == nil)
    }
}
