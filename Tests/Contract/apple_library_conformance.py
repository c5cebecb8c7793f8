"""Apple's own Python library (PyPI app-store-server-library) against appstore-sim: does Apple's verifier accept
what the sim signs, and does Apple's API client get answers from the sim? Run by AppleLibraryConformanceTests.

    apple_library_conformance.py --root ROOT.der --bundle-id ID --app-apple-id N --notifications FILE
        --api-url URL --key KEY.p8 --key-id K --issuer-id I --original-transaction-id T --purchases PURCHASES

FILE holds one `ENVIRONMENT SIGNED_PAYLOAD` per line; PURCHASES one `ENVIRONMENT ORIGINAL_TRANSACTION_ID` per line.
Prints one JSON object: how many notifications verified (and how many of the first five again in online mode,
asking the sim's OCSP responder), every failure with its reason, what Get All Subscription
Statuses returned (its signed transaction verified by the same library), and for each purchase of PURCHASES whether
Finish Transaction was served and whether Get App Transaction Info found its app transaction by the purchase's id and
again by the appTransactionId (each verified by the library).
"""
import argparse
import json

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def main():
    parser = argparse.ArgumentParser()
    for name in ("root", "bundle-id", "app-apple-id", "notifications", "api-url", "key", "key-id", "issuer-id",
                 "original-transaction-id", "purchases"):
        parser.add_argument("--" + name, required=True)
    arguments = parser.parse_args()
    root = open(arguments.root, "rb").read()
    verifiers = {
        environment: SignedDataVerifier([root], False, environment, arguments.bundle_id, int(arguments.app_apple_id))
        for environment in (Environment.PRODUCTION, Environment.SANDBOX)
    }
    result = {"verified": 0, "failures": [], "types": {}}
    for line in open(arguments.notifications):
        environment_name, signed = line.split()
        try:
            decoded = verifiers[Environment(environment_name)].verify_and_decode_notification(signed)
            result["verified"] += 1
            kind = str(decoded.rawNotificationType)
            result["types"][kind] = result["types"].get(kind, 0) + 1
        except VerificationException as error:
            result["failures"].append(f"{environment_name}: {error.status}")

    # Apple's verifier in online mode asks the OCSP responder the sim's certificates name about the leaf and the
    # intermediate of every chain; the responder must answer as Apple's do (naming itself by key hash).
    online = {
        environment: SignedDataVerifier([root], True, environment, arguments.bundle_id, int(arguments.app_apple_id))
        for environment in (Environment.PRODUCTION, Environment.SANDBOX)
    }
    result["verifiedOnline"] = 0
    for line in list(open(arguments.notifications))[:5]:
        environment_name, signed = line.split()
        try:
            online[Environment(environment_name)].verify_and_decode_notification(signed)
            result["verifiedOnline"] += 1
        except VerificationException as error:
            result["failures"].append(f"online, {environment_name}: {error.status}")
        except Exception as error:  # Apple's library fails with AttributeError on a response it cannot read
            result["failures"].append(f"online, {environment_name}: {type(error).__name__}: {error}")

    client = AppStoreServerAPIClient(
        open(arguments.key, "rb").read(), arguments.key_id, arguments.issuer_id, arguments.bundle_id,
        Environment.PRODUCTION)
    # Apple's client knows Apple's hosts only; the sim stands where Production would be.
    client._base_url = arguments.api_url.rstrip("/")
    try:
        statuses = client.get_all_subscription_statuses(arguments.original_transaction_id)
        transactions = [item for group in statuses.data or [] for item in group.lastTransactions or []]
        result["statuses"] = len(transactions)
        result["statusEnvironment"] = str(statuses.rawEnvironment)
        if transactions:
            transaction = verifiers[Environment.PRODUCTION].verify_and_decode_signed_transaction(
                transactions[0].signedTransactionInfo)
            result["statusTransaction"] = transaction.originalTransactionId
    except APIException as error:
        result["apiError"] = {"status": error.http_status_code, "code": error.raw_api_error}
    except VerificationException as error:
        result["failures"].append(f"status transaction: {error.status}")
    result["purchases"] = {}
    for line in open(arguments.purchases):
        environment_name, original = line.split()
        result["purchases"][f"{environment_name} {original}"] = app_transaction_round_trip(
            arguments, Environment(environment_name), original, verifiers[Environment(environment_name)])
    print(json.dumps(result))


def app_transaction_round_trip(arguments, environment, original, verifier):
    """Finish Transaction on a purchase, then its app transaction by the purchase's id and by its own id: "ok", or
    what went wrong."""
    client = AppStoreServerAPIClient(
        open(arguments.key, "rb").read(), arguments.key_id, arguments.issuer_id, arguments.bundle_id, environment)
    client._base_url = arguments.api_url.rstrip("/") + ("/sandbox" if environment == Environment.SANDBOX else "")
    try:
        client.finish_transaction(original)
        by_purchase = verifier.verify_and_decode_app_transaction(
            client.get_app_transaction_info(original).signedAppTransactionInfo)
        by_own_id = verifier.verify_and_decode_app_transaction(
            client.get_app_transaction_info(by_purchase.appTransactionId).signedAppTransactionInfo)
    except APIException as error:
        return f"API error {error.http_status_code} {error.raw_api_error}"
    except VerificationException as error:
        return f"verification: {error.status}"
    if by_own_id.appTransactionId != by_purchase.appTransactionId:
        return f"{by_purchase.appTransactionId} found {by_own_id.appTransactionId}"
    return "ok"


if __name__ == "__main__":
    main()
