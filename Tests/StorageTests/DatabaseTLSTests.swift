import Foundation
import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// `DATABASE_URL`'s TLS parameters (libpq's names), the pool size, and a password that never shows.
@Suite struct DatabaseSettingsTLSTests {
    @Test func theURLsTLSParametersAreRead() throws {
        let settings = try DatabaseSettings(url: "postgres://app:secret@db.internal:6432/pipeline?sslmode=verify-full")
        #expect(settings.sslMode == .verifyFull && settings.host == "db.internal" && settings.port == 6432)
        #expect(try DatabaseSettings(url: "postgres://app@db/x").sslMode == .disable, "plain unless the URL asks")
        #expect(try DatabaseSettings(url: "postgres://app@db/x?sslmode=require").sslMode == .require)
    }

    @Test func badTLSParametersStopTheServiceAtStart() {
        for url in [
            "postgres://app@db/x?sslmode=sometimes",  // no such mode
            "postgres://app@db/x?sslmode=verify-full&sslrootcert=/does/not/exist.pem",  // unreadable CA
            "postgres://app@db/x?sslcert=/tmp/c.pem",  // a certificate without its key
            "postgres://app@10.0.0.7/x?sslmode=verify-full",  // verify-full needs the certificate's host name
            "postgres://app@db/x?ssl=true",  // not a libpq parameter this service knows
        ] {
            #expect(throws: StorageError.self, "\(url)") { try DatabaseSettings(url: url) }
        }
    }

    /// With `REQUIRE_VERIFIED_TLS=true` (the production overlays) only `sslmode=verify-full` starts.
    @Test func requiringVerifiedTLSRefusesEveryWeakerMode() throws {
        let base = "postgres://u:p@db.example.com/pipeline"
        for mode in ["disable", "prefer", "require", "verify-ca"] {
            #expect(throws: StorageError.self, "sslmode=\(mode)") {
                try DatabaseSettings(environment: [
                    "DATABASE_URL": base + "?sslmode=" + mode, "REQUIRE_VERIFIED_TLS": "true",
                ])
            }
        }
        #expect(throws: StorageError.self, "no sslmode") {
            try DatabaseSettings(environment: ["DATABASE_URL": base, "REQUIRE_VERIFIED_TLS": "true"])
        }
        #expect(throws: StorageError.self, "a value that is neither true nor false") {
            try DatabaseSettings(environment: [
                "DATABASE_URL": base + "?sslmode=verify-full", "REQUIRE_VERIFIED_TLS": "yes",
            ])
        }
        let verified = try DatabaseSettings(
            environment: ["DATABASE_URL": base + "?sslmode=verify-full", "REQUIRE_VERIFIED_TLS": "true"])
        #expect(verified.sslMode == .verifyFull)
        #expect(
            try DatabaseSettings(environment: ["DATABASE_URL": base, "REQUIRE_VERIFIED_TLS": "false"]).sslMode
                != .verifyFull)
    }

    @Test func aPasswordIsNeverPrinted() {
        do {
            _ = try DatabaseSettings(url: "postgresql://app:hunter2-secret@/x")
            Issue.record("a URL without a host was accepted")
        } catch {
            #expect(!error.description.contains("hunter2"), "\(error)")
            #expect(error.description.contains("app:***@"))
        }
    }

    @Test func thePoolSizeIsASetting() throws {
        let settings = try DatabaseSettings(environment: [
            "DATABASE_URL": "postgres://app@db/x", "DATABASE_POOL_SIZE": "7",
        ])
        #expect(settings.poolSize == 7 && settings.clientConfiguration.options.maximumConnections == 7)
        #expect(throws: StorageError.self) {
            try DatabaseSettings(environment: ["DATABASE_URL": "postgres://app@db/x", "DATABASE_POOL_SIZE": "0"])
        }
    }
}

