import Foundation

/// Any JSON value, kept exactly as decoded.
///
/// Used for objects the pipeline stores and forwards but does not interpret (Advanced Commerce details),
/// so that nothing Apple signed is lost when a payload is re-encoded.
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes whichever JSON type is present, preferring integers over floating-point numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the same JSON type it was decoded from.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

// MARK: - JSONValue + Conversion

extension JSONValue {
    /// The JSON value an `Encodable` value encodes to.
    public init(encoding value: some Encodable) throws {
        let data = try AppStoreJSON.makeCanonicalEncoder().encode(value)
        self = try AppStoreJSON.makeDecoder().decode(JSONValue.self, from: data)
    }

    /// A copy of an object with `value` stored at `key` inside the nested object `container`; other values
    /// are returned unchanged.
    public func setting(_ value: JSONValue, forKey key: String, in container: String) -> JSONValue {
        guard case .object(var outer) = self, case .object(var inner)? = outer[container] else { return self }
        inner[key] = value
        outer[container] = .object(inner)
        return .object(outer)
    }
}
