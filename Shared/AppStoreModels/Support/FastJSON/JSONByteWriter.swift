import Foundation

/// The output of one ``FastJSONEncoder`` run: UTF-8 bytes written as values are encoded, with the objects and arrays
/// still open on a stack. The `Encoder` protocol never says when a container is finished, so a container is closed
/// when something is written to a container below it on the stack, or at the end (synthesized `Encodable` code
/// finishes a nested value before it goes on with its parent). With sorted keys, an object's members are put in order
/// of their keys' UTF-8 bytes when it closes, as `JSONEncoder` orders them.
///
/// Anything this writer does not reproduce byte for byte (a container written to after it was closed, a key that
/// needs escaping or is repeated, `Date`, `Data`, `URL`, `Decimal`, a super encoder) marks the run `unsupported`, and
/// the encoder gives the value to `JSONEncoder` instead.
final class JSONByteWriter {
    /// An object or array being written.
    struct Open {
        var isObject: Bool
        /// Identifies this container among all opened in the run (a closed one's id is never reused).
        var id: Int
        /// Where its first member starts (after the `{` or `[`).
        var start: Int
        var count = 0
        /// Each member's start and its key's end (the byte after the key's closing quote), for sorting.
        var members: [(start: Int, keyEnd: Int)] = []
    }

    /// What a run changes, behind a pointer: a class's stored properties are checked for exclusive access at run
    /// time on every use, which cost a fifth of the encoding; a pointee is not.
    struct State {
        var bytes: [UInt8] = []
        var stack: [Open] = []
        var nextId = 0
        var unsupported = false
        var pendingSlot = -1
    }

    private let state: UnsafeMutablePointer<State>
    let sortsKeys: Bool
    let escapesSlashes: Bool

    /// The JSON written so far.
    var bytes: [UInt8] {
        get { self.state.pointee.bytes }
        _modify { yield &self.state.pointee.bytes }
    }
    /// The containers still open, outermost first.
    private(set) var stack: [Open] {
        get { self.state.pointee.stack }
        _modify { yield &self.state.pointee.stack }
    }
    private var nextId: Int {
        get { self.state.pointee.nextId }
        _modify { yield &self.state.pointee.nextId }
    }
    /// Set when the value needs something this writer does not reproduce: the result is thrown away.
    var unsupported: Bool {
        get { self.state.pointee.unsupported }
        _modify { yield &self.state.pointee.unsupported }
    }
    /// The stack depth whose value slot is waiting to be filled (a value's `encode(to:)` is running), or -1.
    var pendingSlot: Int {
        get { self.state.pointee.pendingSlot }
        _modify { yield &self.state.pointee.pendingSlot }
    }

