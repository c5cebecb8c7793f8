import AppStoreModels
import Crypto
import Dispatch
import Entitlements
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords

/// Measures full verification of the real Apple-signed notification (outer JWS + transaction + renewal
/// info) against the machine's own P-256 limit, measured in the same run.
///
/// Usage: `verification-benchmark [--seconds S] [--notification FILE] [--root FILE] [--cores N] [--cost-probe S]`
/// (with `--cost-probe`, only ``CostProbe``). Build with
/// `-c release`; `Benchmarks/run-verification.sh` does both.
@main
enum VerificationBenchmarkMain {
    static func main() async throws {
        let options: BenchmarkOptions
        do {
            options = try BenchmarkOptions(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            // A wrong argument is the caller's mistake: say how to call it, exit 2, no crash report.
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)
        }
        let signedPayload = String(decoding: try Data(contentsOf: options.notification), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let verifier = try Self.makeVerifier(root: options.root)
        let reference = try await verifier.verifyNotification(signedPayload)
        if let seconds = options.costProbeSeconds {
            try await CostProbe.run(seconds: seconds) { _ = try await verifier.verifyNotification(signedPayload) }
            return
        }
        let cores = options.cores
        let inputs = SignatureInputs(notification: reference)

        print(
            "Verification benchmark: \(options.notification.lastPathComponent), \(options.seconds) s per figure, \(cores) cores"
        )
        let verifyRate = Rate.measure(seconds: options.seconds) { inputs.verifyDigestOnce() }
        // The crypto limit and full verification alternate in slices, on one core and on all, so that the machine's
        // drift during the run falls on both (see `Rate.alternating`).
        let threeChecks: @Sendable () async throws -> Void = { inputs.verifyThreeSigningInputs() }
        let fullVerification: @Sendable () async throws -> Void = {
            _ = try await verifier.verifyNotification(signedPayload)
        }
        let (jwsChecksRate, oneCore) = try await Rate.alternating(
            seconds: options.seconds, rounds: 10, tasks: 1, baseline: threeChecks, subject: fullVerification)
        let (jwsChecksAllCores, allCores) = try await Rate.alternating(
            seconds: options.seconds, rounds: 10, tasks: cores, baseline: threeChecks, subject: fullVerification)
        let cold = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try await Self.makeVerifier(root: options.root).verifyNotification(signedPayload)
        }
        // The verified record chain-verifier writes for this notification (Apple's JSON, no certificates).
        let (verified, signedJSON) = try await verifier.verifyNotificationKeepingJSON(signedPayload)
        let records = try RecordSignatureInputs(
            value: try VerifiedNotificationRecord.encoding(verified, json: signedJSON).bytes)
        let macRate = Rate.measure(seconds: options.seconds) { records.macOnce() }
        let signRate = Rate.measure(seconds: options.seconds) { records.signOnce() }
        let checkRate = Rate.measure(seconds: options.seconds) { records.checkOnce() }
        // The updater's own look at Apple's signature: the record decoded (what it does for every notification
        // anyway) against the record decoded and checked against Apple's signed payload, which it carries.
        let appleCheck = AppleSignatureCheck(verifiers: [.sandbox: verifier])
        let value = Data(try VerifiedNotificationRecord.encoding(verified, json: signedJSON).bytes)
        let payloadBytes = Array(signedPayload.utf8)
        let valueBytes = Array(value)
        let foundationDecodeRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: value)
        }
        let decodeRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try FastJSONDecoder().decode(VerifiedNotificationRecord.self, from: valueBytes)
        }
        let appleRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            let record = try FastJSONDecoder().decode(VerifiedNotificationRecord.self, from: valueBytes)
            guard try await appleCheck.refusal(of: record, signedPayload: payloadBytes) == nil else {
                throw BenchmarkError("the Apple check refuses chain-verifier's record")
            }
        }
        // The updater's JSON writing (events, facts rows) stands in here as the same models written canonically.
        let record = try FastJSONDecoder().decode(VerifiedNotificationRecord.self, from: valueBytes)
        let canonical = AppStoreJSON.makeCanonicalEncoder()
        let foundationEncodeRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try canonical.encode(record)
        }
        let encodeRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try FastJSONEncoder.canonical.encode(record)
        }
        guard try FastJSONEncoder.canonical.encode(record) == Array(try canonical.encode(record)) else {
            throw BenchmarkError("FastJSONEncoder and JSONEncoder write the record differently")
        }
        // The event the rules emit for this notification, written as the updater writes every event's payload (its
        // own writer) and as it did before (FastJSONEncoder through the event's Encodable conformance).
        guard
            let event = EntitlementRules.apply(record.notification, subject: record.subject, current: SubjectState())
                .events.first
        else { throw BenchmarkError("the rules emit no event for this notification") }
        let eventBytes = try event.canonicalJSON()
        guard eventBytes == Array(try canonical.encode(event)) else {
            throw BenchmarkError("the event's own writer and JSONEncoder write the event differently")
        }
        let eventEncodeRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try FastJSONEncoder.canonical.encode(event)
        }
        let eventWriteRate = try await Rate.measureAsync(seconds: options.seconds, tasks: 1) {
            _ = try event.canonicalJSON()
        }
        let limit = jwsChecksRate
        Report.print([
            ("P-256 verify of a SHA-256 digest (swift-crypto), 1 core", verifyRate, "baseline"),
            ("3 JWS signature checks of this notification (hash + verify), 1 core", jwsChecksRate, "crypto limit"),
            ("full verification, fresh verifier each time (no chain cache), 1 core", cold, Report.ratio(cold, limit)),
            ("full verification, chain cache warm, 1 core", oneCore, Report.ratio(oneCore, limit)),
            ("3 JWS signature checks, \(cores) cores", jwsChecksAllCores, "crypto limit, \(cores) cores"),
            (
                "full verification, chain cache warm, \(cores) cores", allCores,
                Report.ratio(allCores, jwsChecksAllCores) + ", \(cores) cores"
            ),
        ])
        print(
            String(
                format: "Goal: >= 3000 notifications/s per core; measured %.0f per core (%.0f%% of the crypto limit).",
                oneCore, 100 * oneCore / limit))
        print(
            "Record signatures on the verified topic (its record: \(records.valueBytes) bytes; the notification "
                + "\(signedPayload.utf8.count)), 1 core:")
        Report.print([
            ("HMAC-SHA256 of the record's key and value", macRate, "baseline"),
            (
                "sign as a producer (RecordSigner: producer, time, schema, key, value)", signRate,
                String(format: "%.2f of the bare MAC", signRate / macRate)
            ),
            (
                "check in the updater (RecordVerifier: producer, kind, key, MAC)", checkRate,
                String(format: "%.2f of the bare MAC", checkRate / macRate)
            ),
            (
                "one P-256 verify (the least an Apple signature re-check adds)", verifyRate,
                String(format: "%.3f of the bare MAC", verifyRate / macRate)
            ),
        ])
        print("The updater's Apple check (UPDATER_APPLE_SIGNATURE_CHECK=required), 1 core:")
        Report.print([
            ("decode the verified record (done for every notification; FastJSONDecoder)", decodeRate, "baseline"),
            (
                "the same with Foundation's JSONDecoder", foundationDecodeRate,
                String(format: "%.2f of FastJSONDecoder", foundationDecodeRate / decodeRate)
            ),
            (
                "decode it and check it against Apple's signed payload (AppleSignatureCheck)", appleRate,
                String(format: "%.2f of decoding alone", appleRate / decodeRate)
            ),
        ])
        print("Writing JSON canonically (the updater's events and facts rows), the verified record, 1 core:")
        Report.print([
            ("FastJSONEncoder.canonical", encodeRate, "baseline"),
            (
                "Foundation's JSONEncoder (sorted keys, slashes unescaped)", foundationEncodeRate,
                String(format: "%.2f of FastJSONEncoder", foundationEncodeRate / encodeRate)
            ),
        ])
        print("The updater's event of this notification (\(event.eventType), \(eventBytes.count) bytes), 1 core:")
        Report.print([
            ("FastJSONEncoder.canonical (its Encodable conformance)", eventEncodeRate, "baseline"),
            (
                "its own writer (EntitlementEvent.canonicalJSON, as the updater writes it)", eventWriteRate,
                String(format: "%.2f of FastJSONEncoder", eventWriteRate / eventEncodeRate)
            ),
        ])
    }

    /// The verifier for the real notification: Apple Root CA G3 (or the given root), the real app.
    static func makeVerifier(root: URL?) throws -> SignedDataVerifier {
        var roots = [AppleRootCertificates.rootCAG3]
        if let root {
            roots = [try CertificateLoading.certificate(from: Array(Data(contentsOf: root)), source: root.path)]
        }
        return SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox,
                apps: [AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)],
                trustedRoots: roots))
    }
}
