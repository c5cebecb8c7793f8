import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Testing

/// The verified topic's record signatures: what is signed, how keys rotate, and which settings stop a service.
@Suite struct RecordSigningTests {
    static func secret(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

    static func consumed(_ record: ProducerRecord) -> ConsumerRecord {
        ConsumerRecord(
            topic: record.topic, partition: 0, offset: 0, key: record.key, value: record.value, headers: record.headers)
    }

    static let record = ProducerRecord(
        topic: "appstore.notifications.verified", key: Array("sub-1".utf8), value: Array(#"{"a":1}"#.utf8),
        headers: [KafkaHeader(name: PipelineHeaders.schema, text: "appstore.app.purchase/v1")])

    @Test func aSignedRecordVerifiesAndAnyChangeBreaksIt() throws {
        let keys = try RecordSigningKeys(EnvironmentSettings(["RECORD_SIGNING_KEYS": "k1:\(Self.secret(1))"]))
        let signed = keys.sign(Self.record)
        #expect(keys.refusal(of: Self.consumed(signed)) == nil)
        #expect(keys.refusal(of: Self.consumed(Self.record)) == .unsigned)
        var otherValue = signed
        otherValue.value = Array(#"{"a":2}"#.utf8)
        var otherKey = signed
        otherKey.key = Array("sub-2".utf8)
        var otherSchema = signed
        otherSchema.headers = otherSchema.headers.map {
            $0.name == PipelineHeaders.schema ? KafkaHeader(name: $0.name, text: "appstore.status.snapshot/v1") : $0
        }
        for altered in [otherValue, otherKey, otherSchema] {
            #expect(keys.refusal(of: Self.consumed(altered)) == .wrongSignature("k1"))
        }
        var garbled = signed
        garbled.headers = garbled.headers.map {
            $0.name == RecordSigningKeys.header ? KafkaHeader(name: $0.name, text: "nonsense") : $0
        }
        #expect(keys.refusal(of: Self.consumed(garbled)) == .malformed)
    }

    @Test func keysRotate() throws {
        let old = try RecordSigningKeys(EnvironmentSettings(["RECORD_SIGNING_KEYS": "old:\(Self.secret(1))"]))
        let both = try RecordSigningKeys(
            EnvironmentSettings(["RECORD_SIGNING_KEYS": "new:\(Self.secret(2)),old:\(Self.secret(1))"]))
        let newOnly = try RecordSigningKeys(EnvironmentSettings(["RECORD_SIGNING_KEYS": "new:\(Self.secret(2))"]))
        let byOld = Self.consumed(old.sign(Self.record)), byNew = Self.consumed(both.sign(Self.record))
        #expect(both.refusal(of: byOld) == nil && both.refusal(of: byNew) == nil, "during the rotation both verify")
        #expect(byNew.header(RecordSigningKeys.header)?.text?.hasPrefix("new:") == true, "the first key signs")
        #expect(newOnly.refusal(of: byOld) == .unknownKey("old"), "after it, the old key's records are refused")
    }

    @Test(arguments: [
        [:], ["RECORD_SIGNING_KEYS": "k1"], ["RECORD_SIGNING_KEYS": "k1:%%%"],
        ["RECORD_SIGNING_KEYS": "k1:\(Data(repeating: 1, count: 16).base64EncodedString())"],
        ["RECORD_SIGNING_KEYS": "k1:\(RecordSigningTests.secret(1)),k1:\(RecordSigningTests.secret(2))"],
        ["RECORD_SIGNING_KEYS": "k1:\(RecordSigningTests.secret(1))", "RECORD_SIGNING_KEYS_FILE": "/nonexistent"],
        ["RECORD_SIGNING_KEYS_FILE": "/nonexistent/keys"],
    ])
    func badKeysStopTheService(values: [String: String]) {
        #expect(throws: SettingsError.self) { try RecordSigningKeys(EnvironmentSettings(values)) }
    }

    @Test func keysComeFromAFileToo() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("record-keys-\(UUID().uuidString)")
        try Data("k1:\(Self.secret(3))\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try RecordSigningKeys(EnvironmentSettings(["RECORD_SIGNING_KEYS_FILE": file.path]))
        let inline = try RecordSigningKeys(EnvironmentSettings(["RECORD_SIGNING_KEYS": "k1:\(Self.secret(3))"]))
        #expect(inline.refusal(of: Self.consumed(fromFile.sign(Self.record))) == nil)
    }
}
