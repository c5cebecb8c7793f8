// MARK: The tape

/// One value of a scanned JSON document, in document order: an object's node is followed by its members (a
/// string node for the key, then the value's nodes), an array's by its elements. Offsets are bytes of the document.
struct JSONNode {
    /// The JSON type of a value.
    enum Kind: UInt8 {
        case object, array, string, number, bool, null
    }

    /// The value's JSON type.
    var kind: Kind
    /// A string read the slow way (it has an escape or a non-ASCII byte: its key is then compared as a Swift string,
    /// canonical equivalence and all, as `JSONDecoder` compares keys); a number without fraction or exponent; `true`.
    var flag: Bool
    /// An object's members or an array's elements.
    var count: Int32 = 0
    /// A string's first byte after the quote, or a number's first character.
    var start: Int32
    /// One past a string's last byte (its closing quote), or past a number's last character.
    var end: Int32
    /// The node that follows this value and everything inside it.
    var next: Int32 = 0
    /// The object or array holding this value (-1 for the document's value).
    var parent: Int32
}

// MARK: The scanner

/// Checks a UTF-8 JSON document against RFC 8259 in one pass and writes its tape: what ``FastJSONDecoder`` reads
/// values from without scanning again. Refuses what RFC 8259 refuses (leading zeros, lone surrogates, control
/// characters in strings, invalid UTF-8), more than 512 levels of nesting and anything after the value, wherever
/// it is; accepts one trailing comma in an object or array, as `JSONDecoder` does.
struct JSONTapeScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private(set) var nodes: [JSONNode] = []

    /// How deeply arrays and objects may nest (as `JSONDecoder`).
    static let maximumDepth = 512

    /// The tape of a whole document.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> [JSONNode] {
        guard bytes.count < Int(Int32.max) else { throw JSONSyntaxError("the document is larger than 2 GB", at: 0) }
        var scanner = JSONTapeScanner(bytes: bytes)
        scanner.nodes.reserveCapacity(64)
        try scanner.value(parent: -1, depth: 0)
        scanner.skipWhitespace()
        guard scanner.position == bytes.count else {
            throw JSONSyntaxError("unexpected text after the value", at: scanner.position)
        }
        return scanner.nodes
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: Values

    /// Scans one value (after optional whitespace) and appends its nodes.
    private mutating func value(parent: Int32, depth: Int) throws(JSONSyntaxError) {
        self.skipWhitespace()
        guard self.position < self.bytes.count else {
            throw JSONSyntaxError("the document ends early", at: self.position)
        }
        switch self.bytes[self.position] {
        case UInt8(ascii: "{"): try self.object(parent: parent, depth: depth + 1)
        case UInt8(ascii: "["): try self.array(parent: parent, depth: depth + 1)
        case UInt8(ascii: "\""): try self.string(parent: parent)
        case UInt8(ascii: "t"): try self.literal("true", kind: .bool, flag: true, parent: parent)
        case UInt8(ascii: "f"): try self.literal("false", kind: .bool, flag: false, parent: parent)
        case UInt8(ascii: "n"): try self.literal("null", kind: .null, flag: false, parent: parent)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try self.number(parent: parent)
        default: throw JSONSyntaxError("unexpected character", at: self.position)
        }
    }

    /// Scans an object: its node, then key and value nodes for each member.
    private mutating func object(parent: Int32, depth: Int) throws(JSONSyntaxError) {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError("too many nested values", at: self.position) }
        let index = self.append(
            JSONNode(kind: .object, flag: false, start: Int32(self.position), end: 0, parent: parent))
        self.position += 1
        var count: Int32 = 0
        self.skipWhitespace()
        if self.peek() == UInt8(ascii: "}") {
            self.position += 1
        } else {
            while true {
                self.skipWhitespace()
                if count > 0, self.peek() == UInt8(ascii: "}") {  // a trailing comma, which JSONDecoder accepts
                    self.position += 1
                    break
                }
                guard self.peek() == UInt8(ascii: "\"") else {
                    throw JSONSyntaxError("an object key must be a string", at: self.position)
                }
                try self.string(parent: Int32(index))
                self.skipWhitespace()
                guard self.peek() == UInt8(ascii: ":") else { throw JSONSyntaxError("expected ':'", at: self.position) }
                self.position += 1
                try self.value(parent: Int32(index), depth: depth)
                count += 1
                self.skipWhitespace()
                let separator = self.peek()
                self.position += 1
                if separator == UInt8(ascii: "}") { break }
                guard separator == UInt8(ascii: ",") else {
                    throw JSONSyntaxError("expected ',' or '}'", at: self.position - 1)
                }
            }
        }
        self.close(index, count: count)
    }

    /// Scans an array: its node, then each element's nodes.
    private mutating func array(parent: Int32, depth: Int) throws(JSONSyntaxError) {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError("too many nested values", at: self.position) }
        let index = self.append(
            JSONNode(kind: .array, flag: false, start: Int32(self.position), end: 0, parent: parent))
        self.position += 1
        var count: Int32 = 0
        self.skipWhitespace()
        if self.peek() == UInt8(ascii: "]") {
            self.position += 1
        } else {
            while true {
                self.skipWhitespace()
                if count > 0, self.peek() == UInt8(ascii: "]") {  // a trailing comma, which JSONDecoder accepts
                    self.position += 1
                    break
                }
                try self.value(parent: Int32(index), depth: depth)
                count += 1
                self.skipWhitespace()
                let separator = self.peek()
                self.position += 1
                if separator == UInt8(ascii: "]") { break }
                guard separator == UInt8(ascii: ",") else {
                    throw JSONSyntaxError("expected ',' or ']'", at: self.position - 1)
                }
            }
        }
        self.close(index, count: count)
    }

    /// Scans a string, checking its escapes, its characters and (when it has non-ASCII bytes) its UTF-8.
    private mutating func string(parent: Int32) throws(JSONSyntaxError) {
        let start = self.position + 1
        var index = start
        var escaped = false
        var ascii = true
        let count = self.bytes.count
        while true {
            index = Self.skipPlainWords(self.bytes, from: index)
            guard index < count else { throw JSONSyntaxError("a string is not closed", at: start - 1) }
            let byte = self.bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index = try self.escape(at: index)
                continue
            }
            if byte < 0x20 { throw JSONSyntaxError("a control character in a string", at: index) }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        if !ascii, String(validating: UnsafeBufferPointer(rebasing: self.bytes[start..<index]), as: UTF8.self) == nil {
            throw JSONSyntaxError("a string is not valid UTF-8", at: start)
        }
        let node = self.append(
            JSONNode(kind: .string, flag: escaped || !ascii, start: Int32(start), end: Int32(index), parent: parent))
        self.position = index + 1
        self.nodes[node].next = Int32(self.nodes.count)
    }

    /// The index of the first 8-byte word from `index` that holds a byte a string scan must look at: a quote, a
    /// backslash, a control character or a non-ASCII byte. Nested JWS are kilobytes of base64url with none of
    /// them, so they are skipped a word at a time.
    private static func skipPlainWords(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        var index = index
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // A byte of `x` is zero exactly when `(x - 1) & ~x` has its high bit (for words without high bits).
            let special =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word
            if special & highs != 0 { return index }
            index += 8
        }
        return index
    }

    /// Checks the escape at `index` (a backslash) and returns the index after it. A `\u` high surrogate must be
    /// followed by a `\u` low surrogate, and a low surrogate must follow a high one.
    private func escape(at index: Int) throws(JSONSyntaxError) -> Int {
        guard index + 1 < self.bytes.count else { throw JSONSyntaxError("a string is not closed", at: index) }
        switch self.bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return index + 2
        case UInt8(ascii: "u"):
            let unit = try self.hexUnit(at: index + 2)
            if (0xDC00...0xDFFF).contains(unit) { throw JSONSyntaxError("a lone low surrogate", at: index) }
            guard (0xD800...0xDBFF).contains(unit) else { return index + 6 }
            guard index + 7 < self.bytes.count, self.bytes[index + 6] == UInt8(ascii: "\\"),
                self.bytes[index + 7] == UInt8(ascii: "u"),
                (0xDC00...0xDFFF).contains(try self.hexUnit(at: index + 8))
            else { throw JSONSyntaxError("a lone high surrogate", at: index) }
            return index + 12
        default:
            throw JSONSyntaxError("an invalid escape", at: index)
        }
    }

    /// The UTF-16 unit of the four hex digits at `index`.
    private func hexUnit(at index: Int) throws(JSONSyntaxError) -> UInt16 {
        guard index + 4 <= self.bytes.count else { throw JSONSyntaxError("a \\u escape is cut short", at: index) }
        guard let unit = Self.hexUnit(in: self.bytes, at: index) else {
            throw JSONSyntaxError("a \\u escape needs four hex digits", at: index)
        }
        return unit
    }

    /// The UTF-16 unit of the four hex digits at `index` of `bytes` (at least four bytes on), or nil when one is not
    /// a hex digit: the scanner's check, and ``JSONDocument``'s unescaping of what it checked.
    static func hexUnit(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt16? {
        var unit: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = Self.hexValue(bytes[index + offset]) else { return nil }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Scans a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number(parent: Int32) throws(JSONSyntaxError) {
        let start = self.position
        var index = start
        if self.byte(at: index) == UInt8(ascii: "-") { index += 1 }
        guard let first = self.byte(at: index), Self.isDigit(first) else {
            throw JSONSyntaxError("a number needs a digit", at: index)
        }
        index += 1
        if first == UInt8(ascii: "0"), let next = self.byte(at: index), Self.isDigit(next) {
            throw JSONSyntaxError("a number with a leading zero", at: start)
        }
        index = self.digits(from: index)
        var integral = true
        if self.byte(at: index) == UInt8(ascii: ".") {
            integral = false
            let fraction = self.digits(from: index + 1)
            guard fraction > index + 1 else { throw JSONSyntaxError("a fraction needs a digit", at: index) }
            index = fraction
        }
        if let marker = self.byte(at: index), marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            integral = false
            index += 1
            if let sign = self.byte(at: index), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            let exponent = self.digits(from: index)
            guard exponent > index else { throw JSONSyntaxError("an exponent needs a digit", at: index) }
            index = exponent
        }
        let node = self.append(
            JSONNode(kind: .number, flag: integral, start: Int32(start), end: Int32(index), parent: parent))
        self.nodes[node].next = Int32(self.nodes.count)
        self.position = index
    }

    /// Scans `true`, `false` or `null`.
    private mutating func literal(
        _ text: StaticString, kind: JSONNode.Kind, flag: Bool, parent: Int32
    ) throws(JSONSyntaxError) {
        let length = text.utf8CodeUnitCount
        let start = self.position
        let matches = text.withUTF8Buffer { expected in
            start + length <= self.bytes.count && (0..<length).allSatisfy { self.bytes[start + $0] == expected[$0] }
        }
        guard matches else { throw JSONSyntaxError("unexpected character", at: self.position) }
        let node = self.append(
            JSONNode(
                kind: kind, flag: flag, start: Int32(self.position), end: Int32(self.position + length), parent: parent)
        )
        self.nodes[node].next = Int32(self.nodes.count)
        self.position += length
    }

    // MARK: Helpers

    /// Appends a node and returns its index.
    private mutating func append(_ node: JSONNode) -> Int {
        self.nodes.append(node)
        return self.nodes.count - 1
    }

    /// Records an object's or array's member count, end and next node once its contents are scanned.
    private mutating func close(_ index: Int, count: Int32) {
        self.nodes[index].count = count
        self.nodes[index].end = Int32(self.position)
        self.nodes[index].next = Int32(self.nodes.count)
    }

    /// The index after a run of digits starting at `index`.
    private func digits(from index: Int) -> Int {
        var index = index
        while let byte = self.byte(at: index), Self.isDigit(byte) { index += 1 }
        return index
    }

    private func byte(at index: Int) -> UInt8? {
        index < self.bytes.count ? self.bytes[index] : nil
    }

    private func peek() -> UInt8? {
        self.byte(at: self.position)
    }

    /// The value of a hex digit, or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// Skips JSON whitespace: space, tab, line feed, carriage return.
    private mutating func skipWhitespace() {
        while self.position < self.bytes.count {
            switch self.bytes[self.position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): self.position += 1
            default: return
            }
        }
    }
}

// MARK: Errors

/// Why a document is not JSON, and where.
struct JSONSyntaxError: Error {
    var reason: String
    var offset: Int

    init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }
}
