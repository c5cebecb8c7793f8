import AsyncHTTPClient
import Foundation
import TestSupport

/// The six services (and retention-messaging) as separate processes of their built binaries, each on its own loopback port, so a
/// test can SIGKILL one mid-way and start it again as an orchestrator would.
actor ServiceFleet {
    static let pipeline = [
        "ingest", "chain-verifier", "entitlement-updater", "refund-resolver", "event-publisher", "customer-api",
    ]

    /// The pipeline's services, and retention-messaging when the environment names its rules.
    let names: [String]
    let environment: [String: String]
    let directory: URL
    let ports: [String: Int]
    private var processes: [String: Process] = [:]
    private(set) var kills: [String] = []
    /// Services the supervisor started again after they exited on their own.
    private(set) var restarts: [String] = []
    private var stopping = false

    /// Chooses a free port per service (unless `ports` names one); `environment` is what every service gets (plus
    /// its `HTTP_PORT`).
    init(environment: [String: String], directory: URL, ports chosen: [String: Int] = [:]) throws {
        self.environment = environment
        self.directory = directory
        self.names = Self.pipeline + (environment["RETENTION_RULES_FILE"] == nil ? [] : ["retention-messaging"])
        var ports = chosen
        for name in self.names where ports[name] == nil {
            ports[name] = try LocalComponents.freePortBelowEphemeralRange()
        }
        self.ports = ports
    }

    var ingestURL: String { "http://127.0.0.1:\(self.ports["ingest"]!)/notifications" }
    var customerAPIURL: String { "http://127.0.0.1:\(self.ports["customer-api"]!)" }
    var retentionURL: String { "http://127.0.0.1:\(self.ports["retention-messaging"] ?? 0)/retention-message" }

    /// Starts a service (again) and waits until it answers `/ready`.
    func start(_ name: String, http: HTTPClient) async throws {
        let environment = self.environment.merging(["HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(self.ports[name]!)]) {
            _, new in new
        }
        self.processes[name] = try ServiceProcess.start(
            name, environment: environment, log: self.directory.appendingPathComponent("\(name).log"))
        let url = "http://127.0.0.1:\(self.ports[name]!)/ready"
        for _ in 0..<300 {
            if (try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(1)))?.status == .ok { return }
            guard self.processes[name]?.isRunning == true else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("\(name) did not become ready: \(self.log(name).suffix(2000))")
    }

    /// Starts again every service whose process exited on its own (a fenced producer, a failed relay), without
    /// waiting for it to be ready, as an orchestrator would.
    func superviseOnce() throws {
        guard !self.stopping else { return }
        for (name, process) in self.processes where !process.isRunning {
            self.restarts.append(name)
            let environment = self.environment.merging([
                "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(self.ports[name]!),
            ]) { _, new in new }
            self.processes[name] = try ServiceProcess.start(
                name, environment: environment, log: self.directory.appendingPathComponent("\(name).log"))
        }
    }

    /// Whether a service answers `/ready` with 503 at least once in `window / 250 ms` looks, 250 ms apart (no
    /// answer does not count: the service must say it). A count of looks, not a deadline: a starved test process
    /// still asks as often. A client of its own: the sim's client queues behind its deliveries to the same
    /// service while they wait on the outage.
    func saysNotReady(_ name: String, within window: Duration) async -> Bool {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(self.ports[name]!)/ready")
        var said = false
        var looks = max(1, Int(window / .milliseconds(250)))
        while !said && looks > 0 {
            looks -= 1
            said = (try? await http.execute(request, timeout: .seconds(2)))?.status == .serviceUnavailable
            if !said { try? await Task.sleep(for: .milliseconds(250)) }
        }
        try? await http.shutdown()
        return said
    }

    /// What a service serves on `/metrics`.
    func metrics(_ name: String, http: HTTPClient) async throws -> String {
        let response = try await http.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(self.ports[name]!)/metrics"), timeout: .seconds(10))
        return String(buffer: try await response.body.collect(upTo: 1 << 24))
    }

    /// Starts every service.
    func startAll(http: HTTPClient) async throws {
        for name in self.names { try await self.start(name, http: http) }
    }

    /// SIGKILLs a service (no shutdown of any kind) and waits until it is gone.
    func kill(_ name: String) async throws {
        guard let process = self.processes[name] else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        self.kills.append(name)
    }

    /// Stops every service with SIGTERM (graceful), SIGKILL after 20 s.
    func stopAll() async {
        self.stopping = true
        for process in self.processes.values where process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(20)
        for process in self.processes.values {
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// What a service wrote.
    func log(_ name: String) -> String {
        (try? String(contentsOf: self.directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
    }
}
