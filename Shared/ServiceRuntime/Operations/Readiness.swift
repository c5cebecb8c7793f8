import Synchronization

/// Whether a service is ready for work (`/ready` answers 200): its own state (``set(_:)``) and every named
/// dependency condition (``set(_:condition:)``: the broker, PostgreSQL) must be true.
public final class Readiness: Sendable {
    private let state = Mutex<(service: Bool, failing: Set<String>)>((false, []))

    /// A service that is not ready yet.
    public init() {}

    /// Marks the service itself ready or not.
    public func set(_ isReady: Bool) {
        self.state.withLock { $0.service = isReady }
    }

    /// Marks a dependency (`condition`) up or down.
    public func set(_ isUp: Bool, condition: String) {
        self.state.withLock { state in
            if isUp { state.failing.remove(condition) } else { state.failing.insert(condition) }
        }
    }

    /// Whether the service is ready.
    public var isReady: Bool { self.state.withLock { $0.service && $0.failing.isEmpty } }

    /// The dependencies that are down now.
    public var failingConditions: Set<String> { self.state.withLock { $0.failing } }
}
