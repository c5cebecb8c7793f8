import AppStoreModels

/// A customer's access to one product, as stored in the `entitlements` table and carried in events.
public struct EntitlementState: Codable, Hashable, Sendable {
    /// The customer: the `appAccountToken` when the app set a valid one, else the `originalTransactionId`.
    public var customer: String
    public var productId: String
    public var active: Bool
    public var originalTransactionId: String
    /// The transaction that last changed this entitlement.
    public var sourceTransactionId: String
    /// `PURCHASED`, `FAMILY_SHARED`, `ASSIGNED`, or a value Apple adds later.
    public var ownershipType: String
    /// When access began (the transaction's purchase date), epoch milliseconds.
    public var validFrom: Int64?
    /// When access ends (expiry, or the end of a grace period); nil for lifetime products.
    public var validUntil: Int64?
    /// When the App Store refunded or revoked the source transaction.
    public var revokedAt: Int64?
    public var revocationReason: Int32?
    public var revocationType: String?
    /// The entitlement the product grants (see ``EntitlementCatalog``); schema version 2.
    public var entitlementId: String?

    public init(
        customer: String, productId: String, active: Bool, originalTransactionId: String, sourceTransactionId: String,
        ownershipType: String, validFrom: Int64? = nil, validUntil: Int64? = nil, revokedAt: Int64? = nil,
        revocationReason: Int32? = nil, revocationType: String? = nil, entitlementId: String? = nil
    ) {
        self.customer = customer
        self.productId = productId
        self.active = active
        self.originalTransactionId = originalTransactionId
        self.sourceTransactionId = sourceTransactionId
        self.ownershipType = ownershipType
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.entitlementId = entitlementId
    }
}

/// What the database holds for a subject before a notification is applied.
public struct SubjectState: Hashable, Sendable {
    /// The `signedDate` of the newest notification applied to this subject.
    public var lastSignedDate: Int64?
    /// The entitlement this subject grants, if any.
    public var entitlement: EntitlementState?
    /// The app user the subject is bound to (`customer_bindings`), which names its customer before any
    /// appAccountToken or originalTransactionId.
    public var boundCustomer: String?
    /// The subscription this one was migrated to (`subscription_migrations`): its later notifications move nothing.
    public var migratedTo: String?
    /// The subscription migrated to this one, when this input is the first of it the updater applies (the
    /// repository recorded the migration under both subjects' locks): its entitlement moves here.
    public var migration: SubjectMigration?

    public init(
        lastSignedDate: Int64? = nil, entitlement: EntitlementState? = nil, boundCustomer: String? = nil,
        migratedTo: String? = nil, migration: SubjectMigration? = nil
    ) {
        self.lastSignedDate = lastSignedDate
        self.entitlement = entitlement
        self.boundCustomer = boundCustomer
        self.migratedTo = migratedTo
        self.migration = migration
    }

    /// The customer a purchase of this subject belongs to: the bound app user, else ``CustomerKey``.
    public func customer(of transaction: JWSTransactionDecodedPayload, renewalInfo: JWSRenewalInfoDecodedPayload?)
        -> String
    {
        self.boundCustomer ?? CustomerKey.of(transaction: transaction, renewalInfo: renewalInfo)
    }

    /// The stored entitlement as seen by `customer`, and the customer it was stored under when that differs
    /// (its rows are about to move).
    func rekeyed(to customer: String) -> (entitlement: EntitlementState?, movedFrom: String?) {
        guard var entitlement = self.entitlement, entitlement.customer != customer else {
            return (self.entitlement, nil)
        }
        let previous = entitlement.customer
        entitlement.customer = customer
        return (entitlement, previous)
    }
}

/// A subscription the App Store migrated to another (the new one's transactions name it
/// `previousOriginalTransactionId`), as the repository found it when it recorded the migration.
public struct SubjectMigration: Hashable, Sendable {
    /// The previous subscription's originalTransactionId.
    public var previousOriginalTransactionId: String
    /// The customer the new subscription keeps: the previous one's bound app user, else its newest entitlement's
    /// customer, else what the new one's transaction names.
    public var customer: String?
    /// The previous subscription's newest entitlement, as it was before the migration removed it (nil: none stored).
    public var previousEntitlement: EntitlementState?

    public init(previousOriginalTransactionId: String, customer: String?, previousEntitlement: EntitlementState?) {
        self.previousOriginalTransactionId = previousOriginalTransactionId
        self.customer = customer
        self.previousEntitlement = previousEntitlement
    }
}
