import AppStoreModels
import JWSVerification

// MARK: - EntitlementRules + Context

/// Everything the rules need about one notification, and the common ways of turning access into an update.
struct Context {
    let notification: VerifiedNotification
    let subject: String
    let signedDate: Int64
    /// The notification's type; nil for a status snapshot.
    let type: NotificationTypeV2?
    /// The cause's name: the notification type, or `STATUS_SNAPSHOT`.
    let typeName: String
    let transaction: JWSTransactionDecodedPayload
    let original: String
    let transactionId: String
    let productId: String
    let customer: String
    let current: EntitlementState?

    var cause: EntitlementEvent.Cause {
        EntitlementEvent.Cause(
            notificationUUID: self.notification.payload.notificationUUID ?? "", notificationType: self.typeName,
            subtype: self.notification.payload.rawSubtype)
    }

    var revocation: EntitlementEvent.Revocation {
        EntitlementEvent.Revocation(
            transactionId: self.transactionId, revokedAt: self.transaction.revocationDate?.millisecondsSince1970,
            reason: self.transaction.rawRevocationReason, type: self.transaction.rawRevocationType,
            percentage: self.transaction.revocationPercentage, periodStart: self.transaction.purchaseDate?.millisecondsSince1970,
            periodEnd: self.transaction.expiresDate?.millisecondsSince1970)
    }

    /// Keeps the stored access, or, when nothing is stored yet, derives it from the signed transaction.
    func currentOrDerived() -> Access {
        if let current = self.current {
            if current.revokedAt != nil && !current.active { return .revoked }
            return current.active ? .active(until: current.validUntil) : .inactive
        }
        if self.transaction.revocationDate != nil { return .revoked }
        guard let expires = self.transaction.expiresDate?.millisecondsSince1970 else { return .active(until: nil) }
        return expires > self.signedDate ? .active(until: expires) : .inactive
    }

    /// The update for a given access: the new entitlement, and events for whatever changed.
    func settle(access: Access, detail: String) -> EntitlementUpdate {
        let ownership = self.transaction.rawInAppOwnershipType ?? InAppOwnershipType.purchased.rawValue
        var state = EntitlementState(
            customer: self.customer, productId: self.productId, active: false, originalTransactionId: self.original,
            sourceTransactionId: self.transactionId, ownershipType: ownership,
            validFrom: self.transaction.purchaseDate?.millisecondsSince1970)
        switch access {
        case .active(let until):
            state.active = until.map { $0 > self.signedDate } ?? true
            state.validUntil = until
        case .inactive:
            state.validUntil = self.transaction.expiresDate?.millisecondsSince1970
        case .revoked:
            state.revokedAt = self.transaction.revocationDate?.millisecondsSince1970 ?? self.signedDate
            state.revocationReason = self.transaction.rawRevocationReason
            state.revocationType = self.transaction.rawRevocationType
                ?? (self.type == .revoke ? RevocationType.familyRevoke.rawValue : nil)
        }
        var update = EntitlementUpdate(outcome: .applied, detail: detail, entitlement: state, events: self.events(for: state),
                                       advancesSubject: true)
        if let previous = self.current, previous.productId != self.productId, previous.active {
            // The subscription moved to another product: the previous product's access ends now.
            var ended = previous
            ended.active = false
            ended.validUntil = self.signedDate
            update.superseded = ended
            update.events.insert(EntitlementEvent(
                eventType: "entitlement.expired", stream: .changes, occurredAt: self.signedDate, subject: self.subject,
                customer: ended.customer, productId: ended.productId, cause: self.cause, state: ended), at: 0)
        }
        return update
    }

    /// Leaves the stored entitlement exactly as it is (reporting only a refund or revoke this notification
    /// carries); with nothing stored yet, derives the access from the signed transaction.
    func keep(detail: String) -> EntitlementUpdate {
        guard let current = self.current else { return self.settle(access: self.currentOrDerived(), detail: detail) }
        return EntitlementUpdate(outcome: .applied, detail: detail, entitlement: current,
                                 events: self.revocationEvents(state: current), advancesSubject: true)
    }

    /// A refund whose effect is unclear: keep the state, ask for the current status.
    func awaitStatus() -> EntitlementUpdate {
        let uuid = self.notification.payload.notificationUUID ?? ""
        let request = StatusRequest(
            requestId: EntitlementEvent.stableID(uuid, "status-request"), originalTransactionId: self.original,
            environment: self.transaction.rawEnvironment ?? "", reason: "refund without data.status", notificationUUID: uuid)
        let refund = EntitlementEvent(
            eventType: "revocation.refunded", stream: .revocations, occurredAt: self.signedDate, subject: self.subject,
            customer: self.customer, productId: self.productId, cause: self.cause, state: self.current, revocation: self.revocation)
        return EntitlementUpdate(outcome: .awaitingStatus, detail: "refund of \(self.transactionId); status requested",
                                 events: [refund], statusRequest: request, advancesSubject: false)
    }

    /// Events for a new state compared with the stored one.
    private func events(for state: EntitlementState) -> [EntitlementEvent] {
        let before = self.current?.productId == state.productId ? self.current : nil
        var events: [EntitlementEvent] = []
        func event(_ type: String, _ stream: EntitlementEvent.Stream, revocation: EntitlementEvent.Revocation? = nil) {
            events.append(EntitlementEvent(
                eventType: type, stream: stream, occurredAt: self.signedDate, subject: self.subject, customer: self.customer,
                productId: self.productId, cause: self.cause, state: state, revocation: revocation))
        }
        if before != state {
            let type: String = switch (before?.active ?? false, state.active) {
            case (false, true): "entitlement.granted"
            case (true, false): state.revokedAt != nil ? "entitlement.revoked" : "entitlement.expired"
            default: "entitlement.updated"
            }
            event(type, .changes)
        }
        let family = state.ownershipType == InAppOwnershipType.familyShared.rawValue
        if family && (before?.active ?? false) != state.active {
            event(state.active ? "family.access-gained" : "family.access-lost", .family)
        }
        return events + self.revocationEvents(state: state)
    }

    /// The revocation event of a refund, family revoke or refund reversal.
    private func revocationEvents(state: EntitlementState) -> [EntitlementEvent] {
        let type: String? = switch self.type {
        case .refund?: "revocation.refunded"
        case .revoke?: "revocation.family-revoked"
        case .refundReversed?: "revocation.refund-reversed"
        default: nil
        }
        return type.map {
            [EntitlementEvent(eventType: $0, stream: .revocations, occurredAt: self.signedDate, subject: self.subject,
                              customer: self.customer, productId: self.productId, cause: self.cause, state: state,
                              revocation: self.revocation)]
        } ?? []
    }
}
