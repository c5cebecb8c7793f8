"""Writes the schemaVersion 2 JSON Schemas of the three event topics (entitlements.changes, .family,
.revocations) from one description, so the topics cannot drift apart. v1/ keeps the version 1 schemas: the
tests check that every version 1 field keeps its name and type here.

Usage: make_schemas.py [OUT_DIR]   (default: this file's directory). The test suite runs it with --check.
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

STREAMS = {
    "changes": {
        "description": "A customer's access changed (granted, extended or updated, moved to another product of the same entitlement, "
                       "to another customer or to the subscription the App Store migrated it to, expired, revoked); a consumable was bought; a renewal setting teams act on changed; the app received a test "
                       "notification, a mass extension finished or consent was rescinded.",
        "types": [
            "entitlement.granted", "entitlement.updated", "entitlement.product-changed", "entitlement.expired", "entitlement.revoked",
            "entitlement.customer-changed", "entitlement.migrated",
            "consumable.purchased",
            "subscription.auto-renew-disabled", "subscription.auto-renew-enabled", "subscription.billing-issue",
            "subscription.product-change-scheduled", "subscription.product-change-cancelled",
            "subscription.price-increase-pending", "subscription.price-increase-accepted",
            "subscription.extended", "subscription.extension-failed", "subscription.mass-extension-completed",
            "consent.rescinded", "test.received",
        ],
        "required": [],
    },
    "family": {
        "description": "A family member gained or lost access through Family Sharing.",
        "types": ["family.access-gained", "family.access-lost"],
        "required": [],
    },
    "revocations": {
        "description": "The App Store refunded or revoked a transaction (or items of an Advanced Commerce purchase), reversed a refund or declined one, or asks for consumption "
                       "information about a refund request (answer by responseDeadline); the transaction is in revocation.",
        "types": [
            "revocation.refunded", "revocation.items-refunded", "revocation.family-revoked", "revocation.refund-reversed",
            "revocation.refund-declined",
            "consumable.refunded", "consumable.refund-reversed", "consumption.requested",
        ],
        "required": ["revocation"],
    },
}

INTEGER = {"type": "integer"}
STRING = {"type": "string"}
MILLIS = {"type": "integer", "description": "epoch milliseconds"}

STATE = {
    "type": ["object", "null"],
    "description": "The entitlement after the change (for facts that move no access: as stored); absent or null for events that "
                   "grant nothing lasting (consumables, app-level events).",
    "required": ["customer", "productId", "active", "originalTransactionId", "sourceTransactionId", "ownershipType"],
    "additionalProperties": False,
    "properties": {
        "customer": {"type": "string", "minLength": 1},
        "productId": {"type": "string", "minLength": 1},
        "active": {"type": "boolean"},
        "originalTransactionId": {"type": "string", "minLength": 1},
        "sourceTransactionId": {"type": "string", "minLength": 1},
        "ownershipType": {"type": "string", "description": "PURCHASED, FAMILY_SHARED, ASSIGNED, or a value Apple adds later"},
        "validFrom": MILLIS,
        "validUntil": {"type": "integer", "description": "epoch milliseconds; absent for lifetime products"},
        "revokedAt": INTEGER,
        "revocationReason": INTEGER,
        "revocationType": STRING,
        "entitlementId": {"type": "string", "description": "v2: the entitlement the product grants"},
    },
}

REVOCATION = {
    "type": "object",
    "required": ["transactionId"],
    "additionalProperties": False,
    "properties": {
        "transactionId": STRING,
        "revokedAt": INTEGER,
        "reason": {"type": "integer", "description": "0: other reason, 1: an issue in the app"},
        "type": {"type": "string", "description": "REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE, or a value Apple adds later"},
        "percentage": {"type": "integer", "description": "refunded share in milliunits (prorated refunds)"},
        "periodStart": INTEGER,
        "periodEnd": INTEGER,
    },
}

V1_FIELDS = {
    "eventId": {"type": "string", "format": "uuid", "description": "Stable across retries: deduplicate on it."},
    "schemaVersion": {"const": 2},
    "occurredAt": {"type": "integer", "description": "the causing notification's signedDate, epoch milliseconds"},
    "subject": {"type": "string", "description": "the originalTransactionId (or app-scoped id) the notification was about"},
    "customer": {"type": "string", "description": "appAccountToken (lowercase UUID) when the app set one, else the originalTransactionId; "
                                                  "'app' (or the appTransactionId) for app-level events"},
    "productId": {"type": "string", "description": "empty for app-level events"},
    "cause": {
        "type": "object",
        "required": ["notificationUUID", "notificationType"],
        "additionalProperties": False,
        "properties": {"notificationUUID": STRING, "notificationType": STRING, "subtype": STRING},
    },
    "state": STATE,
    "revocation": REVOCATION,
}

V2_FIELDS = {
    "environment": {"type": "string", "description": "Production, Sandbox, Xcode or LocalTesting: keep them apart"},
    "bundleId": {"type": "string", "minLength": 1},
    "appAppleId": INTEGER,
    "store": {"const": "APP_STORE"},
    "entitlementId": {"type": "string", "description": "the entitlement the product grants (ENTITLEMENT_MAP; default the product id)"},
    "transactionId": STRING,
    "originalTransactionId": STRING,
    "productType": {"type": "string", "description": "Auto-Renewable Subscription, Non-Consumable, Consumable, Non-Renewing Subscription"},
    "purchaseDate": MILLIS,
    "expirationDate": MILLIS,
    "gracePeriodExpiresDate": MILLIS,
    "isInGracePeriod": {"type": "boolean"},
    "isInBillingRetry": {"type": "boolean"},
    "subscriptionStatus": {"type": "integer", "minimum": 1, "description": "1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked"},
    "autoRenewStatus": {"type": "integer", "description": "1 on, 0 off"},
    "autoRenewProductId": STRING,
    "expirationIntent": INTEGER,
    "periodType": {"type": "string", "description": "TRIAL, INTRO, PROMOTIONAL, OFFER_CODE, WIN_BACK, NORMAL"},
    "offerIdentifier": STRING,
    "price": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,3})?$", "description": "exact decimal of Apple's milliunits"},
    "currency": {"type": "string", "description": "ISO 4217"},
    "storefront": {"type": "string", "description": "ISO 3166-1 alpha-3"},
    "quantity": INTEGER,
    "ownershipType": STRING,
    "subscriptionGroupIdentifier": STRING,
    "billingPlanType": {"type": "string", "description": "how the transaction is billed, as Apple signs it (API 1.22)"},
    "renewalBillingPlanType": {"type": "string", "description": "how the next renewal is billed (renewal info)"},
    "renewalPrice": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,3})?$", "description": "the next renewal's price, exact decimal"},
    "offerDiscountType": {"type": "string", "description": "FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT, ONE_TIME, or a value Apple adds later"},
    "commitmentInfo": {
        "type": "object",
        "description": "a plan with a commitment: the transaction's commitmentInfo and the renewal info's, merged",
        "additionalProperties": False,
        "properties": {
            "billingPeriodNumber": INTEGER, "totalBillingPeriods": INTEGER, "commitmentExpiresDate": MILLIS,
            "commitmentPrice": STRING, "commitmentAutoRenewProductId": STRING, "commitmentAutoRenewStatus": INTEGER,
            "commitmentRenewalBillingPlanType": STRING, "commitmentRenewalDate": MILLIS, "commitmentRenewalPrice": STRING,
        },
    },
    "sequence": {"type": "integer", "minimum": 1,
                 "description": "this event's number among its subject's events: one more than the subject's event before it, in "
                                "the order the updater wrote them, across the three topics (a consumer of every topic sees a gap as a "
                                "missing event; one of fewer topics, or a filtered webhook, sees the numbers the others took). Set on "
                                "every event written since migration 16; ordering and gaps are per (environment, bundleId, subject)"},
    "outOfOrder": {"type": "boolean", "description": "the notification arrived after a newer one for its subscription: a new fact "
                                                     "about an older state (the entitlement did not move backwards)"},
    "previousProductId": {"type": "string", "description": "entitlement.product-changed: the product the subscription moved from"},
    "previousCustomer": {"type": "string", "description": "entitlement.customer-changed: the customer the purchase belonged to before "
                                                           "(drop its access to it); customer is the new owner"},
    "refundedItems": {
        "type": "array",
        "description": "revocation.refunded / .items-refunded of an Advanced Commerce purchase: the items refunded or revoked, each with every refund Apple lists for it so far "
                       "(cumulative across notifications)",
        "items": {
            "type": "object",
            "required": ["sku", "refunds"],
            "additionalProperties": False,
            "properties": {
                "sku": STRING,
                "revokedAt": MILLIS,
                "refunds": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "amount": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,3})?$", "description": "exact decimal of Apple's milliunits"},
                            "refundedAt": MILLIS,
                            "reason": {"type": "string", "description": "UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL, "
                                                                        "OTHER, MODIFY_ITEMS_REFUND, SIMULATE_REFUND_DECLINE, or a value Apple adds later"},
                            "type": {"type": "string", "description": "FULL, PRORATED, CUSTOM, or a value Apple adds later"},
                        },
                    },
                },
            },
        },
    },
    "migration": {
        "type": "object",
        "description": "entitlement.migrated: the subscription the App Store migrated to this one (previousOriginalTransactionId) and its "
                       "entitlement as the migration ended it (drop that product's access; state is the new one's)",
        "required": ["previousOriginalTransactionId"],
        "additionalProperties": False,
        "properties": {"previousOriginalTransactionId": STRING, "previousState": STATE},
    },
    "responseDeadline": {"type": "integer", "description": "consumption.requested: answer Send Consumption Information before this "
                                                           "(occurredAt + 12 hours)"},
    "consumptionRequestReason": STRING,
    "massExtension": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "requestIdentifier": STRING, "productId": STRING, "storefrontCountryCodes": {"type": "array", "items": STRING},
            "succeededCount": INTEGER, "failedCount": INTEGER,
        },
    },
}

V1_REQUIRED = ["eventId", "eventType", "schemaVersion", "occurredAt", "stream", "subject", "customer", "productId", "cause"]
V2_REQUIRED = ["environment", "bundleId", "store", "outOfOrder"]


def schema(stream):
    spec = STREAMS[stream]
    properties = {}
    for name, value in V1_FIELDS.items():
        properties[name] = copy.deepcopy(value)
        if name == "eventId":
            properties["eventType"] = {"enum": spec["types"]}
    properties["stream"] = {"const": stream}
    properties.update(copy.deepcopy(V2_FIELDS))
    ordered = {k: properties[k] for k in ["eventId", "eventType", "schemaVersion", "occurredAt", "stream"] + [k for k in properties if k not in
                                          ("eventId", "eventType", "schemaVersion", "occurredAt", "stream")]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://schemas.example.invalid/appstore-pipeline/entitlements.{stream}.schema.json",
        "title": f"entitlements.{stream} event, schemaVersion 2",
        "description": spec["description"] + " Consumers must ignore fields they do not know: new fields come without a version change.",
        "type": "object",
        "required": V1_REQUIRED + spec["required"] + V2_REQUIRED,
        "additionalProperties": False,
        "properties": ordered,
    }


def render(stream):
    return json.dumps(schema(stream), indent=2) + "\n"


def main():
    check = "--check" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--check"]
    out = args[0] if args else HERE
    stale = []
    for stream in STREAMS:
        path = os.path.join(out, f"entitlements.{stream}.schema.json")
        text = render(stream)
        if check:
            with open(path) as f:
                if f.read() != text:
                    stale.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("out of date (run make_schemas.py): " + ", ".join(stale))
        sys.exit(1)
    print("schemas " + ("up to date" if check else "written"))


if __name__ == "__main__":
    main()
