import Foundation

/// `deploy/local/trace-collector.py` as a process of its own: an OTLP/HTTP JSON receiver the services export their
/// spans to, one JSON line per span in a file the test reads.
public final class TraceCollector: Sendable {
    /// One exported span.
    public struct Span: Decodable, Sendable {
        public var service: String
        public var traceId: String
        public var spanId: String
        public var parentSpanId: String
        public var name: String
        public var startNs: Int64
        public var endNs: Int64
    }

    public let port: Int
    public let file: URL
    private let process: Process

    /// Starts the receiver on a free port, writing into `directory`.
    public init(directory: URL) throws {
        self.port = try LocalComponents.freePortBelowEphemeralRange()
        self.file = directory.appending(path: "spans.jsonl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            LocalComponents.repositoryRoot.appending(path: "deploy/local/trace-collector.py").path, "serve",
            String(self.port), self.file.path,
        ]
        // Never the test's own output: a pipe held open by a child keeps `swift test` waiting at the end.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    /// The variables that make a service export its spans here, promptly.
    public var environment: [String: String] {
        [
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(self.port)", "OTEL_BSP_SCHEDULE_DELAY": "200",
        ]
    }

    /// Every span received so far.
    public func spans() throws -> [Span] {
        guard let data = FileManager.default.contents(atPath: self.file.path) else { return [] }
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(Span.self, from: Data($0)) }
    }

    /// Stops the receiver (SIGTERM ends it at once; nothing waits on a thread for it).
    public func stop() {
        self.process.terminate()
    }
}
