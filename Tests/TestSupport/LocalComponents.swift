public import Foundation
import Glibc
import RdKafka
import Synchronization

/// Real components for tests, started by the project's own scripts in `deploy/local/` on loopback.
public enum LocalComponents {
    /// The repository root.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a `deploy/local` script and returns its standard output (trimmed unless `trimmed` is false).
    @discardableResult
    public static func script(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], trimmed: Bool = true
    ) async throws -> String {
        let result = try await Program.run(
            URL(fileURLWithPath: "/bin/bash"),
            [repositoryRoot.appendingPathComponent("deploy/local/\(name)").path] + arguments,
            environment: environment, errors: .separate)
        guard result.status == 0 else {
            throw LocalComponentError(
                description: "deploy/local/\(name) \(arguments.joined(separator: " ")) exited \(result.status): "
                    + String(result.errors.suffix(2000)))
        }
        return trimmed ? result.output.trimmingCharacters(in: .whitespacesAndNewlines) : result.output
    }

    /// The project's tools Python (`deploy/local/env.sh`): its virtual environment also holds the tools' commands.
    public static var toolsPython: String {
        ProcessInfo.processInfo.environment["APPSTORE_TOOLS_PYTHON"]
            ?? repositoryRoot.appendingPathComponent(".build-tools/venv/bin/python").path
    }

    /// Runs a Python script of the repository with the project's tools Python (`deploy/local/env.sh`);
    /// returns its exit status and standard output.
    public static func python(_ script: String, _ arguments: [String]) async throws -> (Int32, String) {
        let result = try await Program.run(
            URL(fileURLWithPath: Self.toolsPython), [repositoryRoot.appendingPathComponent(script).path] + arguments,
            errors: .discarded)
        return (result.status, result.output)
    }

    /// The ports ``freePortBelowEphemeralRange()`` handed out in this process: never handed out twice, so two
    /// tests running in parallel never both pick one before either binds it.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A TCP port on 127.0.0.1 that is free now and below the ephemeral range (20000–32767), so the kernel
    /// never hands it to an outgoing connection or to another test's `bind(0)`, and that no other test of this
    /// process got (a service that lost its port to another server would be answered for by that server).
    public static func freePortBelowEphemeralRange() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20000...32767)
            guard Self.handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { continue }
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound == 0 { return port }
        }
        throw LocalComponentError(description: "no free port below the ephemeral range")
    }

    /// A new temporary directory.
    public static func temporaryDirectory(_ prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Fails unless the loaded librdkafka can talk to Tansu (2.2 or newer, from `deploy/local/env.sh`).
    public static func requireModernLibrdkafka() throws {
        let version = KafkaRuntime.librdkafkaVersion
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2, parts[0] > 2 || (parts[0] == 2 && parts[1] >= 2) else {
            throw LocalComponentError(
                description:
                    "librdkafka \(version) is loaded; Tansu needs 2.2 or newer: run the tests through deploy/local/test.sh "
                    + "(or `source deploy/local/env.sh` first)")
        }
    }
}

/// A local component that would not start or stop.
public struct LocalComponentError: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `body`, then `cleanUp` whether the body returned or threw (an awaited `defer`), and returns or rethrows
/// the body's outcome.
func withCleanUp<T>(_ body: () async throws -> T, cleanUp: () async -> Void) async throws -> T {
    let outcome: Result<T, any Error>
    do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
    await cleanUp()
    return try outcome.get()
}

/// A Tansu broker of its own for one test, stopped when the body returns or throws.
public func withLocalBroker<T>(_ body: (_ bootstrapServers: String) async throws -> T) async throws -> T {
    try await withStoppableLocalBroker { bootstrap, _ in try await body(bootstrap) }
}

