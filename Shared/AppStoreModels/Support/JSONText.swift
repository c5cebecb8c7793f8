/// Small JSON texts written by hand on hot HTTP paths (ingest's answers, customer-api's bodies), where a
/// general-purpose serializer cost more than the work it reported on.
public enum JSONText {
    /// A string as a JSON string literal: `"` and `\` escaped, control characters as their short forms or
    /// `\uXXXX`, everything else as is.
    public static func quoted(_ text: String) -> String {
        if Self.needsNoEscapes(text) {
            return "\"" + text + "\""  // nothing to escape: ids, codes, most messages
        }
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Appends `text` as a JSON string literal (``quoted(_:)``'s bytes) to `out`, without a `String` in between when
    /// nothing needs escaping.
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        guard Self.needsNoEscapes(text) else {
            out.append(contentsOf: Self.quoted(text).utf8)
            return
        }
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: text.utf8)
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `text` is its own JSON string literal's contents: no quote, backslash or control character.
    private static func needsNoEscapes(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    /// A flat object of strings, keys sorted.
    public static func object(_ object: [String: String]) -> String {
        "{" + object.keys.sorted().map { Self.quoted($0) + ":" + Self.quoted(object[$0]!) }.joined(separator: ",") + "}"
    }
}
