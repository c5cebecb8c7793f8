"""Offer signatures against Apple's own Python library (PyPI app-store-server-library): Apple's creators sign the
same offers ours sign, and each side's signatures are checked by the other. Run by OfferSignatureConformanceTests.

    apple_offer_signatures.py --key KEY.p8 --key-id K --issuer-id I --bundle-id B --product P --offer O
        --transaction-id T --app-account-token U --nonce N --timestamp MS --ours FILE

FILE is a JSON object of our signatures: {"v1": {PromotionalOfferSignatureV1 fields}, "v2": JWS, "intro": JWS}.
Prints one JSON object: Apple's signatures ({"v1": Base64 DER, "v2": JWS, "intro": JWS}) and, for each of ours,
whether it verifies as Apple's format defines it ("ok" or the reason).
"""
import argparse
import base64
import json
import uuid

import jwt
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import ECDSA
from cryptography.hazmat.primitives.hashes import SHA256

from appstoreserverlibrary.jws_signature_creator import (IntroductoryOfferEligibilitySignatureCreator,
                                                         PromotionalOfferV2SignatureCreator)
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator


def check_jws(token, public_key, audience, arguments, expected):
    """Verifies a JWS as a receiver of Apple's format would: ES256 with the key, header kid, audience and claims."""
    try:
        header = jwt.get_unverified_header(token)
        if header.get("kid") != arguments.key_id:
            return f"kid is {header.get('kid')}"
        claims = jwt.decode(token, public_key, algorithms=["ES256"], audience=audience)
        for name, value in dict(expected, bid=arguments.bundle_id, iss=arguments.issuer_id).items():
            if claims.get(name) != value:
                return f"{name} is {claims.get(name)!r}, not {value!r}"
        uuid.UUID(claims["nonce"])
        if not isinstance(claims.get("iat"), int):
            return "iat is not an integer"
        return "ok"
    except Exception as error:  # every refusal is a finding, reported by name
        return f"{type(error).__name__}: {error}"


def main():
    parser = argparse.ArgumentParser()
    for name in ("key", "key-id", "issuer-id", "bundle-id", "product", "offer", "transaction-id", "app-account-token",
                 "nonce", "timestamp", "ours"):
        parser.add_argument("--" + name, required=True)
    arguments = parser.parse_args()
    pem = open(arguments.key, "rb").read()
    public_key = serialization.load_pem_private_key(pem, password=None).public_key()
    nonce = uuid.UUID(arguments.nonce)
    timestamp = int(arguments.timestamp)

    apple = {
        "v1": PromotionalOfferSignatureCreator(pem, arguments.key_id, arguments.bundle_id).create_signature(
            arguments.product, arguments.offer, arguments.app_account_token, nonce, timestamp),
        "v2": PromotionalOfferV2SignatureCreator(pem, arguments.key_id, arguments.issuer_id,
                                                 arguments.bundle_id).create_signature(
            arguments.product, arguments.offer, arguments.transaction_id),
        "intro": IntroductoryOfferEligibilitySignatureCreator(pem, arguments.key_id, arguments.issuer_id,
                                                              arguments.bundle_id).create_signature(
            arguments.product, True, arguments.transaction_id),
    }

    ours = json.load(open(arguments.ours))
    checks = {}
    v1 = ours["v1"]
    text = "\u2063".join([arguments.bundle_id, v1["keyId"], v1["productId"], v1["offerIdentifier"],
                          (v1.get("appAccountToken") or "").lower(), v1["nonce"].lower(), str(v1["timestamp"])])
    try:
        public_key.verify(base64.b64decode(v1["encodedSignature"]), text.encode("utf-8"), ECDSA(SHA256()))
        checks["v1"] = "ok"
    except InvalidSignature:
        checks["v1"] = "InvalidSignature"
    checks["v2"] = check_jws(ours["v2"], public_key, "promotional-offer", arguments,
                             {"productId": arguments.product, "offerIdentifier": arguments.offer,
                              "transactionId": arguments.transaction_id})
    checks["intro"] = check_jws(ours["intro"], public_key, "introductory-offer-eligibility", arguments,
                                {"productId": arguments.product, "allowIntroductoryOffer": True,
                                 "transactionId": arguments.transaction_id})
    print(json.dumps({"apple": apple, "checks": checks}))


if __name__ == "__main__":
    main()
