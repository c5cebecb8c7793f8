import AppStoreModels
import Crypto
import Entitlements
import Foundation
import PipelineRecords
import Testing

/// The ownership rules as a table: who may claim a purchase, and what a transfer needs.
@Suite struct PurchaseOwnershipTests {
    typealias Owner = PurchaseOwnership.Owner
    static let token = "0f6f2a4e-8d1c-4b7a-a3e2-6c1d9b5e7f20"
    static let admin = TransferProof.admin(operator: "agent-7")
    static let device = TransferProof.device(verificationId: "9E2D7C1A-5B3F-4E8D-A6C2-1F0B8D4E3A57")
    static let app = TransferProof.appTransaction(
        verificationId: "9E2D7C1A-5B3F-4E8D-A6C2-1F0B8D4E3A57", appTransactionId: "7")

    @Test func aPurchaseBelongsToItsBindingElseItsDeclaredTokenElseNobody() {
        let cases: [(Owner, AppPurchaseRecord.ConflictPolicy, TransferProof?, PurchaseOwnership.Decision)] = [
            // Nobody owns it: only proof from the buyer's device (or an operator's word) binds it.
            (Owner(), .refuse, nil, .needsProof),
            (Owner(), .transfer, nil, .needsProof),
            (Owner(), .refuse, Self.device, .bind),
            (Owner(), .refuse, Self.app, .bind),
            (Owner(), .refuse, Self.admin, .bind),
            (Owner(accountToken: Self.token), .refuse, Self.device, .refuse(owner: Self.token)),
            (Owner(boundTo: "me"), .refuse, nil, .alreadyOwned),
            (Owner(boundTo: "other"), .refuse, nil, .refuse(owner: "other")),
            (Owner(boundTo: "other"), .transfer, nil, .refuse(owner: "other")),
            (Owner(boundTo: "other"), .refuse, Self.admin, .refuse(owner: "other")),
            (Owner(boundTo: "other"), .transfer, Self.admin, .transfer(from: "other", proof: Self.admin)),
            (Owner(accountToken: Self.token), .refuse, nil, .refuse(owner: Self.token)),
            (Owner(accountToken: Self.token), .transfer, nil, .refuse(owner: Self.token)),
            (Owner(accountToken: Self.token, tokenDeclaredTo: "me"), .refuse, nil, .bind),
            (Owner(accountToken: Self.token, tokenDeclaredTo: "other"), .refuse, nil, .refuse(owner: "other")),
            (
                Owner(accountToken: Self.token, tokenDeclaredTo: "other"), .transfer, Self.admin,
                .transfer(from: "other", proof: Self.admin)
            ),
            (
                Owner(boundTo: "other", accountToken: Self.token, tokenDeclaredTo: "me"), .refuse, nil,
                .refuse(owner: "other")
            ),
        ]
        for (owner, policy, proof, expected) in cases {
            #expect(
                PurchaseOwnership.decide(claimant: "me", owner: owner, policy: policy, proof: proof) == expected,
                "\(owner) \(policy)")
        }
    }

    @Test func aDeviceVerifiesOnlyTheTransactionHandedToIt() {
        let device = "9E2D7C1A-5B3F-4E8D-A6C2-1F0B8D4E3A57", nonce = "3c8e1f6a-7d2b-4a9e-b5c1-8e0f2d6a4b93"
        var transaction = JWSTransactionDecodedPayload()
        transaction.deviceVerificationNonce = nonce
        transaction.deviceVerification = Data(SHA384.hash(data: Data((nonce + device.lowercased()).utf8)))
            .base64EncodedString()
        #expect(TransferProof.deviceVerifies(transaction, verificationId: device), "ids compare lowercased")
        #expect(TransferProof.deviceVerifies(transaction, verificationId: device.lowercased()))
        #expect(!TransferProof.deviceVerifies(transaction, verificationId: nonce), "another device")
        #expect(!TransferProof.deviceVerifies(transaction, verificationId: "not a uuid"))
        var unverifiable = transaction
        unverifiable.deviceVerification = nil
        #expect(
            !TransferProof.deviceVerifies(unverifiable, verificationId: device),
            "a transaction without the hash (an API answer) proves nothing")
        #expect(TransferProof.device(verificationId: device).holds(for: transaction))
        #expect(!TransferProof.device(verificationId: nonce).holds(for: transaction))
        #expect(!TransferProof.admin(operator: "").holds(for: transaction), "an admin proof names who")
    }

    @Test func anAppTransactionVouchesOnlyForTheTransactionsOfItsAppTransactionId() {
        var transaction = JWSTransactionDecodedPayload()
        let proof = TransferProof.appTransaction(verificationId: "device", appTransactionId: "705000000000123")
        #expect(!proof.holds(for: transaction), "a transaction without appTransactionId")
        transaction.appTransactionId = "705000000000124"
        #expect(!proof.holds(for: transaction), "another account's purchase")
        transaction.appTransactionId = "705000000000123"
        #expect(proof.holds(for: transaction))
        #expect(
            !TransferProof.appTransaction(verificationId: "device", appTransactionId: "").holds(
                for: JWSTransactionDecodedPayload()))
        #expect(proof.recorded == "app-transaction" && Self.device.recorded == "device")
    }

    @Test func tokensAreValidUUIDsLowercased() {
        var transaction = JWSTransactionDecodedPayload()
        transaction.appAccountToken = Self.token.uppercased()
        #expect(PurchaseOwnership.accountToken(of: transaction) == Self.token)
        transaction.appAccountToken = "00000000-0000-0000-0000-000000000000"
        #expect(PurchaseOwnership.accountToken(of: transaction) == nil)
        transaction.appAccountToken = "junk"
        #expect(PurchaseOwnership.accountToken(of: transaction) == nil)
    }
}
