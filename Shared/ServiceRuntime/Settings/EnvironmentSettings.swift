import Foundation

/// Reads typed settings from environment variables, naming the variable in every error.
///
/// Decision: a small reader over `[String: String]` rather than swift-configuration: every service reads a
/// dozen flat variables, tests pass a dictionary, and docs/configuration.md keeps one table of them all.
public struct EnvironmentSettings: Sendable {
    /// The variables, by name.
    public let values: [String: String]

    /// Settings from the process environment.
    public static var process: EnvironmentSettings { EnvironmentSettings(ProcessInfo.processInfo.environment) }

    /// Settings from a dictionary (tests).
    public init(_ values: [String: String]) {
        self.values = values
    }

    /// A string, or the default when the variable is unset or empty.
    public func string(_ name: String, default defaultValue: String) -> String {
        self.values[name].flatMap { $0.isEmpty ? nil : $0 } ?? defaultValue
    }

    /// A string that must be set.
    public func requiredString(_ name: String) throws(SettingsError) -> String {
        guard let value = self.values[name], !value.isEmpty else { throw SettingsError("\(name) must be set") }
        return value
    }

    /// An integer, or the default.
    public func int(_ name: String, default defaultValue: Int) throws(SettingsError) -> Int {
        guard let text = self.values[name], !text.isEmpty else { return defaultValue }
        guard let value = Int(text) else { throw SettingsError("\(name) must be an integer, not \(text)") }
        return value
    }

    /// A duration given in milliseconds, or the default.
    public func milliseconds(_ name: String, default defaultValue: Duration) throws(SettingsError) -> Duration {
        guard let text = self.values[name], !text.isEmpty else { return defaultValue }
        guard let value = Int64(text), value >= 0 else {
            throw SettingsError("\(name) must be milliseconds, not \(text)")
        }
        return .milliseconds(value)
    }

    /// A duration written `<whole number><unit>` with unit `s`, `m`, `h` or `d` (`90s`, `12h`, `7d`), or the default.
    public func duration(_ name: String, default defaultValue: Duration) throws(SettingsError) -> Duration {
        guard let text = self.values[name], !text.isEmpty else { return defaultValue }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let value = Int64(text.dropLast()), value >= 0,
            value <= Int64.max / 86_400 / 1_000
        else { throw SettingsError("\(name) must be a duration like 90s, 30m, 12h or 7d, not \(text)") }
        return .seconds(value * unit)
    }

    /// A boolean, exactly `true` or `false`, or the default when unset or empty. Anything else (`1`, `yes`,
    /// `TRUE`) stops the service at start: a setting that silently read as `false` once turned verification off.
    public func bool(_ name: String, default defaultValue: Bool) throws(SettingsError) -> Bool {
        guard let text = self.values[name], !text.isEmpty else { return defaultValue }
        switch text {
        case "true": return true
        case "false": return false
        default: throw SettingsError("\(name) must be true or false, not \(text)")
        }
    }

    /// A comma-separated list, or the default.
    public func list(_ name: String, default defaultValue: [String] = []) -> [String] {
        guard let text = self.values[name], !text.isEmpty else { return defaultValue }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// A setting that is missing or malformed; the service cannot start.
public struct SettingsError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
