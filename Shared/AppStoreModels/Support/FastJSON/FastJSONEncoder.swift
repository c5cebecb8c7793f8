import Foundation

/// Encodes `Encodable` values to UTF-8 JSON with the bytes `JSONEncoder` gives (default strategies, optionally
/// `.sortedKeys` and `.withoutEscapingSlashes`), at a fraction of its cost: values are written straight into one byte
/// buffer (``JSONByteWriter``), with no tree of boxed values and no dictionary per object. Used where the updater
/// encodes on every notification: its events' canonical JSON and the rows of its facts statement.
///
/// `FastJSONEncoderTests` compares the bytes with `JSONEncoder`'s on every kind of event and row, edge-case strings
/// and numbers, and thousands of generated values. What it does not reproduce byte for byte (`Date`, `Data`, `URL`
/// and `Decimal` values, a key that needs escaping or is written twice, a super encoder, a container written to after
/// a later sibling) it hands to `JSONEncoder`, so the result is always `JSONEncoder`'s. Two differences, neither met
/// by synthesized `Encodable` code: coding paths are not kept (a model whose encoding reads its `codingPath` must not
/// use it, and an error carries an empty path); unsorted, a key a custom encoding writes twice is written twice
/// (sorted, it goes to `JSONEncoder`, which keeps the last value).
public struct FastJSONEncoder: Sendable {
    /// Keys in order of their UTF-8 bytes (`.sortedKeys`).
    public var sortsKeys: Bool
    /// `/` written as `\/` (`JSONEncoder`'s default; `.withoutEscapingSlashes` turns it off).
    public var escapesSlashes: Bool

    /// Creates an encoder; by default like `JSONEncoder()`.
    public init(sortsKeys: Bool = false, escapesSlashes: Bool = true) {
        self.sortsKeys = sortsKeys
        self.escapesSlashes = escapesSlashes
    }

    /// Like ``AppStoreJSON/makeCanonicalEncoder()``: keys sorted, slashes not escaped, so equal values give equal
    /// bytes.
    public static let canonical = FastJSONEncoder(sortsKeys: true, escapesSlashes: false)

    /// The JSON of `value`.
    public func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        if let bytes = try self.writtenBytes(value) { return bytes }
        return Array(try self.foundationEncoder.encode(value))
    }

    /// The JSON of `value` as this encoder writes it; nil when it needs what only `JSONEncoder` reproduces.
    func writtenBytes<Value: Encodable>(_ value: Value) throws -> [UInt8]? {
        let writer = JSONByteWriter(sortsKeys: self.sortsKeys, escapesSlashes: self.escapesSlashes)
        try JSONSlotEncoder(writer: writer, depth: 0).encodeValue(value)
        writer.close(above: -1)
        return writer.unsupported ? nil : writer.bytes
    }

    /// `JSONEncoder` with the same options, for what this encoder does not reproduce.
    var foundationEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        var formatting: JSONEncoder.OutputFormatting = []
        if self.sortsKeys { formatting.insert(.sortedKeys) }
        if !self.escapesSlashes { formatting.insert(.withoutEscapingSlashes) }
        encoder.outputFormatting = formatting
        return encoder
    }
}

// MARK: - One value's slot

/// The `Encoder` (and single-value container) of one value at a depth of the writer's stack: two words, so passing
/// it as `any Encoder` allocates nothing. Its value fills the slot once: an object, an array or a single value.
struct JSONSlotEncoder: Encoder, SingleValueEncodingContainer {
    let writer: JSONByteWriter
    let depth: Int

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes `value` into this slot: primitives directly, `Foundation`'s special types not at all (the run is
    /// unsupported), anything else by its own `encode(to:)`; a value that wrote nothing is `{}` (as in `JSONEncoder`).
    func encodeValue<Value: Encodable>(_ value: Value) throws {
        // The slot waits for its value (an outer slot is filled already: it opened the container this one is in).
        self.writer.pendingSlot = self.depth
        if Value.self == String.self {
            self.fill { self.writer.writeString(value as! String) }
        } else if Value.self == Int.self {
            self.fill { self.writer.writeInteger(value as! Int) }
        } else if Value.self == Int64.self {
            self.fill { self.writer.writeInteger(value as! Int64) }
        } else if Value.self == Int32.self {
            self.fill { self.writer.writeInteger(value as! Int32) }
        } else if Value.self == Bool.self {
            self.fill { self.writer.writeLiteral((value as! Bool) ? "true" : "false") }
        } else if Value.self == Date.self || Value.self == Data.self || Value.self == URL.self
            || Value.self == Decimal.self
        {
            self.writer.unsupported = true
        } else {
            try value.encode(to: self)
            if self.writer.pendingSlot == self.depth {
                guard self.depth > 0 else {
                    // JSONEncoder refuses a top-level value that encodes nothing; let it say so.
                    self.writer.unsupported = true
                    return
                }
                self.writer.pendingSlot = -1
                self.writer.close(above: self.depth - 1)
                self.writer.writeLiteral("{}")
            }
        }
    }

    /// Writes a primitive into the slot if it is still empty (a second write makes the run unsupported).
    @inline(__always)
    private func fill(_ write: () throws -> Void) rethrows {
        guard self.writer.pendingSlot == self.depth else {
            self.writer.unsupported = true
            return
        }
        self.writer.pendingSlot = -1
        self.writer.close(above: self.depth - 1)
        try write()
    }

    /// The container at this slot: opened if the slot is empty, the same one if this value asks again.
    private func container(isObject: Bool) -> Int? {
        if self.writer.pendingSlot == self.depth {
            self.writer.pendingSlot = -1
            return self.writer.open(isObject: isObject, depth: self.depth)
        }
        let stack = self.writer.stack
        if self.depth >= 0 && self.depth < stack.count && stack[self.depth].isObject == isObject {
            return stack[self.depth].id
        }
        self.writer.unsupported = true
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let id = self.container(isObject: true) ?? -1
        return KeyedEncodingContainer(JSONObjectWriter<Key>(writer: self.writer, depth: self.depth, id: id))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let id = self.container(isObject: false) ?? -1
        return JSONArrayWriter(writer: self.writer, depth: self.depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    mutating func encodeNil() throws { self.fill { self.writer.writeLiteral("null") } }
    mutating func encode(_ value: Bool) throws { self.fill { self.writer.writeLiteral(value ? "true" : "false") } }
    mutating func encode(_ value: String) throws { self.fill { self.writer.writeString(value) } }
    mutating func encode(_ value: Double) throws { try self.fill { try self.writer.writeFloatingPoint(value) } }
    mutating func encode(_ value: Float) throws { try self.fill { try self.writer.writeFloatingPoint(value) } }
    mutating func encode(_ value: Int) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: Int8) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: Int16) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: Int32) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: Int64) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: UInt) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: UInt8) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: UInt16) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: UInt32) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode(_ value: UInt64) throws { self.fill { self.writer.writeInteger(value) } }
    mutating func encode<Value: Encodable>(_ value: Value) throws { try self.encodeValue(value) }
}