    init(sortsKeys: Bool, escapesSlashes: Bool) {
        self.sortsKeys = sortsKeys
        self.escapesSlashes = escapesSlashes
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: State())
        self.state.pointee.bytes.reserveCapacity(512)
    }

    deinit {
        self.state.deinitialize(count: 1)
        self.state.deallocate()
    }

    // MARK: Containers

    /// Opens an object or array at depth `depth` (closing any deeper ones first); returns its id.
    func open(isObject: Bool, depth: Int) -> Int {
        self.close(above: depth - 1)
        self.bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        self.nextId += 1
        self.stack.append(Open(isObject: isObject, id: self.nextId, start: self.bytes.count))
        return self.nextId
    }

    /// Prepares to write a member into the container `id` at `depth`: closes deeper containers, writes the comma,
    /// and notes where the member starts. False (and the run unsupported) when that container is closed already.
    func beginMember(of id: Int, depth: Int) -> Bool {
        guard depth < self.stack.count, self.stack[depth].id == id else {
            self.unsupported = true
            return false
        }
        self.close(above: depth)
        if self.stack[depth].count > 0 { self.bytes.append(UInt8(ascii: ",")) }
        self.stack[depth].count += 1
        if self.sortsKeys && self.stack[depth].isObject {
            self.stack[depth].members.append((self.bytes.count, 0))
        }
        return true
    }

    /// Writes an object member's key and colon (after ``beginMember(of:depth:)``).
    func writeKey(_ key: String, depth: Int) {
        self.bytes.append(UInt8(ascii: "\""))
        var key = key
        key.withUTF8 { utf8 in
            if utf8.contains(where: self.needsEscape) { self.unsupported = true }
            self.bytes.append(contentsOf: utf8)
        }
        self.bytes.append(UInt8(ascii: "\""))
        if self.sortsKeys, let last = self.stack[depth].members.indices.last {
            self.stack[depth].members[last].keyEnd = self.bytes.count
        }
        self.bytes.append(UInt8(ascii: ":"))
    }

    /// Closes every container deeper than `depth` (-1: all of them).
    func close(above depth: Int) {
        while self.stack.count > depth + 1 {
            let open = self.stack.removeLast()
            if open.isObject && self.sortsKeys && open.members.count > 1 { self.sortMembers(of: open) }
            self.bytes.append(open.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Rewrites a closing object's members in order of their keys' bytes (nothing to do when they are in order
    /// already); a repeated key makes the run unsupported (`JSONEncoder` keeps the last value).
    private func sortMembers(of open: Open) {
        let end = self.bytes.count
        var spans: [(start: Int, keyEnd: Int, end: Int)] = []
        spans.reserveCapacity(open.members.count)
        for (index, member) in open.members.enumerated() {
            // A member ends before the comma that starts the next one, or at the object's end.
            let memberEnd = index + 1 < open.members.count ? open.members[index + 1].start - 1 : end
            spans.append((member.start, member.keyEnd, memberEnd))
        }
        let sorted: [UInt8]? = self.bytes.withUnsafeBufferPointer { buffer in
            /// The order of two members' keys (without their quotes): negative, zero (the same key) or positive.
            func order(_ left: (start: Int, keyEnd: Int, end: Int), _ right: (start: Int, keyEnd: Int, end: Int))
                -> Int
            {
                let leftCount = left.keyEnd - left.start - 2, rightCount = right.keyEnd - right.start - 2
                let common = memcmp(
                    buffer.baseAddress! + left.start + 1, buffer.baseAddress! + right.start + 1,
                    min(leftCount, rightCount))
                return common != 0 ? Int(common) : leftCount - rightCount
            }
            var inOrder = true
            for (left, right) in zip(spans, spans.dropFirst()) where order(left, right) >= 0 {
                inOrder = false
                break
            }
            if inOrder { return nil }
            spans.sort { order($0, $1) < 0 }
            for (left, right) in zip(spans, spans.dropFirst()) where order(left, right) == 0 {
                self.unsupported = true
                return nil
            }
            var sorted: [UInt8] = []
            sorted.reserveCapacity(end - open.start)
            for (index, span) in spans.enumerated() {
                if index > 0 { sorted.append(UInt8(ascii: ",")) }
                sorted.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[span.start..<span.end]))
            }
            return sorted
        }
        if let sorted { self.bytes.replaceSubrange(open.start..<end, with: sorted) }
    }

    // MARK: Values

    /// Writes a string, escaped as `JSONEncoder` escapes it.
    func writeString(_ string: String) {
        Self.appendString(string, escapingSlashes: self.escapesSlashes, to: &self.bytes)
    }

    /// Appends a string to `bytes` in quotes, escaped as `JSONEncoder` escapes it: control characters, quotes,
    /// backslashes, and slashes when `escapingSlashes` (``JSONMemberWriter`` writes with this too).
    static func appendString(_ string: String, escapingSlashes: Bool, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var plainStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard Self.needsEscape(byte, escapingSlashes: escapingSlashes) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
                plainStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(UInt8(ascii: "u"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0xF))
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `JSONEncoder` escapes this byte of a string: a control character, a quote, a backslash, and a slash
    /// unless told not to.
    @inline(__always)
    func needsEscape(_ byte: UInt8) -> Bool {
        Self.needsEscape(byte, escapingSlashes: self.escapesSlashes)
    }

    /// Whether `JSONEncoder` escapes this byte of a string, slashes escaped or not.
    @inline(__always)
    static func needsEscape(_ byte: UInt8, escapingSlashes: Bool) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
            || (byte == UInt8(ascii: "/") && escapingSlashes)
    }

    /// A lowercase hexadecimal digit (as `JSONEncoder` writes `\u00XX`).
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Writes an integer in decimal.
    func writeInteger<Value: FixedWidthInteger>(_ value: Value) {
        Self.appendInteger(value, to: &self.bytes)
    }

    /// Appends an integer in decimal to `bytes` (as its `description` reads), digit by digit without a string.
    static func appendInteger<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let first = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[first...].reverse()
    }

    /// Writes a floating-point number as `JSONEncoder` does (its description, without a trailing `.0`); a value
    /// that is not finite is an error there too.
    func writeFloatingPoint<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Value) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: [], debugDescription: "\(value) is not valid JSON"))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { self.bytes.append(contentsOf: $0) }
    }

    /// Writes a literal (`null`, `true`, `false`).
    func writeLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
    }
}
