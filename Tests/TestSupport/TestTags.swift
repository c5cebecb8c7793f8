public import Testing

extension Tag {
    /// A test that starts real components (PostgreSQL, the broker, service processes, a browser, Python tools).
    /// `deploy/local/test.sh --unit` skips them: the unit tests alone run in under a minute after a build.
    @Tag public static var integration: Self
}
