import AppStoreModels

// MARK: - What a subscription status settles

extension EntitlementRules {
    /// What a notification's `data.status` tells about a subscription's access, read together with the transaction
    /// it carries. The status is the subscription's as of the notification's `signedDate`; the transaction may be
    /// any earlier period (a REFUND, REFUND_REVERSED, CONSUMPTION_REQUEST or REFUND_DECLINED names the transaction
    /// it is about). An active status then says the subscription runs, never until when.
    enum StatusReading: Hashable {
        /// The status, read with the transaction, settles access (the transaction is the period in force, or the
        /// status needs no period: grace, expired, billing retry, revoked).
        case settles(Access)
        /// Active, about an earlier period, and the stored entitlement is a newer period that runs at `signedDate`:
        /// the stored state stands.
        case keepsNewer
        /// Active, about an earlier period, and nothing stored runs at `signedDate`: until when is Apple's to say
        /// (Get All Subscription Statuses).
        case unknownUntil

        /// The access the reading settles, if it settles one.
        var settledAccess: Access? {
            if case .settles(let access) = self { return access }
            return nil
        }
    }

    /// Reads `status` with the notification's transaction and the stored state.
    static func reading(of status: Status, _ c: Context) -> StatusReading {
        switch status {
        case .active:
            if c.transactionInForce { return .settles(.active(until: Self.latestExpiry(c))) }
            return c.storedRunsAtSignedDate ? .keepsNewer : .unknownUntil
        case .billingGracePeriod, .expired, .billingRetry, .revoked:
            return .settles(Self.access(for: status, c))
        }
    }

    /// The update for a notification whose `data.status` is given.
    static func bySignedStatus(_ status: Status, _ c: Context) -> EntitlementUpdate {
        Self.update(
            for: Self.reading(of: status, c), c, said: "data.status \(status.rawValue)",
            reason: StatusRequest.Reason.activeStatusOfEarlierPeriod)
    }

    /// A grant by a type that may name an earlier period (REFUND_REVERSED without `data.status`): read as an active
    /// status is, so the period in force is granted until its end and an earlier one keeps a newer stored period or
    /// asks Apple.
    static func grantOfNamedPeriod(_ c: Context) -> EntitlementUpdate {
        Self.update(
            for: Self.reading(of: .active, c), c, said: "granted by \(c.typeName)",
            reason: StatusRequest.Reason.reversalOfEarlierPeriod)
    }

    /// The update a reading leads to; `said` names what was read (the log's detail), `reason` the status request's.
    private static func update(for reading: StatusReading, _ c: Context, said: String, reason: String)
        -> EntitlementUpdate
    {
        switch reading {
        case .settles(let access):
            if c.type == .refund, case .active = access, c.current?.active == true {
                // An earlier period was refunded; the subscription is still active: nothing changes but the report.
                return c.keep(detail: "refund of an earlier period; \(said)")
            }
            return c.settle(access: access, detail: said)
        case .keepsNewer:
            return c.keep(detail: "\(said) about the earlier period \(c.transactionId): the newer stored period stands")
        case .unknownUntil:
            return c.awaitStatus(reason: reason)
        }
    }
}

// MARK: - Context: periods

extension Context {
    /// Whether the notification's transaction is the period in force when the notification was signed: it expires
    /// after `signedDate` (or never).
    var transactionInForce: Bool {
        guard let expires = self.transaction.expiresDate?.millisecondsSince1970 else { return true }
        return expires > self.signedDate
    }

    /// Whether the stored entitlement is active and still runs at `signedDate`: a period newer than a transaction
    /// that had ended by then.
    var storedRunsAtSignedDate: Bool {
        guard let current = self.current, current.active, current.revokedAt == nil else { return false }
        return current.validUntil.map { $0 > self.signedDate } ?? true
    }
}
