public import AppStoreModels
import Foundation
public import JWSVerification

/// Parses the apps setting shared by every service: `bundleId[:appAppleId]`, comma-separated,
/// e.g. `com.example.app:1234567890,com.example.beta`.
public enum ConfiguredApps {
    /// The apps a setting names.
    public static func parse(_ text: String) throws(ConfigurationError) -> [AppIdentity] {
        let apps = try text.split(separator: ",").map { (entry: Substring) throws(ConfigurationError) -> AppIdentity in
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1).map(String.init)
            guard let bundleId = parts.first, !bundleId.isEmpty else {
                throw ConfigurationError("empty app in \(text)")
            }
            guard parts.count == 2 else { return AppIdentity(bundleId: bundleId) }
            guard let appAppleId = Int64(parts[1]) else {
                throw ConfigurationError("appAppleId of \(bundleId) must be a number, not \(parts[1])")
            }
            return AppIdentity(bundleId: bundleId, appAppleId: appAppleId)
        }
        guard !apps.isEmpty else { throw ConfigurationError("at least one app is required") }
        return apps
    }

    /// Parses environments (`Production,Sandbox`).
    public static func environments(_ names: [String]) throws(ConfigurationError) -> [Environment] {
        try names.map { (name: String) throws(ConfigurationError) -> Environment in
            guard let environment = Environment(rawValue: name) else {
                throw ConfigurationError("unknown environment \(name) (Production, Sandbox, Xcode, LocalTesting)")
            }
            return environment
        }
    }
}
