/// Why a purchase may move from the customer it belongs to, as an app's purchase record carries it (the check that
/// a proof holds for its transaction is the rules', `Entitlements`).
public enum TransferProof: Codable, Hashable, Sendable {
    /// StoreKit 2's device verification: the device that holds the signed transaction sent its
    /// `AppStore.deviceVerificationID`, and SHA-384 of the transaction's nonce and that id equals the
    /// transaction's `deviceVerification` (Apple's defence against replayed transactions).
    case device(verificationId: String)
    /// An operator moved it (console or `iapctl resync --policy transfer --operator NAME`); recorded with who.
    case admin(operator: String)

    /// How the proof is recorded beside the binding (`device` or `admin:NAME`).
    public var recorded: String {
        switch self {
        case .device: "device"
        case .admin(let name): "admin:" + name
        }
    }
}
