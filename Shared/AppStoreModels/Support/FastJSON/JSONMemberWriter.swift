/// Writes a JSON object's members straight into bytes, in the order they are given, with the strings and numbers
/// ``FastJSONEncoder/canonical`` writes (slashes not escaped): for a model on a hot path that writes its own canonical
/// JSON, its members in order of their keys' UTF-8 bytes, without the `Encodable` machinery and without sorting. Its
/// users' tests compare the bytes with `FastJSONEncoder.canonical`'s; nested values it does not write itself go
/// through that encoder (``encoded(_:_:)``).
public struct JSONMemberWriter {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the innermost open object has no member yet (no comma before the next one).
    private var atFirstMember = true
    /// Whether a nil member is written as `null` rather than left out (tests list every member a writer has).
    private let writesNil: Bool

    /// A writer with room for `capacity` bytes; `writesNil`: nil members written as `null` instead of left out.
    public init(capacity: Int, writesNil: Bool = false) {
        self.writesNil = writesNil
        self.bytes.reserveCapacity(capacity)
    }

    // MARK: Objects

    /// Writes an object whose members `body` writes.
    public mutating func object(_ body: (inout JSONMemberWriter) throws -> Void) rethrows {
        self.bytes.append(UInt8(ascii: "{"))
        self.atFirstMember = true
        try body(&self)
        self.bytes.append(UInt8(ascii: "}"))
        self.atFirstMember = false
    }

    /// Writes the member `key` as an object whose members `body` writes.
    public mutating func object(_ key: StaticString, _ body: (inout JSONMemberWriter) throws -> Void) rethrows {
        self.key(key)
        try self.object(body)
    }

    /// Writes an array with one object per element, whose members `body` writes.
    public mutating func arrayOfObjects<Elements: Sequence>(
        _ elements: Elements, _ body: (inout JSONMemberWriter, Elements.Element) throws -> Void
    ) rethrows {
        self.bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { self.bytes.append(UInt8(ascii: ",")) }
            first = false
            try self.object { try body(&$0, element) }
        }
        self.bytes.append(UInt8(ascii: "]"))
        self.atFirstMember = false
    }

    /// A nil member: left out, or `null` when the writer writes nil members.
    private mutating func null(_ key: StaticString) {
        guard self.writesNil else { return }
        self.key(key)
        self.literal("null")
    }

    /// Writes a literal (`null`, `true`, `false`).
    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
    }

    /// Starts a member: the comma before it (unless it is the object's first) and its key. Keys are the caller's
    /// literals and are written as they are (none needs escaping).
    private mutating func key(_ key: StaticString) {
        if !self.atFirstMember { self.bytes.append(UInt8(ascii: ",")) }
        self.atFirstMember = false
        self.bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(UInt8(ascii: ":"))
    }

    // MARK: Members (nil: left out, as synthesized `Encodable` code leaves it, unless `writesNil`)

    /// A string member.
    public mutating func string(_ key: StaticString, _ value: String?) {
        guard let value else { return self.null(key) }
        self.key(key)
        JSONByteWriter.appendString(value, escapingSlashes: false, to: &self.bytes)
    }

    /// An integer member (one overload per width the models use, so callers in other modules get code specialized
    /// for it rather than a generic call).
    public mutating func integer(_ key: StaticString, _ value: Int64?) { self.anyInteger(key, value) }
    /// An integer member.
    public mutating func integer(_ key: StaticString, _ value: Int32?) { self.anyInteger(key, value) }
    /// An integer member.
    public mutating func integer(_ key: StaticString, _ value: Int?) { self.anyInteger(key, value) }

    /// An integer member of any width.
    private mutating func anyInteger<Value: FixedWidthInteger>(_ key: StaticString, _ value: Value?) {
        guard let value else { return self.null(key) }
        self.key(key)
        JSONByteWriter.appendInteger(value, to: &self.bytes)
    }

    /// A Boolean member.
    public mutating func bool(_ key: StaticString, _ value: Bool?) {
        guard let value else { return self.null(key) }
        self.key(key)
        self.literal(value ? "true" : "false")
    }

    /// Any other member, written by ``FastJSONEncoder/canonical`` (for the nested values a model does not write
    /// itself; rare ones, or ones not on a hot path).
    public mutating func encoded<Value: Encodable>(_ key: StaticString, _ value: Value?) throws {
        guard let value else { return self.null(key) }
        self.key(key)
        self.bytes.append(contentsOf: try FastJSONEncoder.canonical.encode(value))
    }
}
