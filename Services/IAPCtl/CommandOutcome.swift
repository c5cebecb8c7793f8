/// What a command run produced: its exit code and its two output streams. Commands build one so tests can
/// check all three without starting a process.
struct CommandOutcome: Equatable, Sendable {
    var exitCode: Int32
    var standardOutput: String = ""
    var standardError: String = ""

    /// Success with output.
    static func success(_ output: String) -> CommandOutcome { CommandOutcome(exitCode: 0, standardOutput: output) }

    /// The input was checked and refused (exit 1).
    static func invalid(_ message: String) -> CommandOutcome { CommandOutcome(exitCode: 1, standardError: message) }

    /// The command could not run as asked (exit 2).
    static func usage(_ message: String) -> CommandOutcome {
        CommandOutcome(exitCode: 2, standardError: "error: " + message)
    }
}
