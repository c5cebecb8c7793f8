import AppStoreModels

/// An event's canonical JSON written member by member (``JSONMemberWriter``): the bytes `FastJSONEncoder.canonical`
/// writes for it (keys in order of their UTF-8 bytes, the purchase's facts flat beside the event's own fields, nil
/// left out), at a fraction of the cost. The updater writes one or more for nearly every notification.
/// `EventEncodingTests` compares the bytes on every event the rules emit and on generated events with every optional
/// member present or absent, and checks that its fully populated event leaves no member nil, so a member added to
/// the event or its facts without being added here fails there.
extension EntitlementEvent {
    /// The event's canonical JSON (the outbox payload consumers receive).
    public func canonicalJSON() throws -> [UInt8] {
        var writer = JSONMemberWriter(capacity: 1024)
        let facts = self.facts
        try writer.object { w in
            w.integer("appAppleId", facts.appAppleId)
            w.string("autoRenewProductId", facts.autoRenewProductId)
            w.integer("autoRenewStatus", facts.autoRenewStatus)
            w.string("billingPlanType", facts.billingPlanType)
            w.string("bundleId", facts.bundleId)
            w.object("cause") { c in
                c.string("notificationType", self.cause.notificationType)
                c.string("notificationUUID", self.cause.notificationUUID)
                c.string("subtype", self.cause.subtype)
            }
            try w.encoded("commitmentInfo", facts.commitmentInfo)
            w.string("consumptionRequestReason", self.consumptionRequestReason)
            w.string("currency", facts.currency)
            w.string("customer", self.customer)
            w.string("entitlementId", facts.entitlementId)
            w.string("environment", facts.environment)
            w.string("eventId", self.eventId)
            w.string("eventType", self.eventType)
            w.integer("expirationDate", facts.expirationDate)
            w.integer("expirationIntent", facts.expirationIntent)
            w.integer("gracePeriodExpiresDate", facts.gracePeriodExpiresDate)
            w.bool("isInBillingRetry", facts.isInBillingRetry)
            w.bool("isInGracePeriod", facts.isInGracePeriod)
            try w.encoded("massExtension", self.massExtension)
            try w.encoded("migration", self.migration)
            w.integer("occurredAt", self.occurredAt)
            w.string("offerDiscountType", facts.offerDiscountType)
            w.string("offerIdentifier", facts.offerIdentifier)
            w.string("originalTransactionId", facts.originalTransactionId)
            w.bool("outOfOrder", facts.outOfOrder)
            w.string("ownershipType", facts.ownershipType)
            w.string("periodType", facts.periodType)
            w.string("previousCustomer", self.previousCustomer)
            w.string("previousProductId", self.previousProductId)
            w.string("price", facts.price)
            w.string("productId", self.productId)
            w.string("productType", facts.productType)
            w.integer("purchaseDate", facts.purchaseDate)
            w.integer("quantity", facts.quantity)
            try w.encoded("refundedItems", self.refundedItems)
            w.string("renewalBillingPlanType", facts.renewalBillingPlanType)
            w.string("renewalPrice", facts.renewalPrice)
            w.integer("responseDeadline", self.responseDeadline)
            try w.encoded("revocation", self.revocation)
            w.integer("schemaVersion", self.schemaVersion)
            w.integer("sequence", self.sequence)
            if let state = self.state { w.object("state") { s in Self.write(state, to: &s) } }
            w.string("store", facts.store)
            w.string("storefront", facts.storefront)
            w.string("stream", self.stream.rawValue)
            w.string("subject", self.subject)
            w.string("subscriptionGroupIdentifier", facts.subscriptionGroupIdentifier)
            w.integer("subscriptionStatus", facts.subscriptionStatus)
            w.string("transactionId", facts.transactionId)
        }
        return writer.bytes
    }

    /// An entitlement state's members, in canonical order (most events carry one).
    private static func write(_ state: EntitlementState, to w: inout JSONMemberWriter) {
        w.bool("active", state.active)
        w.string("customer", state.customer)
        w.string("entitlementId", state.entitlementId)
        w.string("originalTransactionId", state.originalTransactionId)
        w.string("ownershipType", state.ownershipType)
        w.string("productId", state.productId)
        w.integer("revocationReason", state.revocationReason)
        w.string("revocationType", state.revocationType)
        w.integer("revokedAt", state.revokedAt)
        w.string("sourceTransactionId", state.sourceTransactionId)
        w.integer("validFrom", state.validFrom)
        w.integer("validUntil", state.validUntil)
    }
}
