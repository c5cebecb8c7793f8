import Foundation
import SwiftASN1

/// Reads transaction identifiers out of a PKCS#7 app receipt (the StoreKit 1 `appStoreReceiptURL` data,
/// and Xcode's StoreKit-testing receipts), with swift-asn1's BER reader (receipts use indefinite lengths and
/// chunked strings, which DER forbids).
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
        guard
            let der = Data(
                base64Encoded: receipt.trimmingCharacters(in: .whitespacesAndNewlines),
                options: .ignoreUnknownCharacters),
            let contentInfo = try? BER.parse(Array(der)),
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
        guard let set = try? BER.parse(bytes), case .constructed = set.content else { return nil }
        return set.children.compactMap { attribute in
            guard attribute.children.count == 3, attribute.children[0].identifier == .integer,
                case .primitive(let type) = attribute.children[0].content, type.count <= 4
            else { return nil }
            return (type.reduce(0) { $0 << 8 | Int($1) }, attribute.children[2].bytes)
        }
    }

    /// The text of an encoded UTF8String, IA5String or PrintableString.
    private static func string(in bytes: [UInt8]) -> String? {
        guard let node = try? BER.parse(bytes), [.utf8String, .ia5String, .printableString].contains(node.identifier),
            case .primitive(let text) = node.content
        else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}

extension ASN1Node {
    /// The nodes inside a constructed node (none for a primitive one).
    fileprivate var children: [ASN1Node] {
        if case .constructed(let nodes) = self.content { return Array(nodes) }
        return []
    }

    /// The bytes of a primitive node, or the concatenated bytes of a constructed one (BER string chunks).
    fileprivate var bytes: [UInt8] {
        switch self.content {
        case .primitive(let bytes): Array(bytes)
        case .constructed(let nodes): nodes.flatMap(\.bytes)
        }
    }
}
