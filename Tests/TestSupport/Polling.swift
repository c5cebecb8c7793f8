/// Waiting in tests by counting looks, never by a wall-clock deadline: a test process starved of threads on a loaded
/// machine may sleep far longer than it asked, and a deadline then passes before it looked again. A count of looks
/// makes it look as often whatever the load; a slow machine only makes the wait longer.
public enum Polling {
    /// Looks at `condition` up to `looks` times, `interval` apart, the last look after the last pause; whether it
    /// held.
    @discardableResult
    public static func until(
        looks: Int, every interval: Duration, _ condition: () async throws -> Bool
    ) async throws -> Bool {
        for look in 0..<max(1, looks) {
            if look > 0 { try await Task.sleep(for: interval) }
            if try await condition() { return true }
        }
        return false
    }

    /// The number of looks `interval` apart that a wait of `duration` on an idle machine makes.
    public static func looks(in duration: Duration, every interval: Duration) -> Int {
        max(1, Int((duration / interval).rounded(.up)))
    }
}
