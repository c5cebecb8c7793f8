import AppStoreAPI
import AppStoreModels
import NotificationPipeline
import PipelineRecords
import Testing

/// The operator's consumption policy and the answers computed from the database's facts: Apple's buckets at
/// their edges, consent required, no percentage for auto-renewables, GRANT_PRORATED only with a usable percentage.
@Suite struct ConsumptionPolicyTests {
    @Test func policiesParseAndBadOnesAreRefused() throws {
        #expect(try ConsumptionPolicy(parsing: "") == nil)
        let policy = try #require(
            try ConsumptionPolicy(parsing: "refundPreference=GRANT_PRORATED, sampleContentProvided=true, api=v1"))
        #expect(
            policy
                == ConsumptionPolicy(refundPreference: "GRANT_PRORATED", sampleContentProvided: true, apiVersion: "v1"))
        #expect(try ConsumptionPolicy(parsing: "refundPreference=none")?.refundPreference == nil)
        #expect(throws: ConsumptionPolicyError.self) { try ConsumptionPolicy(parsing: "refundPreference=MAYBE") }
        #expect(throws: ConsumptionPolicyError.self) { try ConsumptionPolicy(parsing: "api=v3") }
        #expect(throws: ConsumptionPolicyError.self) { try ConsumptionPolicy(parsing: "sampleContentProvided") }
    }

    @Test func applesBucketsAtTheirEdges() {
        #expect(ConsumptionFacts.tenureBucket(days: nil) == 0)
        #expect(
            [0, 2.9, 3, 9.9, 10, 29, 30, 89, 90, 179, 180, 364, 365, 2000].map {
                ConsumptionFacts.tenureBucket(days: $0)
            }
                == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7])
        #expect(
            [nil, 0, 10, 49_990, 50_000, 99_990, 100_000, 499_990, 500_000, 999_990, 1_000_000, 1_999_990, 2_000_000]
                .map(ConsumptionFacts.dollarBucket)
                == [0, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7])
        #expect(
            [nil, 0, 4, 5, 59, 60, 359, 360, 1_439, 1_440, 5_759, 5_760, 23_039, 23_040].map(
                ConsumptionFacts.playTimeBucket)
                == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7])
    }

    @Test func answersFollowApplesRules() {
        var facts = ConsumptionFacts()
        #expect(!facts.consented, "no row from the app team: no consent")
        facts.customerConsented = true
        facts.productType = "Consumable"
        facts.consumptionPercentage = 40_000
        facts.firstPurchaseAt = 0
        facts.lifetimePurchasedUSDMilli = 120_000
        facts.lifetimeRefundedUSDMilli = 0
        facts.playTimeMinutes = 90
        facts.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let prorated = ConsumptionPolicy(refundPreference: "GRANT_PRORATED")
        #expect(
            facts.answerV2(prorated)
                == ConsumptionRequest(
                    customerConsented: true, consumptionPercentage: 40_000, deliveryStatus: "DELIVERED",
                    refundPreference: "GRANT_PRORATED", sampleContentProvided: false))
        let v1 = facts.answerV1(
            ConsumptionPolicy(refundPreference: "DECLINE", sampleContentProvided: true, apiVersion: "v1"),
            now: 400 * 86_400_000)
        #expect(
            v1
                == ConsumptionRequestV1(
                    accountTenure: 7, appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138", consumptionStatus: 2,
                    customerConsented: true, deliveryStatus: 0, lifetimeDollarsPurchased: 4, lifetimeDollarsRefunded: 1,
                    platform: 1, playTime: 3, refundPreference: 2, sampleContentProvided: true, userStatus: 0))
        facts.productType = "Auto-Renewable Subscription"
        let subscription = facts.answerV2(prorated)
        #expect(subscription.consumptionPercentage == nil, "never a percentage for an auto-renewable")
        #expect(subscription.refundPreference == nil, "GRANT_PRORATED without a usable percentage states no preference")
        facts.deliveryStatus = "UNDELIVERED_SERVER_OUTAGE"
        #expect(facts.answerV2(ConsumptionPolicy()).deliveryStatus == "UNDELIVERED_SERVER_OUTAGE")
        #expect(facts.answerV1(ConsumptionPolicy(), now: 0).deliveryStatus == 3)
    }
}
