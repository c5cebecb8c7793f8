public import Foundation
public import Testing

extension Tag {
    /// A test that starts real components (PostgreSQL, the broker, service processes, a browser, Python tools).
    @Tag public static var integration: Self
}

extension Trait where Self == ConditionTrait {
    /// Skips the test when only the unit tests are asked for (`IAP_UNIT_TESTS_ONLY=1`, which
    /// `deploy/local/test.sh --unit` sets): with it the unit tests run alone in well under a minute after a build.
    /// Every suite tagged ``Tag/integration`` carries it.
    public static var notInUnitRuns: Self {
        .disabled(
            if: ProcessInfo.processInfo.environment["IAP_UNIT_TESTS_ONLY"] == "1",
            "an integration test (IAP_UNIT_TESTS_ONLY=1)")
    }
}
