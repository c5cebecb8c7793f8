/// The body Apple posts to a Retention Messaging real-time URL: `{"signedPayload": JWS}`.
///
/// [RealtimeRequestBody](https://developer.apple.com/documentation/retentionmessaging/realtimerequestbody)
public struct RealtimeRequestBody: Codable, Hashable, Sendable {
    public var signedPayload: String?

    public init(signedPayload: String? = nil) { self.signedPayload = signedPayload }
}

/// The decoded payload of a real-time request: which subscription the customer is looking at, where and when.
///
/// [DecodedRealtimeRequestBody](https://developer.apple.com/documentation/retentionmessaging/decodedrealtimerequestbody)
public struct DecodedRealtimeRequestBody: Codable, Hashable, Sendable {
    public var originalTransactionId: String?
    /// The app's App Store identifier: the request names no bundle id, so this is what identifies the app.
    public var appAppleId: Int64?
    public var productId: String?
    /// The customer's locale, such as `en-US`.
    public var userLocale: String?
    /// A UUID identifying this request.
    public var requestIdentifier: String?
    /// When the App Store signed the request.
    public var signedDate: Timestamp?
    /// The server environment. Values this version does not know are kept in ``rawEnvironment``.
    public var environment: Environment? {
        get { self.rawEnvironment.flatMap(Environment.init(rawValue:)) }
        set { self.rawEnvironment = newValue?.rawValue }
    }
    /// The raw value of ``environment``, exactly as signed.
    public var rawEnvironment: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case originalTransactionId, appAppleId, productId, userLocale, requestIdentifier, signedDate
        case rawEnvironment = "environment"
    }
}

/// What the server answers a real-time request: at most one of a message, an alternate product or a promotional
/// offer; an empty body leaves the App Store to show the default message.
///
/// [RealtimeResponseBody](https://developer.apple.com/documentation/retentionmessaging/realtimeresponsebody)
public struct RealtimeResponseBody: Codable, Hashable, Sendable {
    /// A message to show.
    public struct Message: Codable, Hashable, Sendable {
        public var messageIdentifier: String?
        public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
    }

    /// Another product of the group to suggest, with its message.
    public struct AlternateProduct: Codable, Hashable, Sendable {
        public var messageIdentifier: String?
        public var productId: String?
        /// Since Retention Messaging 1.5: the billing plan of the suggested product.
        public var billingPlanType: String?
        public init(messageIdentifier: String?, productId: String?, billingPlanType: String? = nil) {
            self.messageIdentifier = messageIdentifier
            self.productId = productId
            self.billingPlanType = billingPlanType
        }
    }

    /// A promotional offer to present, signed by the team's server (V2 JWS or V1 fields), with its message.
    public struct PromotionalOffer: Codable, Hashable, Sendable {
        public var messageIdentifier: String?
        public var promotionalOfferSignatureV2: String?
        public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?

        public init(
            messageIdentifier: String?, promotionalOfferSignatureV2: String? = nil,
            promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil
        ) {
            self.messageIdentifier = messageIdentifier
            self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
            self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
        }
    }

    public var message: Message?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?

    public init(
        message: Message? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: PromotionalOffer? = nil
    ) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }
}
