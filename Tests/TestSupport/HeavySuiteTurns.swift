import Foundation
public import Testing

// MARK: - The trait

/// Marks a suite that runs the whole pipeline (every service, a broker, PostgreSQL and the sim with hundreds of
/// customers, or a load made to saturate a service): at most `TEST_HEAVY_SUITES` such suites (2 by default) run at a
/// time, and the others wait for their turn before their first test starts.
///
/// Swift Testing shuffles the suites, so without turns how many whole pipelines shared the two cores was chance: a
/// fresh-clone run of 2026-12-05 had enough of them at once that `RetentionEndToEndTests`, which passed its checks,
/// ran past its 8-minute `.timeLimit`. The wait is taken around the suite, where no time limit counts (a test case's
/// limit counts only its own body), and outside `TEST_PARALLELISM`'s slots, so lighter tests run while it lasts.
public struct HeavySuiteTrait: SuiteTrait, TestScoping {
    /// Taken once, around the suite, never again around each test.
    public var isRecursive: Bool { false }

    /// Scopes the suite only: its tests run inside the turn the suite holds.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? self : nil
    }

    /// Runs the suite's tests within one turn.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavySuiteTurns.shared.withTurn(function)
    }
}

extension Trait where Self == HeavySuiteTrait {
    /// A suite that runs the whole pipeline and takes turns with the others that do (``HeavySuiteTrait``).
    public static var heavy: Self { HeavySuiteTrait() }
}

// MARK: - The turns

/// A counting gate, first come first served, for the suites marked ``HeavySuiteTrait``.
public actor HeavySuiteTurns {
    /// The one gate of the test process, as wide as `TEST_HEAVY_SUITES` says.
    static let shared = HeavySuiteTurns(width: widthFromEnvironment())

    private let width: Int
    /// How many hold a turn now.
    public private(set) var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// How many wait for a turn now.
    public var waitingCount: Int { waiting.count }

    /// A gate that lets `width` bodies run at once.
    public init(width: Int) {
        self.width = width
    }

    /// Waits for a turn, runs `body` (off the gate's own executor), and hands the turn to the next waiting suite
    /// however `body` ends.
    public nonisolated func withTurn(_ body: @Sendable () async throws -> Void) async throws {
        await take()
        do {
            try await body()
        } catch {
            await give()
            throw error
        }
        await give()
    }

    private func take() async {
        if running < width {
            running += 1
            return
        }
        // The turn is passed on by `give()`, which leaves `running` as it is.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// `TEST_HEAVY_SUITES`, a positive number; unset means 2. Anything else stops the run at its first heavy suite.
    static func widthFromEnvironment() -> Int {
        guard let text = ProcessInfo.processInfo.environment["TEST_HEAVY_SUITES"] else { return 2 }
        guard let width = Int(text), width > 0 else {
            fatalError("TEST_HEAVY_SUITES=\(text): expected a positive number of suites that may run at once")
        }
        return width
    }
}
