public import Foundation

/// Debian's `chromium`, headless, driven from the tests: it loads a page, runs its script (fetches included:
/// virtual time waits for the network), and hands back the DOM as the page left it, or a screenshot.
public enum HeadlessBrowser {
    /// The browser binary (installed by `deploy/local/prerequisites.sh`).
    public static let binary = URL(fileURLWithPath: "/usr/bin/chromium")

    /// The DOM after the page's script ran for up to `budget` of virtual time.
    public static func dom(of url: String, budget: Duration = .seconds(15)) async throws -> String {
        try await Self.run(["--dump-dom", url], budget: budget)
    }

    /// A PNG screenshot of the page (for the closing note and operators), written to `file`.
    public static func screenshot(
        of url: String, to file: URL, width: Int = 1400, height: Int = 2200, budget: Duration = .seconds(15)
    ) async throws {
        _ = try await Self.run(["--screenshot=\(file.path)", "--window-size=\(width),\(height)", url], budget: budget)
    }

    /// Runs chromium headless with `arguments`; returns its standard output.
    private static func run(_ arguments: [String], budget: Duration) async throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw LocalComponentError(description: "chromium is not installed: run deploy/local/prerequisites.sh")
        }
        let directory = try LocalComponents.temporaryDirectory("chromium")
        defer { try? FileManager.default.removeItem(at: directory) }
        let milliseconds = Int(budget.components.seconds * 1000)
        let result = try await Program.run(
            Self.binary,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(directory.path)/profile",
                "--virtual-time-budget=\(milliseconds)",
            ] + arguments, errors: .discarded)
        guard result.status == 0 else {
            throw LocalComponentError(description: "chromium exited \(result.status)")
        }
        return result.output
    }
}
