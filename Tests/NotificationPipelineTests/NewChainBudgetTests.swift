import NotificationPipeline
import Testing

/// The budget of chains not seen before (ingest's and retention-messaging's doors): a second's worth at once, then
/// a wait; a known chain never waits.
@Suite struct NewChainBudgetTests {
    @Test func knownChainsAlwaysPassNewOnesWithinTheBudget() {
        let budget = NewChainBudget(perSecond: 3)
        let start = ContinuousClock.now
        #expect((0..<3).allSatisfy { _ in budget.admit(known: false, now: start) == nil }, "a second's worth at once")
        let wait = budget.admit(known: false, now: start)
        #expect(wait.map { $0 > 0 && $0 <= 1 } == true, "the fourth waits for the next token: \(wait ?? -1)")
        #expect(budget.admit(known: true, now: start) == nil, "a cached chain never waits")
        #expect(budget.admit(known: false, now: start + .seconds(1)) == nil, "a second later there is room again")
    }
}
