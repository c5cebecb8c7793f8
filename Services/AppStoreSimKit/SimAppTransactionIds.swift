/// The sim's appTransactionIds: one per customer and environment, as at Apple (one app transaction per account
/// and app). A customer's purchases have original ids `K·10¹² + offset + index·100` (K 2: subscriptions, 3:
/// non-consumables, 4: consumables; the offset 10¹³ in Sandbox), and their app transaction is `7·10¹² + offset +
/// index·100`, so it is found again from any of them, and they from it.
enum SimAppTransactionIds {
    /// The first digit of each kind of original transaction id.
    static let purchaseKinds: [Int64] = [2, 3, 4]
    private static let kindUnit: Int64 = 1_000_000_000_000
    private static let sandboxOffset: Int64 = 10_000_000_000_000

    /// The appTransactionId of the customer an original transaction id belongs to.
    static func appTransactionId(forOriginal original: String) -> String {
        guard let (_, offset, rest) = Self.parts(original) else { return "7" + original.dropFirst() }
        return String(7 * Self.kindUnit + offset + rest)
    }

    /// The original transaction ids an appTransactionId may stand for, one per kind of purchase.
    static func originalCandidates(forAppTransactionId id: String) -> [String] {
        guard let (kind, offset, rest) = Self.parts(id), kind == 7 else { return [] }
        return Self.purchaseKinds.map { String($0 * Self.kindUnit + offset + rest) }
    }

    /// The kind digit, the environment offset and the customer part (below 10¹²) of an id of this form.
    private static func parts(_ id: String) -> (kind: Int64, offset: Int64, rest: Int64)? {
        guard let value = Int64(id), value >= Self.kindUnit else { return nil }
        let offset: Int64 = value >= Self.sandboxOffset ? Self.sandboxOffset : 0
        return ((value - offset) / Self.kindUnit, offset, (value - offset) % Self.kindUnit)
    }
}
