// MARK: - Objects

/// An object being written by ``FastJSONEncoder``: each member is its key and value written at once.
struct JSONObjectWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONByteWriter
    /// Its place on the writer's stack.
    let depth: Int
    /// Its id there (-1: it could not be opened; every write then makes the run unsupported).
    let id: Int

    var codingPath: [any CodingKey] { [] }

    /// Starts the member `key`: false when the object is closed already (the run is then unsupported).
    @inline(__always)
    private func member(_ key: Key) -> Bool {
        guard self.writer.beginMember(of: self.id, depth: self.depth) else { return false }
        self.writer.writeKey(key.stringValue, depth: self.depth)
        return true
    }

    mutating func encodeNil(forKey key: Key) throws {
        if self.member(key) { self.writer.writeLiteral("null") }
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        if self.member(key) { self.writer.writeLiteral(value ? "true" : "false") }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        if self.member(key) { self.writer.writeString(value) }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        if self.member(key) { try self.writer.writeFloatingPoint(value) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        if self.member(key) { try self.writer.writeFloatingPoint(value) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { self.integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { self.integer(value, key) }

    /// An integer member.
    private func integer<Value: FixedWidthInteger>(_ value: Value, _ key: Key) {
        if self.member(key) { self.writer.writeInteger(value) }
    }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        if self.member(key) { try JSONSlotEncoder(writer: self.writer, depth: self.depth + 1).encodeValue(value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let id = self.member(key) ? self.writer.open(isObject: true, depth: self.depth + 1) : -1
        return KeyedEncodingContainer(JSONObjectWriter<NestedKey>(writer: self.writer, depth: self.depth + 1, id: id))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let id = self.member(key) ? self.writer.open(isObject: false, depth: self.depth + 1) : -1
        return JSONArrayWriter(writer: self.writer, depth: self.depth + 1, id: id)
    }

    mutating func superEncoder() -> any Encoder { self.unsupportedEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { self.unsupportedEncoder() }

    /// An encoder whose every write is refused: `JSONEncoder` encodes the value instead.
    private func unsupportedEncoder() -> any Encoder {
        self.writer.unsupported = true
        return JSONSlotEncoder(writer: self.writer, depth: -2)
    }
}

// MARK: - Arrays

/// An array being written by ``FastJSONEncoder``.
struct JSONArrayWriter: UnkeyedEncodingContainer {
    let writer: JSONByteWriter
    let depth: Int
    let id: Int

    var codingPath: [any CodingKey] { [] }
    var count: Int {
        self.depth >= 0 && self.depth < self.writer.stack.count && self.writer.stack[self.depth].id == self.id
            ? self.writer.stack[self.depth].count : 0
    }

    /// Starts an element: false when the array is closed already (the run is then unsupported).
    @inline(__always)
    private func element() -> Bool {
        self.writer.beginMember(of: self.id, depth: self.depth)
    }

    mutating func encodeNil() throws { if self.element() { self.writer.writeLiteral("null") } }
    mutating func encode(_ value: Bool) throws {
        if self.element() { self.writer.writeLiteral(value ? "true" : "false") }
    }
    mutating func encode(_ value: String) throws { if self.element() { self.writer.writeString(value) } }
    mutating func encode(_ value: Double) throws { if self.element() { try self.writer.writeFloatingPoint(value) } }
    mutating func encode(_ value: Float) throws { if self.element() { try self.writer.writeFloatingPoint(value) } }
    mutating func encode(_ value: Int) throws { self.integer(value) }
    mutating func encode(_ value: Int8) throws { self.integer(value) }
    mutating func encode(_ value: Int16) throws { self.integer(value) }
    mutating func encode(_ value: Int32) throws { self.integer(value) }
    mutating func encode(_ value: Int64) throws { self.integer(value) }
    mutating func encode(_ value: UInt) throws { self.integer(value) }
    mutating func encode(_ value: UInt8) throws { self.integer(value) }
    mutating func encode(_ value: UInt16) throws { self.integer(value) }
    mutating func encode(_ value: UInt32) throws { self.integer(value) }
    mutating func encode(_ value: UInt64) throws { self.integer(value) }

    /// An integer element.
    private func integer<Value: FixedWidthInteger>(_ value: Value) {
        if self.element() { self.writer.writeInteger(value) }
    }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        if self.element() { try JSONSlotEncoder(writer: self.writer, depth: self.depth + 1).encodeValue(value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let id = self.element() ? self.writer.open(isObject: true, depth: self.depth + 1) : -1
        return KeyedEncodingContainer(JSONObjectWriter<NestedKey>(writer: self.writer, depth: self.depth + 1, id: id))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let id = self.element() ? self.writer.open(isObject: false, depth: self.depth + 1) : -1
        return JSONArrayWriter(writer: self.writer, depth: self.depth + 1, id: id)
    }

    mutating func superEncoder() -> any Encoder {
        self.writer.unsupported = true
        return JSONSlotEncoder(writer: self.writer, depth: -2)
    }
}
