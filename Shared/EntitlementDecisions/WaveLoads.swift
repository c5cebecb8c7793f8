public import Entitlements

/// What the updater reads for one input of a wave before deciding it, under the subjects' locks.
public struct InputLoad: Hashable, Sendable {
    /// The subject's state before the input; nil when the input was logged before (a duplicate).
    public var state: SubjectState?
    /// Who owns the subject, read for a claim (an app's purchase naming an app user) only.
    public var owner: PurchaseOwnership.Owner?
    /// The subscription the input's was migrated from, read for an input naming one not yet migrated only.
    public var previous: PreviousSubscription?

    public init(state: SubjectState?, owner: PurchaseOwnership.Owner? = nil, previous: PreviousSubscription? = nil) {
        self.state = state
        self.owner = owner
        self.previous = previous
    }
}

/// The stored facts of a subscription another one names as its `previousOriginalTransactionId`.
public struct PreviousSubscription: Hashable, Sendable {
    /// Whether a migration from it was recorded before (then nothing more moves).
    public var migrated: Bool
    /// The app user it is bound to.
    public var boundCustomer: String?
    /// Its newest entitlement row.
    public var entitlement: EntitlementState?

    public init(migrated: Bool, boundCustomer: String?, entitlement: EntitlementState?) {
        self.migrated = migrated
        self.boundCustomer = boundCustomer
        self.entitlement = entitlement
    }
}
