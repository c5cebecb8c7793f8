/// What applying one notification does, for the updater to write in one database transaction.
public struct EntitlementUpdate: Hashable, Sendable {
    /// How the notification log records it.
    public enum Outcome: String, Hashable, Sendable {
        /// State changed (or was confirmed) by this notification.
        case applied
        /// Older than what the subject already reflects: the entitlement does not move, but the transaction,
        /// renewal info and reported facts (refunds, requests, renewal changes) are still stored and published.
        case stale
        /// A notification that changes no entitlement (TEST, summaries, tokens, consent, Advanced Commerce…).
        case ignored
        /// A type this version does not know: logged and passed on untouched.
        case unknownType = "unknown-type"
        /// A refund whose effect on the subscription is unclear: a status request was written instead.
        case awaitingStatus = "awaiting-status"
        /// A purchase the app posted for a user while it is bound to another, under the `refuse` policy:
        /// nothing changed (customer-api answers 409).
        case conflict
    }

    public var outcome: Outcome
    /// Why, in words, for the notification log.
    public var detail: String
    /// The entitlement to store (nil: leave it as it is).
    public var entitlement: EntitlementState?
    /// The entitlement of the subscription's previous product, ended by a product change (upgrade,
    /// crossgrade, downgrade taking effect), to store as well.
    public var superseded: EntitlementState?
    /// The events for the outbox, in order.
    public var events: [EntitlementEvent] = []
    /// A request for refund-resolver, when the state is unclear.
    public var statusRequest: StatusRequest?
    /// Whether the subject's `lastSignedDate` moves to this notification's.
    public var advancesSubject: Bool
    /// The customer the subject's rows were stored under before this change keyed them by another (an app
    /// user bound, an appAccountToken appearing): the repository moves them, so nothing stays active twice.
    public var movedFrom: String?
}
