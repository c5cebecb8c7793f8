import Foundation

/// The JSON encoders and decoders every target uses for App Store payloads.
public enum AppStoreJSON {
    /// A decoder for App Store payloads. Dates are ``Timestamp`` values, so no date strategy is needed.
    public static func makeDecoder() -> JSONDecoder {
        JSONDecoder()
    }

    /// An encoder producing canonical JSON: keys sorted, no escaped slashes, so equal values give equal bytes.
    public static func makeCanonicalEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// An encoder for human-readable output (`iapctl`): canonical and indented.
    public static func makePrettyEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return encoder
    }
}
