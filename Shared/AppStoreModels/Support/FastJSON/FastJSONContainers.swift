import Foundation

// MARK: - Objects

/// The keyed container of an object node: each member is found by comparing its key's bytes.
struct JSONObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let document: JSONDocument
    let index: Int

    var codingPath: [any CodingKey] { self.document.codingPath(of: self.index) }

    var allKeys: [Key] {
        self.document.keyNodes(ofObject: self.index).compactMap {
            Key(stringValue: (try? self.document.string(at: $0)) ?? "")
        }
    }

    func contains(_ key: Key) -> Bool { self.member(key) != nil }

    /// The value node of a member, if the object has it.
    private func member(_ key: Key) -> Int? {
        self.document.member(named: key.stringValue, inObject: self.index)
    }

    /// The value node of a member the caller requires.
    private func required(_ key: Key) throws -> Int {
        guard let value = self.member(key) else {
            throw DecodingError.keyNotFound(
                key,
                .init(
                    codingPath: self.codingPath,
                    debugDescription: "No value associated with key \(key.stringValue) (\"\(key.stringValue)\")."))
        }
        return value
    }

    /// The value node of a member that is there and not null.
    private func present(_ key: Key) -> Int? {
        guard let value = self.member(key), self.document.nodes[value].kind != .null else { return nil }
        return value
    }

    // MARK: Required values

    func decodeNil(forKey key: Key) throws -> Bool { self.document.nodes[try self.required(key)].kind == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try self.document.bool(at: self.required(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try self.document.string(at: self.required(key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try self.document.floatingPoint(at: self.required(key), as: type)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try self.document.floatingPoint(at: self.required(key), as: type)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try self.integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try self.integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try self.integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try self.integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try self.integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try self.integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try self.integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try self.integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try self.integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try self.integer(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try self.document.value(type, at: self.required(key))
    }

    @inline(__always)
    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type, _ key: Key) throws -> Integer {
        try self.document.integer(at: self.required(key), as: type)
    }

    // MARK: Optional values (missing or null is nil: one look-up instead of the default's three)

    // Written with `guard let`, not `Optional.map`: the typed-throws `map` is not specialized here, and calling it
    // cost ~1 % of full verification (`perf`, 2026-11-29).
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let value = self.present(key) else { return nil }
        return try self.document.bool(at: value)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = self.present(key) else { return nil }
        return try self.document.string(at: value)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let value = self.present(key) else { return nil }
        return try self.document.floatingPoint(at: value, as: type)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let value = self.present(key) else { return nil }
        return try self.document.floatingPoint(at: value, as: type)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try self.optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try self.optionalInteger(type, key)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try self.optionalInteger(type, key)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try self.optionalInteger(type, key)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = self.present(key) else { return nil }
        return try self.document.value(type, at: value)
    }

    /// Inlined into each integer type's method, so the number is read by code made for that type (see
    /// ``JSONDocument/integer(at:as:)``).
    @inline(__always)
    private func optionalInteger<Integer: FixedWidthInteger>(_ type: Integer.Type, _ key: Key) throws -> Integer? {
        guard let value = self.present(key) else { return nil }
        return try self.document.integer(at: value, as: type)
    }

    // MARK: Nested containers

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONNodeDecoder(document: self.document, index: self.required(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONNodeDecoder(document: self.document, index: self.required(key)).unkeyedContainer()
    }

    /// The decoder of the member `super` (which must be there).
    func superDecoder() throws -> any Decoder {
        guard let value = self.document.member(named: "super", inObject: self.index) else {
            throw DecodingError.keyNotFound(
                JSONPathKey(stringValue: "super"),
                .init(codingPath: self.codingPath, debugDescription: "No value associated with key super."))
        }
        return JSONNodeDecoder(document: self.document, index: value)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONNodeDecoder(document: self.document, index: try self.required(key))
    }
}

// MARK: - Arrays

/// The unkeyed container of an array node: a cursor over its elements, moved on by each successful decode.
struct JSONArrayContainer: UnkeyedDecodingContainer {
    let document: JSONDocument
    let index: Int
    private(set) var currentIndex = 0
    /// The node of the element at `currentIndex`.
    private var cursor: Int

    init(document: JSONDocument, index: Int) {
        self.document = document
        self.index = index
        self.cursor = index + 1
    }

    var codingPath: [any CodingKey] { self.document.codingPath(of: self.index) }
    var count: Int? { Int(self.document.nodes[self.index].count) }
    var isAtEnd: Bool { self.currentIndex >= Int(self.document.nodes[self.index].count) }

    /// The node of the current element; at the end, `valueNotFound`.
    private func current(_ type: Any.Type) throws -> Int {
        guard !self.isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: self.codingPath + [JSONPathKey(intValue: self.currentIndex)],
                    debugDescription: "Unkeyed container is at end."))
        }
        return self.cursor
    }

    /// Moves on to the next element (after a successful decode only, as `JSONDecoder` does).
    private mutating func advance() {
        self.cursor = Int(self.document.nodes[self.cursor].next)
        self.currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        guard self.document.nodes[try self.current(Any?.self)].kind == .null else { return false }
        self.advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let value = try self.document.bool(at: self.current(type))
        self.advance()
        return value
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let value = try self.document.string(at: self.current(type))
        self.advance()
        return value
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let value = try self.document.floatingPoint(at: self.current(type), as: type)
        self.advance()
        return value
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let value = try self.document.floatingPoint(at: self.current(type), as: type)
        self.advance()
        return value
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try self.integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try self.integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try self.integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try self.integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try self.integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try self.integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try self.integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try self.integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try self.integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try self.integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try self.document.value(type, at: self.current(type))
        self.advance()
        return value
    }

    @inline(__always)
    private mutating func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        let value = try self.document.integer(at: self.current(type), as: type)
        self.advance()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try JSONNodeDecoder(document: self.document, index: self.current(type))
            .container(keyedBy: type)
        self.advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try JSONNodeDecoder(document: self.document, index: self.current([Any].self))
            .unkeyedContainer()
        self.advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = JSONNodeDecoder(document: self.document, index: try self.current(Any.self))
        self.advance()
        return decoder
    }
}
