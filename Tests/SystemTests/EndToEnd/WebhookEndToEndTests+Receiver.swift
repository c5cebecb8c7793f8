@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

// MARK: - The receiver

/// The Python receiver as a process: started and stopped on one port, with the secrets it verifies with and the log of
/// what it received.
final class Receiver: @unchecked Sendable {
    /// One request the receiver logged.
    struct Request {
        var path: String
        var id: String
        var verified: Bool
        /// Refused because it verified only with a secret the path had retired (sent before the dispatcher read the
        /// rotation).
        var signedWithRetiredSecret: Bool
        /// The status answered, or `slow` (answered after the dispatcher stopped waiting).
        var answer: String
        var body: String
        var eventType: String?
        var subject: String?
        var sequence: Int?
        /// How many signatures the delivery carried (two during a rotation's overlap).
        var signatures: Int
    }

    let port: Int
    let secrets: URL
    let log: URL
    private var process: Process?
    /// The receiver's process while it runs.
    var running: Process? { self.process }

    /// The shares of deliveries answered 500 and too late (0 and 0: every verified delivery is answered 200).
    let failShare: Double, slowShare: Double

    init(directory: URL, failShare: Double = 0.3, slowShare: Double = 0.05) throws {
        self.failShare = failShare
        self.slowShare = slowShare
        self.port = try LocalComponents.freePortBelowEphemeralRange()
        self.secrets = directory.appendingPathComponent("webhook-secrets.json")
        self.log = directory.appendingPathComponent("webhook-receiver.jsonl")
        try Data("{}".utf8).write(to: self.secrets)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(self.port)\(path)" }

    /// Starts the receiver and waits until it answers.
    func start(http: HTTPClient) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: LocalComponents.toolsPython)
        process.arguments = [
            LocalComponents.repositoryRoot.appendingPathComponent("Tests/Contract/webhook_receiver.py").path,
            String(self.port), self.secrets.path, self.log.path, "--fail-share", String(self.failShare), "--slow-share",
            String(self.slowShare),
            "--slow-seconds", "2",
        ]
        // Its own output (a slow answer's broken pipe, once the dispatcher stopped waiting) goes beside its log.
        let output = self.log.deletingPathExtension().appendingPathExtension("out")
        if !FileManager.default.fileExists(atPath: output.path) {
            FileManager.default.createFile(atPath: output.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: output)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        self.process = process
        let answered = try await Polling.until(looks: 200, every: .milliseconds(100)) {
            (try? await http.execute(HTTPClientRequest(url: self.url("/")), timeout: .seconds(1))) != nil
        }
        guard answered else { throw ReceiverError("the receiver did not start on \(self.port)") }
    }

    /// Stops the receiver (its port refuses connections until it starts again): SIGKILL (a child of the test process
    /// inherits its blocked SIGTERM), then waits without holding a thread until it is gone.
    func stop() async {
        guard let process = self.process else { return }
        await ServiceProcess.kill(process)
        self.process = nil
    }

    /// Writes the secrets each path verifies with, and those it has dropped (`retired`).
    func setSecrets(_ secrets: [String: [String]], retired: [String: [String]] = [:]) throws {
        var file: [String: Any] = secrets
        file["retired"] = retired
        try JSONSerialization.data(withJSONObject: file).write(to: self.secrets, options: .atomic)
    }

    /// Every request logged so far, in arrival order.
    func requests() async throws -> [Request] {
        guard let text = try? String(contentsOf: self.log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let row = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let path = row["path"] as? String, let body = row["body"] as? String
            else { return nil }
            let event = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
            let answer = (row["answer"] as? String) ?? (row["answer"] as? Int).map(String.init) ?? "?"
            return Request(
                path: path, id: row["id"] as? String ?? "", verified: row["verified"] as? Bool ?? false,
                signedWithRetiredSecret: row["retired"] as? Bool ?? false,
                answer: answer, body: body, eventType: event?["eventType"] as? String,
                subject: event?["subject"] as? String, sequence: event?["sequence"] as? Int,
                signatures: row["signatures"] as? Int ?? 0)
        }
    }

    /// Whether `/ok` accepts `count` deliveries within two minutes.
    func waitUntil(accepted count: Int) async throws -> Bool {
        try await Polling.until(looks: 1200, every: .milliseconds(100)) {
            try await self.accepted("/ok").count >= count
        }
    }

    /// The requests to `path` answered 200 in time, in arrival order.
    func accepted(_ path: String) async throws -> [Request] {
        try await self.requests().filter { $0.path == path && $0.answer == "200" }
    }
}

struct ReceiverError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - The admin routes

/// customer-api's webhook routes with an admin key.
struct Admin {
    let base: String
    let app: String
    let key: String
    let http: HTTPClient

    /// A registered endpoint: its id and first secret.
    struct Registered {
        var endpointId: String
        var secret: String
    }

    func register(url: String, concurrency: Int) async throws -> Registered {
        let answer = try await self.post(
            "webhooks", ["url": url, "environment": "Production", "concurrency": concurrency])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        #expect(answer.status == 201, "\(answer.body)")
        let endpoint = try #require(object["endpoint"] as? [String: Any])
        return Registered(
            endpointId: try #require(endpoint["id"] as? String), secret: try #require(object["secret"] as? String))
    }

    func rotate(_ endpointId: String) async throws -> String {
        let answer = try await self.post("webhooks/\(endpointId)/secrets", ["overlapSeconds": 3600])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        return try #require(object["secret"] as? String)
    }

    func endpoint(_ endpointId: String) async throws -> [String: Any] {
        let answer = try await self.get("webhooks/\(endpointId)")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }

    func deliveries(_ endpointId: String, query: String) async throws -> [[String: Any]] {
        let answer = try await self.get("webhooks/\(endpointId)/deliveries?\(query)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        return object["deliveries"] as? [[String: Any]] ?? []
    }

    func get(_ path: String) async throws -> (status: Int, body: String) {
        try await self.call(.GET, path, body: nil)
    }

    func post(_ path: String, _ body: [String: Any]) async throws -> (status: Int, body: String) {
        try await self.call(.POST, path, body: try JSONSerialization.data(withJSONObject: body))
    }

    private func call(_ method: HTTPMethod, _ path: String, body: Data?) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: "\(self.base)/v1/admin/apps/\(self.app)/\(path)")
        request.method = method
        request.headers.add(name: "authorization", value: "Bearer \(self.key)")
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await self.http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }
}