/// A Tansu broker of its own that the body can stop early (to test what happens when the broker is gone).
public func withStoppableLocalBroker<T>(
    _ body: (_ bootstrapServers: String, _ stop: @Sendable () async -> Void) async throws -> T
) async throws -> T {
    try LocalComponents.requireModernLibrdkafka()
    let directory = try LocalComponents.temporaryDirectory("tansu")
    let bootstrap = try await LocalComponents.script("broker.sh", ["start", directory.path])
    let path = directory.path
    return try await withCleanUp {
        try await body(bootstrap) { _ = try? await LocalComponents.script("broker.sh", ["stop", path]) }
    } cleanUp: {
        _ = try? await LocalComponents.script("broker.sh", ["stop", path])
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A Tansu broker of its own whose process the body may freeze (SIGSTOP) and thaw (SIGCONT): the broker keeps
/// its in-memory data, as a broker stalled by its host would.
public func withFreezableLocalBroker<T>(_ body: (_ bootstrapServers: String, _ pid: Int32) async throws -> T)
    async throws -> T
{
    try LocalComponents.requireModernLibrdkafka()
    let directory = try LocalComponents.temporaryDirectory("tansu")
    let bootstrap = try await LocalComponents.script("broker.sh", ["start", directory.path])
    let path = directory.path
    let pid =
        Int32(
            try String(contentsOf: directory.appendingPathComponent("tansu.pid"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    return try await withCleanUp {
        try await body(bootstrap, pid)
    } cleanUp: {
        kill(pid, SIGCONT)
        _ = try? await LocalComponents.script("broker.sh", ["stop", path])
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Freezes a process (SIGSTOP) and returns once the kernel reports it stopped (state `T` in `/proc/PID/stat`):
/// a signal is delivered asynchronously, and a broker still running for a moment could acknowledge one more
/// message. The bound is a number of pauses (`looks`, 10 ms each, with a look before and after each: ``Polling``),
/// not a wall-clock deadline. Returns false when the process was not seen stopped in any of them.
@discardableResult
public func freezeProcess(_ pid: Int32, looks: Int = 1_000) async throws -> Bool {
    kill(pid, SIGSTOP)
    return try await Polling.until(looks: looks + 1, every: .milliseconds(10)) { isStopped(pid) }
}

/// Whether the kernel reports the process stopped by a signal (state `T` in `/proc/PID/stat`).
private func isStopped(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return false }
    return stat[stat.index(after: close)...].split(separator: " ").first == "T"
}

/// A PostgreSQL server of its own with `fsync=on` (a crash is a real crash) that the body can crash
/// (`pg_ctl stop -m immediate`) and start again on the same port. The port lies below the kernel's ephemeral
/// range, so no outgoing connection or `bind(0)` of a parallel test can take it while the server is down.
public func withCrashablePostgres<T>(
    _ body: (_ databaseURL: String, _ server: CrashablePostgres) async throws -> T
) async throws -> T {
    let directory = try LocalComponents.temporaryDirectory("postgres")
    let server = CrashablePostgres(directory: directory, port: try LocalComponents.freePortBelowEphemeralRange())
    let url = try await server.start()
    return try await withCleanUp {
        try await body(url, server)
    } cleanUp: {
        _ = try? await LocalComponents.script("postgres.sh", ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A durable throwaway PostgreSQL server on a fixed port: started, crashed and started again by a test.
public struct CrashablePostgres: Sendable {
    let directory: URL
    let port: Int

    /// Starts it (crash recovery runs first after a crash) and returns its URL once it accepts connections.
    @discardableResult
    public func start() async throws -> String {
        try await LocalComponents.script(
            "postgres.sh", ["start", self.directory.path, String(self.port)], environment: ["POSTGRES_FSYNC": "on"])
    }

    /// Stops it the hard way: no checkpoint, every connection cut.
    public func crash() async throws {
        try await LocalComponents.script("postgres.sh", ["crash", self.directory.path])
    }
}

/// A PostgreSQL server of its own for one test (a throwaway cluster, fsync off), stopped when the body
/// returns or throws. The body gets the `postgres://` URL.
public func withLocalPostgres<T>(_ body: (_ databaseURL: String) async throws -> T) async throws -> T {
    try await withLocalPostgresDirectory { url, _ in try await body(url) }
}

/// ``withLocalPostgres(_:)`` that also gives the server's directory (for `postgres.sh dump-schema`).
public func withLocalPostgresDirectory<T>(_ body: (_ databaseURL: String, _ directory: URL) async throws -> T)
    async throws -> T
{
    let directory = try LocalComponents.temporaryDirectory("postgres")
    let url = try await LocalComponents.script("postgres.sh", ["start", directory.path])
    return try await withCleanUp {
        try await body(url, directory)
    } cleanUp: {
        _ = try? await LocalComponents.script("postgres.sh", ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}
