public import AsyncHTTPClient
public import Foundation

/// The six services (and retention-messaging), or a chosen few, as separate processes of their built binaries, each on
/// its own loopback port: how every test runs a service, and how a test SIGKILLs one mid-way and starts it again as an
/// orchestrator would. A service may run as several
/// replicas: instances `name`, `name#2`, `name#3`… of the same binary, each with its own port.
public actor ServiceFleet {
    public static let pipeline = [
        "ingest", "chain-verifier", "entitlement-updater", "refund-resolver", "event-publisher", "customer-api",
    ]

    /// The instances: the pipeline's services (with their replicas), and retention-messaging when the
    /// environment names its rules.
    public private(set) var names: [String]
    public let environment: [String: String]
    public let directory: URL
    public private(set) var ports: [String: Int]
    private var processes: [String: Process] = [:]
    public private(set) var kills: [String] = []
    /// Instances stopped with SIGTERM that exited by themselves.
    public private(set) var terminations: [String] = []
    /// Services the supervisor started again after they exited on their own.
    public private(set) var restarts: [String] = []
    private var stopping = false
    /// Instances a caller is killing right now: the supervisor leaves them alone (the actor is reentrant while the
    /// caller waits for the process to go, and a restart then would be a process nobody stops).
    private var held: Set<String> = []

    /// Chooses a free port per instance (unless `ports` names one); `replicas` says how many instances a service
    /// runs (1 unless named); `environment` is what every instance gets (plus its `HTTP_PORT`); `only` names the
    /// services to run when a test needs fewer than the whole pipeline.
    public init(
        environment: [String: String], directory: URL, ports chosen: [String: Int] = [:], replicas: [String: Int] = [:],
        only: [String]? = nil
    )
        throws
    {
        self.environment = environment
        self.directory = directory
        let services =
            only ?? (Self.pipeline + (environment["RETENTION_RULES_FILE"] == nil ? [] : ["retention-messaging"]))
        self.names = services.flatMap { name in
            (1...max(1, replicas[name] ?? 1)).map { Self.instance(name, $0) }
        }
        var ports = chosen
        for name in self.names where ports[name] == nil {
            ports[name] = try LocalComponents.freePortBelowEphemeralRange()
        }
        self.ports = ports
    }

    /// The name of a service's `number`th instance (`name` for the first).
    public static func instance(_ service: String, _ number: Int) -> String {
        number == 1 ? service : "\(service)#\(number)"
    }

    /// The service (binary) an instance runs.
    public static func service(of instance: String) -> String {
        String(instance.split(separator: "#").first ?? Substring(instance))
    }

    public var ingestURL: String { "http://127.0.0.1:\(self.ports["ingest"]!)/notifications" }
    /// Every running ingest instance's URL (what a load balancer in front of them spreads over).
    public var ingestURLs: [String] {
        self.names.filter { Self.service(of: $0) == "ingest" && self.processes[$0]?.isRunning != false }
            .map { "http://127.0.0.1:\(self.ports[$0]!)/notifications" }
    }
    public var customerAPIURL: String { "http://127.0.0.1:\(self.ports["customer-api"]!)" }
    /// Where customer-api serves its support routes and console: its admin port when the environment names one.
    public var customerAPIAdminURL: String {
        self.environment["CUSTOMER_API_ADMIN_PORT"].map { "http://127.0.0.1:\($0)" } ?? self.customerAPIURL
    }
    public var retentionURL: String { "http://127.0.0.1:\(self.ports["retention-messaging"] ?? 0)/retention-message" }

    /// The instances of a service, in the order they were added.
    public func instances(of service: String) -> [String] {
        self.names.filter { Self.service(of: $0) == service }
    }

    /// Starts an instance (again) and waits until it answers `/ready`.
    public func start(_ name: String, http: HTTPClient = .shared) async throws {
        self.processes[name] = try ServiceProcess.start(
            Self.service(of: name), environment: self.environment(of: name),
            log: self.directory.appendingPathComponent("\(name).log"))
        let url = "http://127.0.0.1:\(self.ports[name]!)/ready"
        for _ in 0..<300 {
            if (try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(1)))?.status == .ok { return }
            guard self.processes[name]?.isRunning == true else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ServiceFleetError("\(name) did not become ready: \(self.log(name).suffix(2000))")
    }

    /// What an instance runs with: the fleet's environment, its own port and only its service's record keys (as
    /// deploy/secret-access.yaml gives them), on every start and restart alike.
    private func environment(of name: String) -> [String: String] {
        self.environment.merging(
            TestRecordSigning.environment(service: Self.service(of: name)).merging([
                "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(self.ports[name]!),
            ]) { _, new in new }
        ) { _, new in new }
    }

    /// Adds one more instance of a running service (a scale-out), started and ready; returns its name.
    public func addReplica(of service: String, http: HTTPClient) async throws -> String {
        let name = Self.instance(service, self.instances(of: service).count + 1)
        self.names.append(name)
        self.ports[name] = try LocalComponents.freePortBelowEphemeralRange()
        try await self.start(name, http: http)
        return name
    }

    /// Starts again every service whose process exited on its own (a fenced producer, a failed relay), without
    /// waiting for it to be ready, as an orchestrator would.
    public func superviseOnce() throws {
        guard !self.stopping else { return }
        for (name, process) in self.processes where !process.isRunning && !self.held.contains(name) {
            self.restarts.append(name)
            self.processes[name] = try ServiceProcess.start(
                Self.service(of: name), environment: self.environment(of: name),
                log: self.directory.appendingPathComponent("\(name).log"))
        }
    }

    /// Whether a service answers `/ready` with 503 at least once in `window / 250 ms` looks, 250 ms apart (no
    /// answer does not count: the service must say it). A count of looks, not a deadline: a starved test process
    /// still asks as often. A client of its own: the sim's client queues behind its deliveries to the same
    /// service while they wait on the outage.
    public func saysNotReady(_ name: String, within window: Duration) async -> Bool {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(self.ports[name]!)/ready")
        let said =
            (try? await Polling.until(looks: Int(window / .milliseconds(250)), every: .milliseconds(250)) {
                (try? await http.execute(request, timeout: .seconds(2)))?.status == .serviceUnavailable
            }) ?? false
        try? await http.shutdown()
        return said
    }

    /// Waits until instance `name` says on `/metrics` (`kafka_consumer_assigned_partitions{group}`) that its member of
    /// `group` holds at least `partitions` partitions: it has joined its group, so what is produced next is consumed
    /// without waiting for a join. Ready (`/ready`) means its loop runs, not that it holds any partition (a replica
    /// beyond the partition count never does). Up to `looks` looks 250 ms apart (a count, not a deadline); throws
    /// with the end of its log when it never did.
    public func waitUntilAssigned(
        _ name: String, group: String, partitions: Int, http: HTTPClient, looks: Int = 480
    ) async throws {
        let prefix = #"kafka_consumer_assigned_partitions{group=""# + group + #""} "#
        let assigned = try await Polling.until(looks: looks, every: .milliseconds(250)) { @Sendable in
            guard let metrics = try? await self.metrics(name, http: http),
                let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                let count = Double(line.dropFirst(prefix.count))
            else { return false }
            return count >= Double(partitions)
        }
        guard assigned else {
            throw ServiceFleetError(
                "\(name) holds fewer than \(partitions) partitions of \(group): \(self.log(name).suffix(2000))")
        }
    }

    /// What a service serves on `/metrics`.
    public func metrics(_ name: String, http: HTTPClient) async throws -> String {
        let response = try await http.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(self.ports[name]!)/metrics"), timeout: .minutes(1))
        return String(buffer: try await response.body.collect(upTo: 1 << 24))
    }

    /// Starts every service.
    public func startAll(http: HTTPClient = .shared) async throws {
        for name in self.names { try await self.start(name, http: http) }
    }

    /// SIGKILLs an instance (no shutdown of any kind) and waits until it is gone.
    public func kill(_ name: String) async {
        guard let process = self.processes[name] else { return }
        self.held.insert(name)
        defer { self.held.remove(name) }
        await ServiceProcess.kill(process)
        self.kills.append(name)
    }

    /// Removes an instance for good (a scale-in, or a replica lost without replacement): SIGTERM, as an
    /// orchestrator stops a pod, then waits for it to exit by itself (SIGKILL only after 600 looks 100 ms apart,
    /// which fails the caller's check); or SIGKILL when `graceful` is false. Either way nothing starts it again.
    public func remove(_ name: String, graceful: Bool) async {
        // Out of the fleet before any wait, so nothing (the supervisor) starts it again while it goes: a restart there
        // once outlived the run, the fleet no longer knowing it.
        guard let process = self.processes.removeValue(forKey: name) else { return }
        self.names.removeAll { $0 == name }
        guard graceful else {
            await ServiceProcess.kill(process)
            self.kills.append(name)
            return
        }
        if await ServiceProcess.stop(process, looks: 600, interval: .milliseconds(100)) != nil {
            self.terminations.append(name)
        }
    }

    /// Stops every service at once with SIGTERM (graceful), each SIGKILLed after 400 looks 50 ms apart.
    public func stopAll() async {
        self.stopping = true
        await withTaskGroup(of: Void.self) { group in
            for process in self.processes.values {
                group.addTask { await ServiceProcess.stop(process) }
            }
        }
    }

    /// What a service wrote.
    public func log(_ name: String) -> String {
        (try? String(contentsOf: self.directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
    }
}

/// A service of the fleet did not become ready (with the end of its log).
public struct ServiceFleetError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

// MARK: - Running

extension ServiceFleet {
    /// Starts every instance, runs `body` while they run, and stops them all (SIGTERM) whether `body` returned or
    /// threw: the one way a test runs services around its checks.
    nonisolated(nonsending) public func whileRunning<T>(http: HTTPClient = .shared, _ body: () async throws -> T)
        async throws -> T
    {
        do {
            try await self.startAll(http: http)
            let result = try await body()
            await self.stopAll()
            return result
        } catch {
            await self.stopAll()
            throw error
        }
    }
}
