import Foundation
import TestSupport
import Testing

@testable import IAPCtl

/// `iapctl verify` reproduces every outcome of the conformance table (exit code and the kind it prints).
@Suite struct VerifyCommandConformanceTests {
    /// One row: the arguments (fixture paths relative to Tests/Fixtures), the input, and the outcome.
    struct Row: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var input: String
        var exitCode: Int32
        var kind: String?
        var testDescription: String { "\(input) \(arguments.joined(separator: " "))" }
    }

    static let mockRoot = ["--root", Fixtures.url("apple/certs/testCA.der").path]
    static let realApp = [
        "--bundle-id", "com.loki-project.loki-messenger", "--app-apple-id", "1470168868", "--environment", "Sandbox",
    ]

    static let rows: [Row] = [
        Row(
            arguments: mockRoot + ["--bundle-id", "com.example", "--app-apple-id", "1234", "--environment", "Sandbox"],
            input: "apple/mock_signed_data/testNotification", exitCode: 0),
        Row(
            arguments: mockRoot + [
                "--bundle-id", "com.example", "--app-apple-id", "1234", "--environment", "Production",
            ],
            input: "apple/mock_signed_data/testNotification", exitCode: 1, kind: "environment"),
        Row(
            arguments: mockRoot + [
                "--bundle-id", "com.example", "--app-apple-id", "1235", "--environment", "Production",
            ],
            input: "apple/mock_signed_data/testNotification", exitCode: 1, kind: "app identifier"),
        Row(
            arguments: mockRoot + ["--bundle-id", "com.example", "--environment", "Sandbox"],
            input: "apple/mock_signed_data/wrongBundleId", exitCode: 1, kind: "app identifier"),
        Row(
            arguments: mockRoot + ["--bundle-id", "com.example", "--environment", "Sandbox"],
            input: "apple/mock_signed_data/missingX5CHeaderClaim", exitCode: 1, kind: "format"),
        Row(
            arguments: mockRoot + ["--bundle-id", "com.example", "--environment", "Sandbox", "--type", "transaction"],
            input: "apple/mock_signed_data/transactionInfo", exitCode: 0),
        Row(
            arguments: mockRoot + [
                "--bundle-id", "com.example.x", "--environment", "Sandbox", "--type", "transaction",
            ],
            input: "apple/mock_signed_data/transactionInfo", exitCode: 1, kind: "app identifier"),
        Row(
            arguments: mockRoot + ["--bundle-id", "com.example", "--environment", "Sandbox", "--type", "renewal-info"],
            input: "apple/mock_signed_data/renewalInfo", exitCode: 0),
        Row(
            arguments: ["--bundle-id", "com.example", "--environment", "Sandbox"],
            input: "apple/mock_signed_data/testNotification", exitCode: 1, kind: "chain"),
        Row(arguments: realApp, input: "real-sandbox/signedPayload_DID_RENEW", exitCode: 0),
        Row(
            arguments: realApp + ["--root", Fixtures.url("real-sandbox/AppleRootCA-G3.der").path],
            input: "real-sandbox/signedPayload_DID_RENEW", exitCode: 0),
        Row(
            arguments: realApp + ["--type", "transaction"], input: "real-sandbox/signedTransactionInfo_DID_RENEW",
            exitCode: 0),
        Row(
            arguments: realApp + ["--type", "renewal-info"], input: "real-sandbox/signedRenewalInfo_DID_RENEW",
            exitCode: 0),
        Row(arguments: realApp + mockRoot, input: "real-sandbox/signedPayload_DID_RENEW", exitCode: 1, kind: "chain"),
        Row(
            arguments: [
                "--bundle-id", "com.example.naturelab.backyardbirds.example", "--environment", "Xcode", "--type",
                "transaction",
                "--root", Fixtures.url("apple/xcode/storekit-test-certificate.der").path,
            ],
            input: "apple/xcode/xcode-signed-transaction", exitCode: 0),
        Row(
            arguments: [
                "--bundle-id", "com.example.naturelab.backyardbirds.example", "--environment", "Xcode", "--type",
                "transaction",
            ],
            input: "apple/xcode/xcode-signed-transaction", exitCode: 1, kind: "environment"),
        Row(
            arguments: [
                "--bundle-id", "com.example.naturelab.backyardbirds.example", "--app-apple-id", "1",
                "--environment", "Production", "--type", "transaction",
            ],
            input: "apple/xcode/xcode-signed-transaction", exitCode: 1, kind: "certificate"),
    ]

    @Test(arguments: rows)
    func conformanceRow(row: Row) async throws {
        let command = try VerifyCommand.parse(row.arguments + [Fixtures.url(row.input).path])
        let outcome = await command.execute(readInput: { try Fixtures.bytes(row.input) })
        #expect(outcome.exitCode == row.exitCode, "\(outcome.standardError)")
        if let kind = row.kind {
            #expect(outcome.standardError.hasPrefix("invalid: \(kind): "))
            #expect(!outcome.standardError.contains("\n"))
            #expect(outcome.standardOutput.isEmpty)
        } else {
            #expect(outcome.standardError.isEmpty)
            #expect(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) is [String: Any])
        }
    }

    @Test(arguments: ["a.b.c", "a.b.c.d"])
    func literalNonJWSInputsAreFormatErrors(input: String) async throws {
        let command = try VerifyCommand.parse(["--bundle-id", "com.example", "--environment", "Sandbox", "-"])
        let outcome = await command.execute(readInput: { Array(input.utf8) })
        #expect(outcome.exitCode == 1)
        #expect(outcome.standardError.hasPrefix("invalid: format: "))
    }

    @Test func aNotificationIsShownWithEveryNestedJWSDecodedBesideItsSignedString() async throws {
        let command = try VerifyCommand.parse(Self.realApp + ["-"])
        let outcome = await command.execute(readInput: { try Fixtures.bytes("real-sandbox/signedPayload_DID_RENEW") })
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
        let data = try #require(json["data"] as? [String: Any])
        #expect(
            data["signedTransactionInfo"] as? String
                == (try Fixtures.text("real-sandbox/signedTransactionInfo_DID_RENEW")))
        #expect((data["transactionInfo"] as? [String: Any])?["transactionId"] as? String == "2000001024998954")
        #expect(data["signedRenewalInfo"] is String)
        #expect((data["renewalInfo"] as? [String: Any])?["autoRenewStatus"] as? Int == 1)
        #expect(json["notificationUUID"] as? String == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
    }

    @Test func applesPostBodyIsAcceptedAsInput() async throws {
        let jws = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW")
        let command = try VerifyCommand.parse(Self.realApp + ["-"])
        let outcome = await command.execute(readInput: { Array("{\"signedPayload\":\"\(jws)\"}".utf8) })
        #expect(outcome.exitCode == 0)
        let bad = await command.execute(readInput: { Array("{\"other\":1}".utf8) })
        #expect(bad.exitCode == 1 && bad.standardError.hasPrefix("invalid: format: "))
    }

    @Test func atOverridesTheValidationTime() async throws {
        // The real leaf is valid 2025-09-19 to 2027-10-13.
        for (at, code) in [("2026-01-01T00:00:00Z", Int32(0)), ("2030-01-01T00:00:00Z", 1), ("1577836800000", 1)] {
            let command = try VerifyCommand.parse(Self.realApp + ["--at", at, "-"])
            let outcome = await command.execute(readInput: {
                try Fixtures.bytes("real-sandbox/signedPayload_DID_RENEW")
            })
            #expect(outcome.exitCode == code, "--at \(at): \(outcome.standardError)")
            if code == 1 { #expect(outcome.standardError.hasPrefix("invalid: chain: ")) }
        }
    }

    @Test func configurationProblemsAreUsageErrors() async throws {
        let production = try VerifyCommand.parse(["--bundle-id", "b", "--environment", "Production", "-"])
        #expect(await production.execute(readInput: { [] }).exitCode == 2)
        let badRoot = try VerifyCommand.parse([
            "--bundle-id", "b", "--environment", "Sandbox", "--root", "/nonexistent", "-",
        ])
        #expect(await badRoot.execute(readInput: { [] }).exitCode == 2)
        let notACertificate = try VerifyCommand.parse(
            [
                "--bundle-id", "b", "--environment", "Sandbox", "--root",
                Fixtures.url("apple/mock_signed_data/testNotification").path, "-",
            ])
        #expect(await notACertificate.execute(readInput: { [] }).exitCode == 2)
        let badTime = try VerifyCommand.parse(["--bundle-id", "b", "--environment", "Sandbox", "--at", "tomorrow", "-"])
        #expect(await badTime.execute(readInput: { [] }).exitCode == 2)
    }

    @Test func rootsAreReadAsDEROrPEM() async throws {
        let der = try Fixtures.bytes("apple/certs/testCA.der")
        let pem =
            "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("testCA-\(UUID()).pem")
        try Data(pem.utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let command = try VerifyCommand.parse(
            [
                "--root", path.path, "--bundle-id", "com.example", "--app-apple-id", "1234", "--environment", "Sandbox",
                "-",
            ])
        let outcome = await command.execute(readInput: { try Fixtures.bytes("apple/mock_signed_data/testNotification") }
        )
        #expect(outcome.exitCode == 0, "\(outcome.standardError)")
    }
}
