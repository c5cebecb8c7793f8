import Foundation

/// Reads transaction identifiers out of a PKCS#7 app receipt (the StoreKit 1 `appStoreReceiptURL` data,
/// and Xcode's StoreKit-testing receipts).
///
/// The receipt's signature is **not** checked: use the identifiers only to look transactions up with the
/// App Store Server API, whose answers are signed. Structure: ContentInfo → SignedData → encapsulated
/// content (an OCTET STRING, chunked in BER) → a SET of attributes; attribute 17 is an in-app purchase,
/// itself a SET of attributes in which 1703 is the transaction identifier.
public enum AppReceipt {
    private static let inAppPurchaseType = 17
    private static let transactionIdentifierType = 1703

    /// Every in-app purchase's transaction identifier, in receipt order; nil when the text is not a receipt.
    public static func transactionIds(fromBase64 receipt: String) -> [String]? {
        guard let der = Data(base64Encoded: receipt.trimmingCharacters(in: .whitespacesAndNewlines), options: .ignoreUnknownCharacters),
              let contentInfo = BERNode.parse(Array(der)),
              contentInfo.children.count >= 2,
              let signedData = contentInfo.children[1].children.first,  // [0] EXPLICIT SignedData
              signedData.children.count >= 3,
              signedData.children[2].children.count >= 2,  // encapContentInfo
              let eContent = signedData.children[2].children[1].children.first,  // [0] EXPLICIT OCTET STRING
              let attributes = Self.attributes(in: eContent.bytes)
        else { return nil }
        return attributes.filter { $0.type == Self.inAppPurchaseType }.compactMap { purchase in
            Self.attributes(in: purchase.value)?.first { $0.type == Self.transactionIdentifierType }
                .flatMap { Self.string(in: $0.value) }
        }
    }

    /// The `(type, value)` pairs of a receipt attribute SET.
    private static func attributes(in bytes: [UInt8]) -> [(type: Int, value: [UInt8])]? {
        guard let set = BERNode.parse(bytes), set.isConstructed else { return nil }
        return set.children.compactMap { attribute in
            guard attribute.children.count == 3, attribute.children[0].tagNumber == 2,
                  attribute.children[0].content.count <= 4
            else { return nil }
            let type = attribute.children[0].content.reduce(0) { $0 << 8 | Int($1) }
            return (type, attribute.children[2].bytes)
        }
    }

    /// The text of an encoded UTF8String, IA5String or PrintableString.
    private static func string(in bytes: [UInt8]) -> String? {
        guard let node = BERNode.parse(bytes), [0x0C, 0x16, 0x13].contains(node.identifier) else { return nil }
        return String(decoding: node.content, as: UTF8.self)
    }
}
