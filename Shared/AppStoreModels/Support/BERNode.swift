/// A minimal, bounds-checked BER reader (definite and indefinite lengths), enough to walk PKCS#7 app
/// receipts. Malformed input yields nil, never a crash.
struct BERNode {
    /// The identifier octet (class, constructed bit and tag number for tags below 31).
    let identifier: UInt8
    /// The children of a constructed node.
    let children: [BERNode]
    /// The content of a primitive node.
    let content: ArraySlice<UInt8>

    var isConstructed: Bool { self.identifier & 0x20 != 0 }
    /// The tag number (low five bits).
    var tagNumber: UInt8 { self.identifier & 0x1F }

    /// The bytes of a primitive node, or the concatenated bytes of a constructed one (BER string chunks).
    var bytes: [UInt8] {
        self.isConstructed ? self.children.flatMap(\.bytes) : Array(self.content)
    }

    /// Parses exactly one node filling `bytes` (trailing bytes are refused).
    static func parse(_ bytes: [UInt8]) -> BERNode? {
        var index = bytes.startIndex
        guard let node = Self.parse(bytes[...], at: &index, depth: 0), index == bytes.endIndex else { return nil }
        return node
    }

    /// Parses every node of a constructed content.
    static func parseSequence(_ bytes: ArraySlice<UInt8>) -> [BERNode]? {
        var nodes: [BERNode] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let node = Self.parse(bytes, at: &index, depth: 0) else { return nil }
            nodes.append(node)
        }
        return nodes
    }

    /// Parses one node at `index`, advancing it past the node (and past an end-of-contents marker).
    private static func parse(_ bytes: ArraySlice<UInt8>, at index: inout Int, depth: Int) -> BERNode? {
        guard depth < 32, index < bytes.endIndex else { return nil }
        let identifier = bytes[index]
        guard identifier & 0x1F != 0x1F else { return nil }  // multi-byte tags do not occur in receipts
        index += 1
        guard index < bytes.endIndex else { return nil }
        let first = bytes[index]
        index += 1
        if first == 0x80 {  // indefinite length: children until 00 00
            guard identifier & 0x20 != 0 else { return nil }
            var children: [BERNode] = []
            while true {
                guard index + 1 < bytes.endIndex else { return nil }
                if bytes[index] == 0, bytes[index + 1] == 0 {
                    index += 2
                    return BERNode(identifier: identifier, children: children, content: [])
                }
                guard let child = Self.parse(bytes, at: &index, depth: depth + 1) else { return nil }
                children.append(child)
            }
        }
        var length = 0
        if first & 0x80 == 0 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4, index + count <= bytes.endIndex else { return nil }
            for byte in bytes[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length <= bytes.endIndex - index else { return nil }
        let content = bytes[index..<(index + length)]
        index += length
        guard identifier & 0x20 != 0 else { return BERNode(identifier: identifier, children: [], content: content) }
        var childIndex = content.startIndex
        var children: [BERNode] = []
        while childIndex < content.endIndex {
            guard let child = Self.parse(content, at: &childIndex, depth: depth + 1) else { return nil }
            children.append(child)
        }
        return BERNode(identifier: identifier, children: children, content: [])
    }
}
