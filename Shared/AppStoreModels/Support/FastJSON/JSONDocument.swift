import Foundation

/// A scanned JSON document: a copy of its bytes and its tape, shared by the decoders and containers of one
/// ``FastJSONDecoder`` decoding. Reads values from the bytes the tape points at, on demand.
final class JSONDocument {
    /// The document's bytes (owned: copied at creation, freed with the document).
    let bytes: UnsafeMutableBufferPointer<UInt8>
    /// The document's values in document order (``JSONNode``).
    let nodes: [JSONNode]

    /// Copies and scans a document; throws `DecodingError.dataCorrupted` for text that is not JSON.
    init(copying source: UnsafeRawBufferPointer) throws {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(source.count, 1))
        _ = bytes.initialize(from: source)
        do {
            self.nodes = try JSONTapeScanner.scan(UnsafeBufferPointer(rebasing: bytes[0..<source.count]))
        } catch {
            bytes.deallocate()
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "The given data was not valid JSON: \(error.reason) at byte \(error.offset).",
                    underlyingError: error))
        }
        self.bytes = bytes
    }

    deinit {
        self.bytes.deallocate()
    }

    // MARK: Objects

    /// The value node of the first member of the object at `object` named `name` (as `JSONDecoder`, the first of
    /// duplicate keys wins), or nil. Plain ASCII keys are compared byte for byte; the others as Swift strings, so a
    /// key spelled with a canonically equivalent character (K and KELVIN SIGN) matches as it does in `JSONDecoder`.
    func member(named name: String, inObject object: Int) -> Int? {
        var name = name
        return name.withUTF8 { key in
            var keyIndex = object + 1
            for _ in 0..<Int(self.nodes[object].count) {
                let keyNode = self.nodes[keyIndex]
                if keyNode.flag {
                    if self.unescapedString(keyNode) == String(decoding: key, as: UTF8.self) { return keyIndex + 1 }
                } else if Int(keyNode.end - keyNode.start) == key.count,
                    key.isEmpty
                        || memcmp(self.bytes.baseAddress! + Int(keyNode.start), key.baseAddress!, key.count) == 0
                {
                    return keyIndex + 1
                }
                keyIndex = Int(self.nodes[keyIndex + 1].next)
            }
            return nil
        }
    }

    /// The key nodes of the object at `object`, in document order.
    func keyNodes(ofObject object: Int) -> [Int] {
        var keys: [Int] = []
        var keyIndex = object + 1
        for _ in 0..<Int(self.nodes[object].count) {
            keys.append(keyIndex)
            keyIndex = Int(self.nodes[keyIndex + 1].next)
        }
        return keys
    }

    // MARK: Values

    /// The string at `index`, or a type mismatch.
    func string(at index: Int) throws -> String {
        let node = self.nodes[index]
        guard node.kind == .string else { throw self.mismatch(String.self, at: index) }
        return node.flag ? self.unescapedString(node) : self.rawString(node)
    }

    /// The Boolean at `index`, or a type mismatch.
    func bool(at index: Int) throws -> Bool {
        let node = self.nodes[index]
        guard node.kind == .bool else { throw self.mismatch(Bool.self, at: index) }
        return node.flag
    }

    /// The integer at `index`: a number without fraction or exponent, or one whose value is exactly an integer
    /// (`1.0`, `1e3`), as `JSONDecoder` reads it. A number outside the type's range is `dataCorrupted`. Always
    /// inlined, with ``parseInteger(_:as:)``, into the containers' methods for each integer type: called as generic
    /// code, every digit went through `FixedWidthInteger`'s witnesses and the runtime's tuple metadata (~2 % of full
    /// verification, `perf`, 2026-11-29).
    @inline(__always)
    func integer<Integer: FixedWidthInteger>(at index: Int, as type: Integer.Type) throws -> Integer {
        let node = self.nodes[index]
        guard node.kind == .number else { throw self.mismatch(type, at: index) }
        if node.flag, let value = self.parseInteger(node, as: type) { return value }
        if !node.flag, let value = Double(self.rawString(node)), let exact = Integer(exactly: value) { return exact }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: self.codingPath(of: index),
                debugDescription: "Number \(self.rawString(node)) does not fit in \(type)."))
    }

    /// The floating-point number at `index`; one too large for `Double` is `dataCorrupted`.
    func floatingPoint<Number: BinaryFloatingPoint & LosslessStringConvertible>(
        at index: Int, as type: Number.Type
    ) throws -> Number {
        let node = self.nodes[index]
        guard node.kind == .number else { throw self.mismatch(type, at: index) }
        guard let value = Number(self.rawString(node)), value.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: self.codingPath(of: index),
                    debugDescription: "Number \(self.rawString(node)) is not representable in \(type)."))
        }
        return value
    }

    /// Decodes any `Decodable` from the value at `index`. `Data` is read from base64, `URL` and `Decimal` from
    /// their text, as `JSONDecoder` does by default; everything else through its own `init(from:)`.
    func value<Value: Decodable>(_ type: Value.Type, at index: Int) throws -> Value {
        if type == String.self { return try self.string(at: index) as! Value }
        if type == Timestamp.self, self.nodes[index].kind == .number, self.nodes[index].flag {
            // A whole number of milliseconds, as every App Store date is: no decoder, no container.
            return Timestamp(millisecondsSince1970: try self.integer(at: index, as: Int64.self)) as! Value
        }
        if type == Data.self {
            guard let data = Data(base64Encoded: try self.string(at: index)) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: self.codingPath(of: index),
                        debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! Value
        }
        if type == URL.self {
            guard let url = URL(string: try self.string(at: index)) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: self.codingPath(of: index), debugDescription: "Invalid URL string."))
            }
            return url as! Value
        }
        if type == Decimal.self {
            guard self.nodes[index].kind == .number else { throw self.mismatch(type, at: index) }
            guard let decimal = Decimal(string: self.rawString(self.nodes[index])) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: self.codingPath(of: index), debugDescription: "Invalid decimal number."))
            }
            return decimal as! Value
        }
        return try Value(from: JSONNodeDecoder(document: self, index: index))
    }

    // MARK: Errors and paths

    /// A type mismatch for the value at `index`, worded as `JSONDecoder` words it.
    func mismatch(_ type: Any.Type, at index: Int) -> DecodingError {
        let found: String
        switch self.nodes[index].kind {
        case .object: found = "a dictionary"
        case .array: found = "an array"
        case .string: found = "a string"
        case .number: found = "a number"
        case .bool: found = "a boolean"
        case .null: found = "null"
        }
        let context = DecodingError.Context(
            codingPath: self.codingPath(of: index),
            debugDescription: "Expected to decode \(type) but found \(found) instead.")
        return self.nodes[index].kind == .null
            ? DecodingError.valueNotFound(type, context) : DecodingError.typeMismatch(type, context)
    }

    /// The keys and indexes that lead from the document's value to the value at `index`.
    func codingPath(of index: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var child = index
        var parent = Int(self.nodes[child].parent)
        while parent >= 0 {
            if self.nodes[parent].kind == .object {
                keys.append(JSONPathKey(stringValue: (try? self.string(at: child - 1)) ?? ""))
            } else {
                var position = 0
                var cursor = parent + 1
                while cursor < child {
                    cursor = Int(self.nodes[cursor].next)
                    position += 1
                }
                keys.append(JSONPathKey(intValue: position))
            }
            child = parent
            parent = Int(self.nodes[parent].parent)
        }
        return keys.reversed()
    }

    // MARK: Text

    /// A node's bytes as they are in the document (a string without escapes, a number).
    func rawString(_ node: JSONNode) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: self.bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
    }

    /// A string node read the slow way (escapes, non-ASCII bytes), unescaped: the scanner checked every escape,
    /// surrogate pair and UTF-8 sequence.
    private func unescapedString(_ node: JSONNode) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(Int(node.end - node.start))
        var index = Int(node.start)
        let end = Int(node.end)
        while index < end {
            let byte = self.bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let escaped = self.bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(self.hexUnit(at: index))
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    let low = UInt32(self.hexUnit(at: index + 2))
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                out.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
            default: out.append(escaped)  // " \ /
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The UTF-16 unit of four hex digits the scanner checked.
    private func hexUnit(at index: Int) -> UInt16 {
        JSONTapeScanner.hexUnit(in: UnsafeBufferPointer(self.bytes), at: index) ?? 0
    }

    /// The digits of a number without fraction or exponent, or nil when it does not fit.
    @inline(__always)
    private func parseInteger<Integer: FixedWidthInteger>(_ node: JSONNode, as type: Integer.Type) -> Integer? {
        var index = Int(node.start)
        let end = Int(node.end)
        let negative = self.bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value: Integer = 0
        while index < end {
            let digit = Integer(self.bytes[index] &- UInt8(ascii: "0"))
            let (shifted, shiftOverflow) = value.multipliedReportingOverflow(by: 10)
            let (next, digitOverflow) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if shiftOverflow || digitOverflow { return nil }
            value = next
            index += 1
        }
        return value
    }
}

/// A key of a coding path built from the document (a member's name or an element's index).
struct JSONPathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
