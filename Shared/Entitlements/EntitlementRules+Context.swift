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
    /// The stored entitlement, already keyed by `customer` (see `movedFrom`).
    let current: EntitlementState?
    /// The customer the stored rows were under when another customer now owns them.
    var movedFrom: String? = nil
    let catalog: EntitlementCatalog
    /// What every event of this notification says about the purchase.
    let facts: PurchaseFacts

    /// The entitlement this notification's product grants.
    var entitlementId: String { self.catalog.entitlement(of: self.productId) }

    var cause: EntitlementEvent.Cause {
        EntitlementEvent.Cause(
            notificationUUID: self.notification.payload.notificationUUID ?? "", notificationType: self.typeName,
            subtype: self.notification.payload.rawSubtype)
    }

    var revocation: EntitlementEvent.Revocation {
        EntitlementEvent.Revocation(
            transactionId: self.transactionId, revokedAt: self.transaction.revocationDate?.millisecondsSince1970,
            reason: self.transaction.rawRevocationReason, type: self.transaction.rawRevocationType,
            percentage: self.transaction.revocationPercentage,
            periodStart: self.transaction.purchaseDate?.millisecondsSince1970,
            periodEnd: self.transaction.expiresDate?.millisecondsSince1970)
    }

    /// The Advanced Commerce items refunded or revoked inside the transaction (nil for other purchases).
    var refundedItems: [EntitlementEvent.RefundedItem]? {
        guard let items = self.transaction.advancedCommerceTransaction?.refundedItems, !items.isEmpty else {
            return nil
        }
        return items.map { item in
            EntitlementEvent.RefundedItem(
                sku: item.sku ?? "", revokedAt: item.revocationDate?.millisecondsSince1970,
                refunds: (item.refunds ?? []).map {
                    EntitlementEvent.ItemRefund(
                        amount: $0.refundAmount.map(PurchaseFacts.decimal(milliunits:)),
                        refundedAt: $0.refundDate?.millisecondsSince1970, reason: $0.refundReason, type: $0.refundType)
                })
        }
    }

    /// An event of this notification about its customer and product (or another product of the same subscription).
    func event(
        _ type: String, _ stream: EntitlementEvent.Stream, state: EntitlementState?,
        revocation: EntitlementEvent.Revocation? = nil,
        productId: String? = nil
    ) -> EntitlementEvent {
        var facts = self.facts
        if let productId { facts.entitlementId = self.catalog.entitlement(of: productId) }
        return EntitlementEvent(
            eventType: type, stream: stream, occurredAt: self.signedDate, subject: self.subject,
            customer: self.customer,
            productId: productId ?? self.productId, cause: self.cause, state: state, revocation: revocation,
            facts: facts)
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
            validFrom: self.transaction.purchaseDate?.millisecondsSince1970, entitlementId: self.entitlementId)
        switch access {
        case .active(let until):
            state.active = until.map { $0 > self.signedDate } ?? true
            state.validUntil = until
        case .inactive:
            state.validUntil = self.transaction.expiresDate?.millisecondsSince1970
        case .revoked:
            state.revokedAt = self.transaction.revocationDate?.millisecondsSince1970 ?? self.signedDate
            state.revocationReason = self.transaction.rawRevocationReason
            state.revocationType =
                self.transaction.rawRevocationType
                ?? (self.type == .revoke ? RevocationType.familyRevoke.rawValue : nil)
        }
        var update = EntitlementUpdate(
            outcome: .applied, detail: detail, entitlement: state,
            events: self.movedEvents(state: state) + self.stateEvents(for: state) + self.factEvents(state: state),
            advancesSubject: true, movedFrom: self.movedFrom)
        if let previous = self.current, previous.productId != self.productId, previous.active {
            // The subscription moved to another product: the previous product's access ends now. Inside one
            // entitlement that is a product change (reported by the new product's event), not an expiry.
            var ended = previous
            ended.active = false
            ended.validUntil = self.signedDate
            update.superseded = ended
            if !self.sharesEntitlement(with: previous) {
                update.events.insert(
                    self.event("entitlement.expired", .changes, state: ended, productId: ended.productId), at: 0)
            }
        }
        return update
    }

    /// Leaves the stored entitlement exactly as it is (reporting only the facts this notification carries);
    /// with nothing stored yet, derives the access from the signed transaction.
    func keep(detail: String) -> EntitlementUpdate {
        guard let current = self.current else { return self.settle(access: self.currentOrDerived(), detail: detail) }
        return EntitlementUpdate(
            outcome: .applied, detail: detail, entitlement: current,
            events: self.movedEvents(state: current) + self.factEvents(state: current), advancesSubject: true,
            movedFrom: self.movedFrom)
    }

    /// `entitlement.customer-changed` when the subject's rows move to another customer (an app user bound or
    /// transferred, an appAccountToken appearing): consumers drop the previous customer's access to it.
    private func movedEvents(state: EntitlementState) -> [EntitlementEvent] {
        guard let previous = self.movedFrom else { return [] }
        var moved = self.event("entitlement.customer-changed", .changes, state: state)
        moved.previousCustomer = previous
        return [moved]
    }

    /// A notification whose effect on access is unclear (`reason`, one of ``StatusRequest/Reason``, says why): keep
    /// the state, report the facts, and ask refund-resolver for the subscription's current status. The subject does
    /// not advance, so the periods signed before it still apply when they arrive.
    func awaitStatus(reason: String) -> EntitlementUpdate {
        let uuid = self.notification.payload.notificationUUID ?? ""
        let request = StatusRequest(
            requestId: EntitlementEvent.stableID(uuid, "status-request"), originalTransactionId: self.original,
            environment: self.facts.environment, bundleId: self.facts.bundleId, reason: reason,
            notificationUUID: uuid)
        return EntitlementUpdate(
            outcome: .awaitingStatus, detail: "\(reason) (transaction \(self.transactionId)); status requested",
            events: self.factEvents(state: self.current), statusRequest: request, advancesSubject: false)
    }

    /// Whether a stored entitlement is of the same entitlement as this notification's product.
    private func sharesEntitlement(with other: EntitlementState) -> Bool {
        self.catalog.entitlement(of: other.productId) == self.entitlementId
    }

    /// Events for a new state compared with the stored one.
    private func stateEvents(for state: EntitlementState) -> [EntitlementEvent] {
        var before = self.current?.productId == state.productId ? self.current : nil
        if before == nil, let current = self.current, current.active, self.sharesEntitlement(with: current) {
            before = current
        }
        var events: [EntitlementEvent] = []
        if before != state {
            let changedProduct = before.map { $0.productId != state.productId } ?? false
            // A revocation is news whatever came before: the purchase may have been granted by the device, or its
            // earlier notifications may arrive after the status that revoked it (and stay stale behind it).
            let newlyRevoked = state.revokedAt != nil && before?.revokedAt == nil
            let type: String =
                switch (before?.active ?? false, state.active) {
                case (false, true): "entitlement.granted"
                case (true, false): state.revokedAt != nil ? "entitlement.revoked" : "entitlement.expired"
                case (false, false) where newlyRevoked: "entitlement.revoked"
                default: changedProduct ? "entitlement.product-changed" : "entitlement.updated"
                }
            var change = self.event(type, .changes, state: state)
            if changedProduct { change.previousProductId = before?.productId }
            events.append(change)
        }
        let family = state.ownershipType == InAppOwnershipType.familyShared.rawValue
        if family && (before?.active ?? false) != state.active {
            events.append(
                self.event(state.active ? "family.access-gained" : "family.access-lost", .family, state: state))
        }
        return events
    }

    /// The events of what the notification reports, whatever it does to access and whatever its order of
    /// arrival: refunds, reversals, revokes, declined refunds, consumption requests, purchases of consumables,
    /// and the renewal changes teams act on. Each notification yields them once (stable event ids).
    func factEvents(state: EntitlementState?) -> [EntitlementEvent] {
        guard let type = self.type else { return [] }
        let subtype = self.notification.payload.subtype
        let consumable = self.transaction.type == .consumable
        switch type {
        case .oneTimeCharge where consumable:
            return [self.event("consumable.purchased", .changes, state: nil)]
        case .refund:
            // An Advanced Commerce purchase can be refunded item by item: the transaction itself stands.
            let itemsOnly = !consumable && self.transaction.revocationDate == nil && self.refundedItems != nil
            let type =
                consumable ? "consumable.refunded" : itemsOnly ? "revocation.items-refunded" : "revocation.refunded"
            var event = self.event(type, .revocations, state: state, revocation: self.revocation)
            event.refundedItems = self.refundedItems
            return [event]
        case .refundReversed:
            return [
                self.event(
                    consumable ? "consumable.refund-reversed" : "revocation.refund-reversed", .revocations,
                    state: state,
                    revocation: self.revocation)
            ]
        case .revoke:
            return [self.event("revocation.family-revoked", .revocations, state: state, revocation: self.revocation)]
        case .refundDeclined:
            return [self.event("revocation.refund-declined", .revocations, state: state, revocation: self.revocation)]
        case .consumptionRequest:
            var request = self.event("consumption.requested", .revocations, state: state, revocation: self.revocation)
            request.responseDeadline = self.signedDate + EntitlementRules.consumptionAnswerWindow
            request.consumptionRequestReason = self.notification.payload.data?.rawConsumptionRequestReason
            return [request]
        case .didChangeRenewalStatus:
            let disabled =
                subtype == .autoRenewDisabled
                || (subtype == nil && self.notification.renewalInfo?.autoRenewStatus == .off)
            return [
                self.event(
                    disabled ? "subscription.auto-renew-disabled" : "subscription.auto-renew-enabled", .changes,
                    state: state)
            ]
        case .didFailToRenew:
            return [self.event("subscription.billing-issue", .changes, state: state)]
        case .didChangeRenewalPref where subtype == .downgrade, .offerRedeemed where subtype == .downgrade:
            return [self.event("subscription.product-change-scheduled", .changes, state: state)]
        case .didChangeRenewalPref where subtype == nil:
            return [self.event("subscription.product-change-cancelled", .changes, state: state)]
        case .priceIncrease:
            return [
                self.event(
                    subtype == .accepted
                        ? "subscription.price-increase-accepted" : "subscription.price-increase-pending",
                    .changes, state: state)
            ]
        case .renewalExtended:
            return [self.event("subscription.extended", .changes, state: state)]
        case .renewalExtension where subtype == .failure:
            return [self.event("subscription.extension-failed", .changes, state: state)]
        default:
            return []
        }
    }
}
