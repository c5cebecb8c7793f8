import AppStoreModels

/// Splits a batch's inputs into waves that can each be written with one statement per table: an input goes
/// into the wave after the last one holding an earlier input it shares a row with (its subject, its log id,
/// its transaction, its subscription or renewal info), so every subject's inputs keep their order and no
/// statement writes one row twice.
public enum Waves {
    /// The waves, as indices into `inputs`, in the order they must be applied (each in input order).
    public static func split(_ inputs: [PreparedInput]) -> [[Int]] {
        var waveOfKey: [String: Int] = [:]
        var waves: [[Int]] = []
        for (index, input) in inputs.enumerated() {
            let keys = Self.rowKeys(of: input)
            let wave = keys.compactMap { waveOfKey[$0] }.max().map { $0 + 1 } ?? 0
            if wave == waves.count { waves.append([]) }
            waves[wave].append(index)
            for key in keys { waveOfKey[key] = wave }
        }
        return waves
    }

    /// The rows an input writes that another input may write too, within its environment and app.
    static func rowKeys(of input: PreparedInput) -> [String] {
        let scope = input.entry.scope
        var keys = ["s:" + scope + input.entry.subject, "l:" + input.entry.id]
        // A migration ends the previous subscription's entitlement: its own inputs go to another wave.
        if let previous = input.migratedFrom { keys.append("s:" + scope + previous) }
        if let transaction = input.notification.transaction {
            if let id = transaction.transactionId { keys.append("t:" + scope + id) }
            if let original = transaction.originalTransactionId { keys.append("o:" + scope + original) }
        }
        if let original = input.notification.renewalInfo?.originalTransactionId { keys.append("o:" + scope + original) }
        return keys
    }
}
