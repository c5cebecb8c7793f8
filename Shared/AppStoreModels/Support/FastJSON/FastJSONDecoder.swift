import Foundation

/// Decodes `Decodable` values from UTF-8 JSON like `JSONDecoder` with its default strategies, at a fraction of its
/// cost: the document is scanned once into a flat tape (``JSONTapeScanner``), and members are found by comparing
/// bytes, with no dictionary built per object and no string made per key. Used where the pipeline decodes
/// on every notification: the verifier's payloads, ingest's structural checks, the updater's records.
///
/// On JSON it gives what `JSONDecoder` gives (`FastJSONDecoderTests` compares the two on Apple's fixtures and real
/// payloads, edge cases and thousands of mutations): the first of duplicate keys wins; `1.0` and `1e3` are integers;
/// a trailing comma is accepted; `Data` is base64, `Date` seconds since 2001, `URL` and `Decimal` their text; errors
/// are `DecodingError`s with the coding path. A document's key that is not plain ASCII is compared as a Swift string
/// (canonical equivalence), a plain ASCII one byte for byte with the model's keys, which are ASCII. Malformed text is
/// refused wherever the fault is, where `JSONDecoder` checks a value only when a model reads it. Not supported: key
/// and date strategies, UTF-16 and UTF-32 documents.
public struct FastJSONDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from a JSON document.
    public func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        let document = try bytes.withUnsafeBytes { try JSONDocument(copying: $0) }
        return try document.value(type, at: 0)
    }

    /// Decodes a value of `type` from a JSON document.
    public func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let document = try data.withUnsafeBytes { try JSONDocument(copying: $0) }
        return try document.value(type, at: 0)
    }
}

// MARK: - The decoder of one value

/// The `Decoder` (and single-value container) of one node of a ``JSONDocument``: two words, so passing it as
/// `any Decoder` allocates nothing.
struct JSONNodeDecoder: Decoder, SingleValueDecodingContainer {
    let document: JSONDocument
    let index: Int

    var codingPath: [any CodingKey] { self.document.codingPath(of: self.index) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard self.document.nodes[self.index].kind == .object else {
            throw self.document.mismatch([String: Any].self, at: self.index)
        }
        return KeyedDecodingContainer(JSONObjectContainer<Key>(document: self.document, index: self.index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard self.document.nodes[self.index].kind == .array else {
            throw self.document.mismatch([Any].self, at: self.index)
        }
        return JSONArrayContainer(document: self.document, index: self.index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool { self.document.nodes[self.index].kind == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try self.document.bool(at: self.index) }
    func decode(_ type: String.Type) throws -> String { try self.document.string(at: self.index) }
    func decode(_ type: Double.Type) throws -> Double { try self.document.floatingPoint(at: self.index, as: type) }
    func decode(_ type: Float.Type) throws -> Float { try self.document.floatingPoint(at: self.index, as: type) }
    func decode(_ type: Int.Type) throws -> Int { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: UInt.Type) throws -> UInt { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try self.document.integer(at: self.index, as: type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try self.document.integer(at: self.index, as: type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try self.document.value(type, at: self.index) }
}
