import Logging
import ServiceRuntime
import Synchronization
import Testing

/// A service is ready only once every dependency answered: before the probe's first round, `/ready` says no (it said
/// yes, and a request reached customer-api before its API keys were read), and a dependency down later says no again.
@Suite struct DependencyProbeTests {
    @Test func notReadyUntilEveryCheckAnsweredThenAsTheChecksSay() async {
        let readiness = Readiness()
        readiness.set(true)
        let keysRead = Atomic<Bool>(false)
        let probe = DependencyProbe(
            checks: [.init("postgresql") { true }, .init("api-keys") { keysRead.load(ordering: .relaxed) }],
            readiness: readiness, logger: Logger(label: "dependency-probe-test"))
        #expect(!readiness.isReady, "not ready before the first round")
        #expect(readiness.failingConditions == ["postgresql", "api-keys"])

        await probe.probeOnce(first: true)
        #expect(!readiness.isReady && readiness.failingConditions == ["api-keys"], "the keys are not read yet")
        keysRead.store(true, ordering: .relaxed)
        await probe.probeOnce()
        #expect(readiness.isReady)
        keysRead.store(false, ordering: .relaxed)
        await probe.probeOnce()
        #expect(!readiness.isReady, "a dependency down again: not ready")
    }
}
