import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `iapctl webhooks …`: webhook endpoints through customer-api's admin routes (`/v1/admin/apps/{bundleId}/webhooks…`)
/// with an admin key: register one (its secret is printed once), list them, add a secret, enable one the dispatcher
/// disabled, read the delivery log, and replay one delivery or a time range. Prints customer-api's JSON answer; a
/// refusal exits 1 with it on stderr.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Register webhook endpoints, rotate secrets, read the delivery log, replay.",
        subcommands: [Create.self, List.self, RotateSecret.self, Enable.self, Deliveries.self, Replay.self])

    /// Where the admin routes are and with which key.
    struct Access: ParsableArguments {
        @Option(help: "customer-api's admin address (default: CUSTOMER_API_ADMIN_URL).") var apiURL: String?
        @Option(help: "An admin key, ck_… (default: CUSTOMER_API_ADMIN_KEY).") var key: String?
        @Option(help: "The app's bundle id.") var app: String

        /// Sends a request to `path` under the app's webhooks; prints the answer, or exits 1 with it.
        func call(_ method: HTTPMethod, _ path: String = "", body: [String: Any]? = nil) async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let base = self.apiURL ?? environment["CUSTOMER_API_ADMIN_URL"] else {
                throw ValidationError("--api-url or CUSTOMER_API_ADMIN_URL is required")
            }
            guard let key = self.key ?? environment["CUSTOMER_API_ADMIN_KEY"] else {
                throw ValidationError("--key or CUSTOMER_API_ADMIN_KEY is required")
            }
            var request = HTTPClientRequest(url: "\(base)/v1/admin/apps/\(self.app)/webhooks\(path)")
            request.method = method
            request.headers.add(name: "authorization", value: "Bearer \(key)")
            if let body {
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
            }
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let outcome: (UInt, String)
            do {
                let response = try await http.execute(request, timeout: .seconds(30))
                outcome = (response.status.code, String(buffer: try await response.body.collect(upTo: 16 << 20)))
                try await http.shutdown()
            } catch {
                try? await http.shutdown()
                StandardStreams.writeError("error: customer-api did not answer: \(error)")
                throw ExitCode(1)
            }
            guard (200..<300).contains(outcome.0) else {
                StandardStreams.writeError("error: \(outcome.0) \(outcome.1)")
                throw ExitCode(1)
            }
            print(outcome.1)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an endpoint (https, public); prints it with its secret, shown this once.")
        @OptionGroup var access: Access
        @Option(help: "The endpoint's URL.") var url: String
        @Option(help: "Production, Sandbox, Xcode or LocalTesting.") var environment = "Production"
        @Option(help: "Event types to deliver, comma-separated (default: every type).") var eventTypes: String?
        @Option(help: "Deliveries per second at most (1–1000).") var ratePerSecond = 50
        @Option(help: "Deliveries in flight at most (1–64).") var concurrency = 4

        func run() async throws {
            var body: [String: Any] = [
                "url": self.url, "environment": self.environment, "ratePerSecond": self.ratePerSecond,
                "concurrency": self.concurrency,
            ]
            if let types = self.eventTypes {
                body["eventTypes"] = types.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            try await self.access.call(.POST, body: body)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The app's endpoints: filters, limits, secrets' ids and expiries, pending deliveries, disabled.")
        @OptionGroup var access: Access
        @Option(help: "Only this environment.") var environment: String?

        func run() async throws {
            try await self.access.call(.GET, self.environment.map { "?environment=\($0)" } ?? "")
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Add a secret (printed once); the older ones keep signing for the overlap.")
        @OptionGroup var access: Access
        @Argument(help: "The endpoint's id (we_…).") var endpointId: String
        @Option(help: "Seconds the older secrets keep signing (0–604800).") var overlapSeconds = 86_400

        func run() async throws {
            try await self.access.call(
                .POST, "/\(self.endpointId)/secrets", body: ["overlapSeconds": self.overlapSeconds])
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable an endpoint the dispatcher disabled; its backlog is delivered.")
        @OptionGroup var access: Access
        @Argument(help: "The endpoint's id (we_…).") var endpointId: String

        func run() async throws {
            try await self.access.call(.POST, "/\(self.endpointId)/enable")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The delivery log, newest first: each delivery's attempts, status, latency and response.")
        @OptionGroup var access: Access
        @Argument(help: "The endpoint's id (we_…).") var endpointId: String
        @Option(help: "pending or delivered.") var state: String?
        @Option(help: "Created at or after (ISO 8601).") var from: String?
        @Option(help: "Created before (ISO 8601).") var to: String?
        @Option(help: "At most this many (1–500).") var limit = 100

        func run() async throws {
            var query = ["limit=\(self.limit)"]
            if let state = self.state { query.append("state=\(state)") }
            if let from = self.from { query.append("from=\(from)") }
            if let to = self.to { query.append("to=\(to)") }
            try await self.access.call(.GET, "/\(self.endpointId)/deliveries?" + query.joined(separator: "&"))
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send again one delivery (--delivery) or those created in a range (--from, --to).")
        @OptionGroup var access: Access
        @Argument(help: "The endpoint's id (we_…).") var endpointId: String
        @Option(help: "A delivery's id from the log.") var delivery: Int?
        @Option(help: "Created at or after (ISO 8601).") var from: String?
        @Option(help: "Created before (ISO 8601).") var to: String?

        func validate() throws {
            guard (self.delivery != nil) != (self.from != nil && self.to != nil) else {
                throw ValidationError("give --delivery, or --from and --to")
            }
        }

        func run() async throws {
            let body: [String: Any] =
                if let delivery = self.delivery { ["deliveryId": delivery] } else {
                    ["from": self.from ?? "", "to": self.to ?? ""]
                }
            try await self.access.call(.POST, "/\(self.endpointId)/replay", body: body)
        }
    }
}
