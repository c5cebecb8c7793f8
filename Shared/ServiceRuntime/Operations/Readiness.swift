import Synchronization

/// Whether a service is ready for work (`/ready` answers 200) — set once its dependencies are up.
public final class Readiness: Sendable {
    private let ready = Atomic<Bool>(false)

    /// A service that is not ready yet.
    public init() {}

    /// Marks the service ready or not.
    public func set(_ isReady: Bool) {
        self.ready.store(isReady, ordering: .releasing)
    }

    /// Whether the service is ready.
    public var isReady: Bool { self.ready.load(ordering: .acquiring) }
}