/// Against a real PostgreSQL with TLS on, its certificate made by the test's own certificate authority
/// (`deploy/local/tls-certs.sh`): verify-full connects over TLS, a wrong CA or host name is refused.
@Suite(.tags(.integration), .notInUnitRuns) struct DatabaseTLSTests {
    let logger = Logger(label: "tls")

    /// A PostgreSQL server with TLS on, its certificate naming `name`; the body gets its port and the CA's folder.
    func withTLSPostgres(certificateFor name: String, _ body: (_ port: Int, _ certificates: URL) async throws -> Void)
        async throws
    {
        let certificates = try LocalComponents.temporaryDirectory("tls")
        defer { try? FileManager.default.removeItem(at: certificates) }
        try await LocalComponents.script("tls-certs.sh", [certificates.path, name])
        let directory = try LocalComponents.temporaryDirectory("postgres-tls")
        let url = try await LocalComponents.script(
            "postgres.sh", ["start", directory.path], environment: ["POSTGRES_TLS_DIR": certificates.path])
        do {
            try await body(try #require(URLComponents(string: url)?.port), certificates)
        } catch {
            _ = try? await LocalComponents.script("postgres.sh", ["stop", directory.path])
            throw error
        }
        _ = try? await LocalComponents.script("postgres.sh", ["stop", directory.path])
    }

    /// Whether the connection `url` describes is encrypted (PostgreSQL's own view), or why it cannot be made
    /// (`DatabaseClient.check`'s reason, as a service logs it at start).
    func encrypted(_ url: String) async -> Result<Bool, any Error> {
        do {
            let logger = self.logger
            try await DatabaseClient.check(try DatabaseSettings(url: url), logger: logger)
            return .success(
                try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                    var ssl = false
                    for try await value in try await client.query(
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger
                    ).decode(Bool.self) { ssl = value }
                    return ssl
                })
        } catch {
            return .failure(error)
        }
    }

    @Test func verifyFullConnectsOverTLSAndAWrongCAIsRefused() async throws {
        try await withTLSPostgres(certificateFor: "localhost") { port, certificates in
            let ca = certificates.appending(path: "ca.pem").path
            let base = "postgres://postgres@localhost:\(port)/postgres"
            #expect(try await encrypted("\(base)?sslmode=verify-full&sslrootcert=\(ca)").get() == true)
            #expect(try await encrypted("\(base)?sslmode=disable").get() == false, "the same server without TLS")
            // A client certificate signed by the same CA is offered when the server asks.
            let client =
                "sslcert=\(certificates.appending(path: "client.pem").path)&sslkey=\(certificates.appending(path: "client.key").path)"
            #expect(try await encrypted("\(base)?sslmode=verify-full&sslrootcert=\(ca)&\(client)").get() == true)

            let other = try LocalComponents.temporaryDirectory("tls-other")
            defer { try? FileManager.default.removeItem(at: other) }
            try await LocalComponents.script("tls-certs.sh", [other.path, "localhost"])
            let wrongCA = other.appending(path: "ca.pem").path
            for mode in ["verify-full", "verify-ca"] {
                let result = await encrypted("\(base)?sslmode=\(mode)&sslrootcert=\(wrongCA)")
                guard case .failure(let error) = result else {
                    Issue.record("\(mode) with another CA connected")
                    continue
                }
                #expect(
                    String(reflecting: error).lowercased().contains("certificate"),
                    "a clear error: \(String(reflecting: error))")
            }
        }
    }

    @Test func verifyFullRefusesACertificateForAnotherHost() async throws {
        try await withTLSPostgres(certificateFor: "db.example") { port, certificates in
            let ca = certificates.appending(path: "ca.pem").path
            let base = "postgres://postgres@localhost:\(port)/postgres"
            let result = await encrypted("\(base)?sslmode=verify-full&sslrootcert=\(ca)")
            guard case .failure(let error) = result else {
                Issue.record("verify-full connected to localhost with a certificate for db.example")
                return
            }
            #expect(
                String(reflecting: error).lowercased().contains("certificate"),
                "a clear error: \(String(reflecting: error))")
            // The chain is right, only the name is not: verify-ca connects.
            let chainOnly = await encrypted("\(base)?sslmode=verify-ca&sslrootcert=\(ca)")
            #expect((try? chainOnly.get()) == true, "\(chainOnly)")
        }
    }
}
