import NotificationPipeline
import Testing

/// The budget of chains not seen before (ingest's and retention-messaging's doors), per source: a second's worth at
/// once, then a wait; a known chain never waits; one source's flood leaves another's budget whole.
@Suite struct NewChainBudgetTests {
    @Test func knownChainsAlwaysPassNewOnesWithinTheBudget() {
        let budget = NewChainBudget(perSecond: 3)
        let start = ContinuousClock.now
        #expect(
            (0..<3).allSatisfy { _ in budget.admit(known: false, source: "a", now: start) == nil },
            "a second's worth at once")
        let wait = budget.admit(known: false, source: "a", now: start)
        #expect(wait.map { $0 > 0 && $0 <= 1 } == true, "the fourth waits for the next token: \(wait ?? -1)")
        #expect(budget.admit(known: true, source: "a", now: start) == nil, "a cached chain never waits")
        #expect(
            budget.admit(known: false, source: "a", now: start + .seconds(1)) == nil,
            "a second later there is room again")
    }

    @Test func oneSourcesFloodLeavesAnothersBudgetWhole() {
        let budget = NewChainBudget(perSecond: 2)
        let start = ContinuousClock.now
        let flood = (0..<1000).filter { _ in budget.admit(known: false, source: "198.51.100.7", now: start) == nil }
        #expect(flood.count == 2, "the flooding source gets its own second's worth")
        #expect(budget.admit(known: false, source: "17.58.0.1", now: start) == nil, "Apple's source is untouched")
    }
}
