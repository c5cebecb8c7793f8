import AppStoreModels
import AppStoreSigning
import Foundation
import Hummingbird
import HummingbirdTesting
import JWSVerification
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import TestSupport
import Testing

@testable import Ingest

/// Ingest's body parsing fed structure-aware mutations of genuine notifications (truncations, bit flips in
/// each JWS segment, huge and deeply nested JSON, bad base64, wrongly typed fields under a valid signature)
/// for a bounded time (`INGEST_FUZZ_SECONDS`, default 8, and at least 400 bodies; `Benchmarks/run-fuzz.sh` runs it
/// longer): never a
/// crash, never a 5xx other than 503, and everything on the raw topic verifies in full.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(30))) struct IngestFuzzTests {
    /// One mutation of a genuine JWS or body, chosen by the generator.
    static func mutate(_ jws: String, fixtures: SignedFixtures, random: inout SeededGenerator) throws -> [UInt8] {
        let body = Array(#"{"signedPayload":""#.utf8) + Array(jws.utf8) + Array(#""}"#.utf8)
        var segments = jws.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
        switch Int.random(in: 0..<9, using: &random) {
        case 0:  // truncated anywhere
            return Array(body.prefix(Int.random(in: 0..<body.count, using: &random)))
        case 1, 2, 3:  // a bit flipped in the header, the payload or the signature
            let segment = Int.random(in: 0..<3, using: &random)
            guard !segments[segment].isEmpty else { return body }
            let index = Int.random(in: 0..<segments[segment].count, using: &random)
            segments[segment][index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            return Array(#"{"signedPayload":""#.utf8) + Array(segments.joined(separator: [UInt8(ascii: ".")]))
                + Array(#""}"#.utf8)
        case 4:  // bad base64: characters outside the alphabet, or a segment missing
            if Bool.random(using: &random) {
                let segment = Int.random(in: 0..<3, using: &random)
                segments[segment].insert(contentsOf: Array("!%$".utf8), at: min(segments[segment].count, 5))
            } else {
                segments.remove(at: Int.random(in: 0..<3, using: &random))
            }
            return Array(#"{"signedPayload":""#.utf8) + Array(segments.joined(separator: [UInt8(ascii: ".")]))
                + Array(#""}"#.utf8)
        case 5:  // huge JSON: padding beside the payload, or a huge string
            let size = [1_000, 60_000, 70_000, 300_000].randomElement(using: &random)!
            return Array(#"{"pad":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: size)
                + Array(#"","signedPayload":""#.utf8)
                + Array(jws.utf8) + Array(#""}"#.utf8)
        case 6:  // deeply nested JSON
            let depth = [10, 1_000, 20_000].randomElement(using: &random)!
            return Array(#"{"signedPayload":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: depth)
                + Array(repeating: UInt8(ascii: "]"), count: depth) + Array("}".utf8)
        case 7:  // wrong types under a valid signature
            var payload = try JSONSerialization.jsonObject(with: Data(try Self.decodedPayload(jws))) as! [String: Any]
            let field = ["notificationUUID", "signedDate", "data", "notificationType", "version"].randomElement(
                using: &random)!
            payload[field] = [[1, 2], "text", 12_345, NSNull(), ["nested": true]].randomElement(using: &random)!
            let json = try JSONSerialization.data(withJSONObject: payload)
            let signed = try fixtures.signer.sign(payloadJSON: Array(json))
            return Array(#"{"signedPayload":""#.utf8) + Array(signed.utf8) + Array(#""}"#.utf8)
        default:  // the body's JSON itself broken: wrong type, escapes, extra keys
            return Array(
                [
                    #"{"signedPayload":12}"#, #"{"signedPayload":null}"#, #"["signedPayload"]"#,
                    #"{"signedPayload":"\u0000"}"#,
                    #"{"signedPayload":"# + "\"" + jws + "\"" + #","signedPayload":"x"}"#,
                    "\u{FEFF}" + String(decoding: body, as: UTF8.self),
                ].randomElement(using: &random)!.utf8)
        }
    }

    /// The decoded payload JSON of a JWS.
    static func decodedPayload(_ jws: String) throws -> [UInt8] {
        var base64 = String(jws.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(
            of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Array(Data(base64Encoded: base64)!)
    }

    @Test func mutatedNotificationsNeverCrashNever5xxAndNothingInvalidIsProduced() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["INGEST_FUZZ_SECONDS"] ?? "") ?? 8
        try await withLocalBroker { bootstrap in
            let fixtures = try SignedFixtures()
            let settings = IngestTestSupport.settings(bootstrap: [bootstrap], roots: [fixtures.pki.root])
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([(settings.topics.raw, 1)])
            let app = try buildApplication(
                settings: settings, registry: PrometheusCollectorRegistry(), logger: IngestTestSupport.quietLogger)
            let genuine = try fixtures.signedNotification()
            let seed = UInt64(ProcessInfo.processInfo.environment["INGEST_FUZZ_SEED"] ?? "") ?? 20_261_123
            let (statuses, accepted) = try await app.test(.router) { client -> ([Int: Int], Int) in
                var random = SeededGenerator(seed: seed)
                var statuses: [Int: Int] = [:]
                var accepted = 0
                let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
                // At least `minimum` bodies whatever the machine's load, and as many more as the time allows.
                let minimum = 400
                while ContinuousClock.now < deadline || statuses.values.reduce(0, +) < minimum {
                    let body = try Self.mutate(genuine, fixtures: fixtures, random: &random)
                    let status = try await client.execute(
                        uri: "/notifications", method: .post, body: ByteBuffer(bytes: body)
                    ) { Int($0.status.code) }
                    statuses[status, default: 0] += 1
                    if status == 200 { accepted += 1 }
                    #expect(
                        status < 500 || status == 503,
                        "\(status) for \(String(decoding: body.prefix(120), as: UTF8.self))")
                }
                return (statuses, accepted)
            }
            let total = statuses.values.reduce(0, +)
            #expect(total >= 400, "mutations tried: \(total)")
            #expect(Set(statuses.keys).isSubset(of: [200, 400, 403, 408, 413, 503]), "\(statuses)")
            // Whatever was accepted verifies in full (a flip in a padding bit can leave a JWS valid).
            let verifier = try fixtures.verifier()
            let stored = try await kafka.readAll(
                settings.topics.raw, atLeast: accepted, quiet: .seconds(2), timeout: .seconds(60))
            #expect(stored.count == accepted)
            for record in stored {
                let payload = EnvelopeReader.signedPayload(in: record.value ?? [])
                let verified = await verificationError { try await verifier.verifyNotification(payload ?? "") }
                #expect(
                    verified == nil, "an invalid notification reached the raw topic: \(verified.map { "\($0)" } ?? "")")
            }
            print(
                "ingest fuzz: \(total) mutated bodies in \(seconds) s: \(statuses.sorted { $0.key < $1.key }), \(accepted) verified ones accepted"
            )
        }
    }
}
