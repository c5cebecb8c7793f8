import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl api-keys`: the secret keys app teams call `customer-api` with, one app each. The token is printed
/// once, by `create` and `rotate`; the database keeps only its SHA-256.
struct APIKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys", abstract: "Create, list, rotate and revoke customer-api keys.",
        subcommands: [Create.self, List.self, Rotate.self, Revoke.self])

    /// Runs `body` with a key store on the database the option names.
    static func withStore<T: Sendable>(_ database: DatabaseOption, _ body: @Sendable (APIKeyStore) async throws -> T)
        async throws -> T
    {
        try await database.withClient { client, logger in try await body(APIKeyStore(client: client, logger: logger)) }
    }

    /// A new key and its token, as printed by `create` and `rotate`.
    struct Issued: Encodable {
        var key: APIKey
        var token: String
        var note = "the token is shown only now; store it as a secret"
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key for an app and print its token (once).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The app the key may read and write for.") var bundleId: String
        @Option(help: "A note for operators (who uses the key).") var label = ""
        @Option(help: "Requests per second the key may make (429 with Retry-After above it).") var rate = 100
        @Option(help: "app (the app's own calls) or admin (also the support routes and console of the app).") var role =
            "app"

        func validate() throws {
            guard self.rate > 0 else { throw ValidationError("--rate must be positive") }
            guard ["app", "admin"].contains(self.role) else { throw ValidationError("--role must be app or admin") }
            guard !self.bundleId.isEmpty else { throw ValidationError("--bundle-id must not be empty") }
        }

        func run() async throws {
            let (bundleId, label, rate, role) = (self.bundleId, self.label, self.rate, self.role)
            let issued = try await APIKeysCommand.withStore(self.database) {
                try await $0.create(bundleId: bundleId, label: label, ratePerSecond: rate, role: role)
            }
            try StandardStreams.writeJSONLine(Issued(key: issued.key, token: issued.token))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List keys (never their secrets), one JSON line each.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "Only this app's keys.") var bundleId: String?

        func run() async throws {
            let bundleId = self.bundleId
            for key in try await APIKeysCommand.withStore(self.database, { try await $0.list(bundleId: bundleId) }) {
                try StandardStreams.writeJSONLine(key)
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new key for the same app; the old one keeps working for the grace period, then stops.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The key to rotate.") var keyId: String
        @Option(help: "Seconds the old key keeps working.") var graceSeconds = 3600

        func run() async throws {
            let (keyId, grace) = (self.keyId, Duration.seconds(self.graceSeconds))
            do {
                let issued = try await APIKeysCommand.withStore(self.database) {
                    try await $0.rotate(keyId, grace: grace)
                }
                try StandardStreams.writeJSONLine(Issued(key: issued.key, token: issued.token))
            } catch let error as APIKeyStoreError {
                StandardStreams.writeError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key at once.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The key to revoke.") var keyId: String

        func run() async throws {
            let keyId = self.keyId
            guard try await APIKeysCommand.withStore(self.database, { try await $0.revoke(keyId) }) else {
                StandardStreams.writeError("error: no key \(keyId)")
                throw ExitCode(1)
            }
            StandardStreams.writeOutput("revoked \(keyId)")
        }
    }
}
