import Foundation

/// Reads a transaction identifier out of an old-style (StoreKit 1) transaction receipt.
///
/// Such a receipt is base64 of a NeXT-style property list whose `purchase-info` entry is itself base64 of a
/// property list holding `"transaction-id" = "…";`. It carries no signature this product can check; use the
/// identifier only to look the transaction up with the App Store Server API.
public enum LegacyReceipt {
    /// Returns the `transaction-id` of a legacy transaction receipt, or nil when there is none.
    public static func transactionId(fromBase64 receipt: String) -> String? {
        guard let outer = decodeBase64Text(receipt),
            let purchaseInfo = quotedValue(forKey: "purchase-info", in: outer),
            let inner = decodeBase64Text(purchaseInfo)
        else { return nil }
        return quotedValue(forKey: "transaction-id", in: inner)
    }

    /// Decodes standard base64 (surrounding whitespace ignored) into UTF-8 text.
    private static func decodeBase64Text(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: trimmed) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// Finds `"key" = "value";` in a NeXT-style property list and returns the value.
    private static func quotedValue(forKey key: String, in plist: String) -> String? {
        guard let keyRange = plist.range(of: "\"\(key)\"") else { return nil }
        let rest = plist[keyRange.upperBound...]
        guard let equals = rest.firstIndex(of: "="),
            let open = rest[equals...].firstIndex(of: "\"")
        else { return nil }
        let valueStart = rest.index(after: open)
        guard let close = rest[valueStart...].firstIndex(of: "\"") else { return nil }
        return String(rest[valueStart..<close])
    }
}
