import TestSupport
import Testing

/// The gate the `.heavy` suites take turns at: no more bodies run at once than it is wide, a waiting one runs when a
/// turn is given back, first come first served, and a body that throws gives its turn back too. Every wait here is for
/// a condition the gate must reach, never for time to pass. The trait takes one turn around what it marks.
@Suite struct HeavySuiteTurnsTests {
    @Test func aSecondBodyWaitsForTheFirstOnAGateOfOne() async throws {
        let turns = HeavySuiteTurns(width: 1)
        let log = EventLog()
        let (released, release) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await turns.withTurn {
                await log.append("first began")
                for await _ in released { break }
                await log.append("first ended")
            }
        }
        try #require(await Polling.until(looks: 1_000, every: .milliseconds(10)) { await log.events.count == 1 })
        let second = Task { try await turns.withTurn { await log.append("second began") } }
        try #require(await Polling.until(looks: 1_000, every: .milliseconds(10)) { await turns.waitingCount == 1 })
        #expect(await log.events == ["first began"], "the second ran while the first held the only turn")
        release.yield()
        try await first.value
        try await second.value
        #expect(await log.events == ["first began", "first ended", "second began"])
        #expect(await turns.running == 0)
        #expect(await turns.waitingCount == 0)
    }

    @Test func twoBodiesRunTogetherOnAGateOfTwoAndAThirdWaits() async throws {
        let turns = HeavySuiteTurns(width: 2)
        let log = EventLog()
        let (released, release) = AsyncStream<Void>.makeStream()
        let holders = (1...2).map { index in
            Task {
                try await turns.withTurn {
                    await log.append("holder \(index)")
                    for await _ in released { break }
                }
            }
        }
        try #require(await Polling.until(looks: 1_000, every: .milliseconds(10)) { await log.events.count == 2 })
        let third = Task { try await turns.withTurn { await log.append("third") } }
        try #require(await Polling.until(looks: 1_000, every: .milliseconds(10)) { await turns.waitingCount == 1 })
        #expect(await turns.running == 2)
        #expect(!(await log.events.contains("third")))
        release.finish()
        for holder in holders { try await holder.value }
        try await third.value
        #expect(await log.events.last == "third")
        #expect(await turns.running == 0)
    }

    @Test func aBodyThatThrowsGivesItsTurnBack() async throws {
        let turns = HeavySuiteTurns(width: 1)
        await #expect(throws: Failure.self) { try await turns.withTurn { throw Failure() } }
        #expect(await turns.running == 0)
        let log = EventLog()
        try await turns.withTurn { await log.append("after") }
        #expect(await log.events == ["after"])
    }

    @Test func theTraitTakesOneTurnAroundWhatIsMarkedAndNoneForEachCaseOrChild() throws {
        let test = try #require(Test.current)
        let trait: HeavySuiteTrait = .heavy
        #expect(trait.scopeProvider(for: test, testCase: nil) != nil, "the marked suite or test takes a turn")
        #expect(trait.scopeProvider(for: test, testCase: Test.Case.current) == nil, "a test case takes none")
        #expect(!trait.isRecursive, "a marked suite's tests do not carry it, so they wait for no turn of their own")
    }

    /// What the bodies did, in order.
    actor EventLog {
        private(set) var events: [String] = []
        func append(_ event: String) { events.append(event) }
    }

    /// A body's failure.
    struct Failure: Error {}
}
