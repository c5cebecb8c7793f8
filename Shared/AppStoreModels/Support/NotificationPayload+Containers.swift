// MARK: - ResponseBodyV2DecodedPayload + Containers

extension ResponseBodyV2DecodedPayload {
    /// The raw environment of the notification, from whichever container it carries.
    ///
    /// `externalPurchaseToken` has no environment field; as Apple's libraries do, a token whose
    /// `externalPurchaseId` starts with "SANDBOX" is taken as Sandbox and any other as Production.
    public var rawEnvironment: String? {
        if let data { return data.rawEnvironment }
        if let summary { return summary.rawEnvironment }
        if let appData { return appData.rawEnvironment }
        if let token = externalPurchaseToken {
            guard let id = token.externalPurchaseId else { return nil }
            return id.hasPrefix("SANDBOX") ? Environment.sandbox.rawValue : Environment.production.rawValue
        }
        return nil
    }

    /// The bundle identifier of the notification, from whichever container it carries.
    public var bundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? appData?.bundleId ?? externalPurchaseToken?.bundleId
    }

    /// The App Store app identifier of the notification, from whichever container it carries.
    public var appAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? appData?.appAppleId ?? externalPurchaseToken?.appAppleId
    }

    /// How many of the four mutually exclusive containers are present (a well-formed payload has one).
    public var containerCount: Int {
        [data != nil, summary != nil, externalPurchaseToken != nil, appData != nil].filter { $0 }.count
    }
}
