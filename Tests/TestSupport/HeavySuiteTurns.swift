import Foundation
public import Testing

// MARK: - The trait

/// Marks a suite that runs the whole pipeline (every service, a broker, PostgreSQL and the sim with hundreds of
/// customers), or a suite or lone test whose load is made to saturate a service: at most `TEST_HEAVY_SUITES` of them
/// (3 by default) run at a time, and the others wait for their turn before they start.
///
/// Swift Testing shuffles the suites, so without turns how many whole pipelines shared the two cores was chance (the
/// failure it caused, why 3 and what the turns cost: docs/development.md). The wait is taken once around what is
/// marked, where no time limit counts (a test case's limit counts only its own body), and outside
/// `TEST_PARALLELISM`'s slots, so lighter tests run while it lasts. Mark a suite or a test in it, never both: the test
/// would wait for a turn its own suite holds.
public struct HeavySuiteTrait: SuiteTrait, TestTrait, TestScoping {
    /// Not handed down: the tests of a marked suite run in the turn the suite holds and take none of their own.
    public var isRecursive: Bool { false }

    /// Scopes what is marked once, around everything it runs (`testCase` is nil there), never each test case.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? self : nil
    }

    /// Runs the marked suite's tests, or the marked test's cases, within one turn.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavySuiteTurns.shared.withTurn(function)
    }
}

extension Trait where Self == HeavySuiteTrait {
    /// A suite or test that loads the machine as a whole pipeline does, and takes turns with the others that do
    /// (``HeavySuiteTrait``).
    public static var heavy: Self { HeavySuiteTrait() }
}

// MARK: - The turns

/// A counting gate, first come first served, for the suites and tests marked ``HeavySuiteTrait``.
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

    /// `TEST_HEAVY_SUITES`, a positive number; unset means 3. Anything else stops the run at its first heavy suite.
    static func widthFromEnvironment() -> Int {
        guard let text = ProcessInfo.processInfo.environment["TEST_HEAVY_SUITES"] else { return 3 }
        guard let width = Int(text), width > 0 else {
            fatalError("TEST_HEAVY_SUITES=\(text): expected a positive number of suites that may run at once")
        }
        return width
    }
}
