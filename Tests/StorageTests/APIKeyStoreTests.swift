import Foundation
import Logging
import PostgresNIO
import TestSupport
import Testing

@testable import Storage

/// customer-api keys in a real PostgreSQL: stored hashed, checked in constant time, one app each, rotated
/// with a grace period, revoked at once; and the `iapctl api-keys` binary around them.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct APIKeyStoreTests {
    let logger: Logger = {
        var logger = Logger(label: "api-key-test")
        logger.logLevel = .error
        return logger
    }()

    /// Runs `body` with a store on a freshly migrated database, and the database's URL.
    func withStore(_ body: @Sendable (APIKeyStore, PostgresClient, String) async throws -> Void) async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, url in
            try await body(APIKeyStore(client: client, logger: logger), client, url)
        }
    }

    @Test func aKeyAuthenticatesItsAppAndNothingElse() async throws {
        try await withStore { store, client, _ in
            let issued = try await store.create(bundleId: "com.example.app", label: "backend", ratePerSecond: 5)
            #expect(
                issued.token.hasPrefix("ck_\(issued.key.keyId)_") && issued.key.ratePerSecond == 5
                    && issued.key.label == "backend")
            #expect(try await store.authenticate(issued.token) == .success(issued.key))
            var wrong = issued.token
            wrong.removeLast()
            wrong.append(issued.token.last == "A" ? "B" : "A")
            #expect(try await store.authenticate(wrong) == .failure(.wrongSecret))
            #expect(try await store.authenticate("ck_0123456789abcdef_secret") == .failure(.unknown))
            for malformed in ["", "Bearer x", "ck_", "ck_nothex!!!!!!!!!!_x", "ck_0123_x", "xx_0123456789abcdef_y"] {
                #expect(try await store.authenticate(malformed) == .failure(.malformed), "\(malformed)")
            }
            // Only the hash is stored: the secret appears nowhere in the table.
            let secret = String(issued.token.split(separator: "_", maxSplits: 2)[2])
            var dump = ""
            for try await row in try await client.query("SELECT api_keys::text FROM api_keys", logger: logger).decode(
                String.self)
            { dump += row }
            #expect(!dump.contains(secret) && !dump.isEmpty)
        }
    }

    @Test func rotationKeepsTheOldKeyForItsGraceAndRevocationIsImmediate() async throws {
        try await withStore { store, _, _ in
            let first = try await store.create(bundleId: "com.example.app")
            let second = try await store.rotate(first.key.keyId, grace: .seconds(3600))
            #expect(second.key.bundleId == "com.example.app" && second.key.keyId != first.key.keyId)
            guard case .success(let old) = try await store.authenticate(first.token) else {
                Issue.record("the old key works during its grace period")
                return
            }
            #expect(old.replacedBy == second.key.keyId && old.expiresAt != nil)
            #expect(
                try await store.authenticate(first.token, now: Date().addingTimeInterval(3700)) == .failure(.expired))
            let third = try await store.rotate(second.key.keyId, grace: .zero)
            #expect(try await store.authenticate(second.token, now: Date().addingTimeInterval(1)) == .failure(.expired))
            #expect(try await store.revoke(third.key.keyId))
            #expect(try await store.authenticate(third.token) == .failure(.revoked))
            #expect(try await store.revoke("0000000000000000") == false)
            await #expect(throws: APIKeyStoreError.self) { _ = try await store.rotate(third.key.keyId) }
            let other = try await store.create(bundleId: "com.example.other")
            #expect(try await store.list(bundleId: "com.example.other").map(\.keyId) == [other.key.keyId])
            #expect(try await store.list().count == 4)
        }
    }

    @Test func secretsAreComparedInConstantTime() {
        #expect(APIKeyStore.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!APIKeyStore.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!APIKeyStore.constantTimeEqual([1, 2, 3], [1, 2]))
    }

    @Test func theIAPCtlBinaryManagesKeys() async throws {
        try await withStore { store, _, url in
            let environment = ["DATABASE_URL": url]
            let (created, createdOutput) = try await Self.iapctl(
                ["api-keys", "create", "--bundle-id", "com.example.app", "--label", "ops", "--rate", "7"],
                environment: environment)
            #expect(created == 0, "\(createdOutput)")
            let issued = try JSONSerialization.jsonObject(with: Data(createdOutput.utf8)) as? [String: Any]
            let token = try #require(issued?["token"] as? String)
            guard case .success(let key) = try await store.authenticate(token) else {
                Issue.record("the printed token authenticates")
                return
            }
            #expect(key.ratePerSecond == 7 && key.label == "ops")
            let (listed, listOutput) = try await Self.iapctl(["api-keys", "list"], environment: environment)
            #expect(listed == 0 && listOutput.contains(key.keyId) && !listOutput.contains(token))
            let (rotated, rotateOutput) = try await Self.iapctl(
                ["api-keys", "rotate", key.keyId, "--grace-seconds", "0"], environment: environment)
            #expect(rotated == 0 && rotateOutput.contains("\"token\""), "\(rotateOutput)")
            let (revoked, _) = try await Self.iapctl(["api-keys", "revoke", key.keyId], environment: environment)
            #expect(revoked == 0)
            #expect(try await Self.iapctl(["api-keys", "revoke", "0000000000000000"], environment: environment).0 == 1)
            #expect(
                try await Self.iapctl(
                    ["api-keys", "create", "--bundle-id", "x", "--rate", "0"], environment: environment
                ).0 == 2)
        }
    }

    /// Runs the built `iapctl` with extra environment; returns its exit status and standard output.
    static func iapctl(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "iapctl")
        let result = try await Program.run(binary, arguments, environment: environment, errors: .discarded)
        return (result.status, result.output)
    }
}
