/// Why a purchase may move from the customer it belongs to, as an app's purchase record carries it (the check that
/// a proof holds for its transaction is the rules', `Entitlements`).
public enum TransferProof: Codable, Hashable, Sendable {
    /// StoreKit 2's device verification: the device that holds the signed transaction sent its
    /// `AppStore.deviceVerificationID`, and SHA-384 of the transaction's nonce and that id equals the
    /// transaction's `deviceVerification` (Apple's defence against replayed transactions).
    case device(verificationId: String)
    /// StoreKit 2's signed AppTransaction, fresh, whose device verification matched the device's
    /// `AppStore.deviceVerificationID` and whose `appTransactionId` is the purchase's: the buyer's device vouches for
    /// the purchase whatever transaction (id, receipt, old signed one) came with it.
    case appTransaction(verificationId: String, appTransactionId: String)
    /// An operator moved it (console or `iapctl resync --policy transfer --operator NAME`); recorded with who.
    case admin(operator: String)

    /// How the proof is recorded beside the binding (`device`, `app-transaction` or `admin:NAME`).
    public var recorded: String {
        switch self {
        case .device: "device"
        case .appTransaction: "app-transaction"
        case .admin(let name): "admin:" + name
        }
    }
}
