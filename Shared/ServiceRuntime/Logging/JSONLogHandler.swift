import Foundation
public import Logging

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts":…,"level":…,"label":…,"message":…, …metadata}`.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String

    /// Creates a handler for a logger label.
    public init(label: String, level: Logger.Level = .info) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in self.metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            object[key] = "\(value)"
        }
        object["ts"] = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        object["level"] = event.level.rawValue
        object["label"] = self.label
        object["message"] = "\(event.message)"
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}

/// Installs JSON logging for a whole process, once, at a level from `LOG_LEVEL` (default info).
public enum LoggingSetup {
    /// The level `LOG_LEVEL` names (`trace` … `critical`, default `info`); anything else is a ``SettingsError``.
    public static func level(_ settings: EnvironmentSettings) throws(SettingsError) -> Logger.Level {
        let name = settings.string("LOG_LEVEL", default: "info")
        guard let level = Logger.Level(rawValue: name) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw SettingsError("LOG_LEVEL must be one of \(names), not \(name)")
        }
        return level
    }

    /// Bootstraps swift-log with ``JSONLogHandler`` at `level` and returns the service's logger.
    public static func bootstrap(service: String, level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { JSONLogHandler(label: $0, level: level) }
        return Logger(label: service)
    }
}
