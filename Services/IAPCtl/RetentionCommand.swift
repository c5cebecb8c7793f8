import AppStoreAPI
import AppStoreModels
import ArgumentParser
import Foundation

/// `iapctl retention …`: Retention Messaging's configuration at Apple — messages, images, default messages, the
/// real-time URL — and Apple's performance test of the endpoint (docs/retention.md). Every subcommand names one app
/// (`--app`, default the API's bundle id) and one environment (`--environment`, default Sandbox: Production's URL
/// needs a passed test first).
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract:
            "Manage Retention Messaging: messages, images, default messages, the real-time URL, the performance test.",
        subcommands: [
            Messages.self, Images.self, DefaultMessage.self, RealtimeURL.self, PerformanceTest.self,
        ])

    /// The app and environment every subcommand takes.
    struct Scope: ParsableArguments {
        @Option(help: "The app's bundle id (default: APPSTORE_API_BUNDLE_ID or the first of APPSTORE_APPS).")
        var app: String?
        @Option(help: "Production or Sandbox.") var environment = "Sandbox"

        /// Runs `body` with a client for this app and environment; an API refusal exits 1 with Apple's error.
        func run(_ body: (AppStoreServerAPIClient, Environment) async throws -> Void) async throws {
            guard let environment = Environment(rawValue: self.environment), environment.isAppStoreServer else {
                throw ValidationError("--environment must be Production or Sandbox")
            }
            do {
                try await APIAccess.with(logger: APIAccess.quietLogger) { access in
                    let app = self.app ?? access.client.bundleID
                    let client = try access.client.scoped(bundleID: app, environment: environment)
                    try await body(client, environment)
                }
            } catch let error as AppStoreAPIError {
                StandardStreams.writeError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    /// A UUID argument.
    static func uuid(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw ValidationError("\(text) is not a UUID") }
        return id
    }

    // MARK: Messages

    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "messages", abstract: "Upload, list and delete messages.",
            subcommands: [Upload.self, List.self, Delete.self])

        struct Upload: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Upload a message (then reviewed by Apple).")
            @OptionGroup var scope: Scope
            @Option(help: "The message's identifier (a UUID you choose).") var id: String
            @Option(help: "Header, at most 66 characters.") var header: String
            @Option(help: "Body, at most 144 characters.") var body: String
            @Option(help: "An uploaded image's identifier.") var imageId: String?
            @Option(help: "The image's alternative text (at most 150 characters).") var altText = ""

            func run() async throws {
                let id = try RetentionCommand.uuid(self.id)
                let image = try self.imageId.map {
                    UploadMessageRequestBody.Image(
                        imageIdentifier: try RetentionCommand.uuid($0).uuidString.lowercased(), altText: self.altText)
                }
                try await self.scope.run { client, environment in
                    try await client.uploadMessage(
                        id, UploadMessageRequestBody(header: self.header, body: self.body, image: image),
                        environment: environment)
                    StandardStreams.writeOutput(
                        "uploaded: message \(id.uuidString.lowercased()) (\(environment.rawValue))")
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List messages with their review state.")
            @OptionGroup var scope: Scope
            func run() async throws {
                try await self.scope.run { client, environment in
                    for item in try await client.messageList(environment: environment) {
                        StandardStreams.writeOutput("\(item.messageIdentifier ?? "?")\t\(item.messageState ?? "?")")
                    }
                }
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete a message.")
            @OptionGroup var scope: Scope
            @Option(help: "The message's identifier.") var id: String
            func run() async throws {
                let id = try RetentionCommand.uuid(self.id)
                try await self.scope.run { client, environment in
                    try await client.deleteMessage(id, environment: environment)
                    StandardStreams.writeOutput("deleted: message \(id.uuidString.lowercased())")
                }
            }
        }
    }

    // MARK: Images

    struct Images: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "images", abstract: "Upload, list and delete images.",
            subcommands: [Upload.self, List.self, Delete.self])

        struct Upload: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Upload a PNG image (then reviewed by Apple).")
            @OptionGroup var scope: Scope
            @Option(help: "The image's identifier (a UUID you choose).") var id: String
            @Option(help: "The PNG file.") var file: String
            func run() async throws {
                let id = try RetentionCommand.uuid(self.id)
                guard let png = FileManager.default.contents(atPath: self.file) else {
                    throw ValidationError("cannot read \(self.file)")
                }
                try await self.scope.run { client, environment in
                    try await client.uploadImage(id, png: Array(png), environment: environment)
                    StandardStreams.writeOutput("uploaded: image \(id.uuidString.lowercased()) (\(png.count) bytes)")
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List images with their review state.")
            @OptionGroup var scope: Scope
            func run() async throws {
                try await self.scope.run { client, environment in
                    for item in try await client.imageList(environment: environment) {
                        StandardStreams.writeOutput("\(item.imageIdentifier ?? "?")\t\(item.imageState ?? "?")")
                    }
                }
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete an image no message uses.")
            @OptionGroup var scope: Scope
            @Option(help: "The image's identifier.") var id: String
            func run() async throws {
                let id = try RetentionCommand.uuid(self.id)
                try await self.scope.run { client, environment in
                    try await client.deleteImage(id, environment: environment)
                    StandardStreams.writeOutput("deleted: image \(id.uuidString.lowercased())")
                }
            }
        }
    }

    // MARK: Default message

    struct DefaultMessage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "default", abstract: "Set, show or delete a product's default message in a locale.")
        @OptionGroup var scope: Scope
        @Option(help: "The subscription product.") var product: String
        @Option(help: "The locale, such as en-US.") var locale: String
        @Option(help: "Set this approved message as the default.") var set: String?
        @Flag(help: "Delete the default.") var delete = false

        func run() async throws {
            let message = try self.set.map(RetentionCommand.uuid)
            try await self.scope.run { client, environment in
                if let message {
                    try await client.configureDefaultMessage(
                        productId: self.product, locale: self.locale, messageIdentifier: message,
                        environment: environment)
                    StandardStreams.writeOutput(
                        "default: \(self.product) \(self.locale) → \(message.uuidString.lowercased())")
                } else if self.delete {
                    try await client.deleteDefaultMessage(
                        productId: self.product, locale: self.locale, environment: environment)
                    StandardStreams.writeOutput("deleted: default of \(self.product) \(self.locale)")
                } else {
                    let id = try await client.defaultMessage(
                        productId: self.product, locale: self.locale, environment: environment)
                    StandardStreams.writeOutput("default: \(self.product) \(self.locale) → \(id ?? "none")")
                }
            }
        }
    }

    // MARK: Real-time URL

    struct RealtimeURL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url", abstract: "Set, show or delete the real-time URL Apple calls.")
        @OptionGroup var scope: Scope
        @Option(help: "Set this URL (retention-messaging's https://…/retention-message).") var set: String?
        @Flag(help: "Delete the URL (Apple then shows default messages only).") var delete = false

        func run() async throws {
            try await self.scope.run { client, environment in
                if let url = self.set {
                    try await client.configureRealtimeURL(url, environment: environment)
                    StandardStreams.writeOutput("realtime url (\(environment.rawValue)): \(url)")
                } else if self.delete {
                    try await client.deleteRealtimeURL(environment: environment)
                    StandardStreams.writeOutput("deleted: realtime url (\(environment.rawValue))")
                } else {
                    let url = try await client.realtimeURL(environment: environment)
                    StandardStreams.writeOutput("realtime url (\(environment.rawValue)): \(url ?? "none")")
                }
            }
        }
    }

    // MARK: Performance test

    struct PerformanceTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "performance-test",
            abstract: "Start Apple's performance test of the real-time URL and print its result.",
            discussion: """
                With --original-transaction-id, starts a test (requests about that subscription) and waits for its \
                result; with --request-id, reads a test's result. Exit 0 when the test passed, 1 when it failed or \
                did not finish within --timeout seconds.
                """)
        @OptionGroup var scope: Scope
        @Option(help: "Start a test with requests about this subscription.") var originalTransactionId: String?
        @Option(help: "Read this test's result.") var requestId: String?
        @Option(help: "Seconds to wait for the result.") var timeout = 600

        func run() async throws {
            guard (self.originalTransactionId == nil) != (self.requestId == nil) else {
                throw ValidationError("give exactly one of --original-transaction-id and --request-id")
            }
            var passed = false
            try await self.scope.run { client, environment in
                var id = self.requestId ?? ""
                if let original = self.originalTransactionId {
                    let started = try await client.initiatePerformanceTest(
                        originalTransactionId: original, environment: environment)
                    id = started.requestId ?? ""
                    let config = started.config
                    StandardStreams.writeOutput(
                        "started: performance test \(id): \(config?.totalRequests ?? 0) requests, at most "
                            + "\(config?.maxConcurrentRequests ?? 0) at once, over \(config?.totalDuration ?? 0) ms; "
                            + "an answer counts within \(config?.responseTimeThreshold ?? 0) ms; "
                            + "passing needs \(config?.successRateThreshold ?? 0)% of them")
                }
                let deadline = ContinuousClock.now + .seconds(self.timeout)
                var result = try await client.performanceTestResult(id, environment: environment)
                while result.result == "PENDING" && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .seconds(1))
                    result = try await client.performanceTestResult(id, environment: environment)
                }
                StandardStreams.writeOutput(Self.summary(result))
                passed = result.result == "PASS"
            }
            if !passed { throw ExitCode(1) }
        }

        /// One line of Apple's result: verdict, success rate, percentiles and failures.
        static func summary(_ result: PerformanceTestResultResponse) -> String {
            let times = result.responseTimes
            let failures = (result.failures ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            return "result: \(result.result ?? "?"), success rate \(result.successRate.map { "\($0)%" } ?? "?"), "
                + "response times ms: average \(times?.average ?? 0), p50 \(times?.p50 ?? 0), p90 \(times?.p90 ?? 0), "
                + "p95 \(times?.p95 ?? 0), p99 \(times?.p99 ?? 0); failures: "
                + (failures.isEmpty ? "none" : failures.joined(separator: ", "))
        }
    }
}
