"""Validates entitlement and retention.offered events against the published schemas (used by the tests).

Usage: validate_events.py SCHEMA_DIR EVENTS.json  -- EVENTS.json holds a list of events; each is checked
against the schema of its `stream`. Exit 0 when all are valid; otherwise each error is printed, exit 1.
"""
import json
import sys

from jsonschema import Draft202012Validator, FormatChecker


def main():
    schema_dir, events_path = sys.argv[1], sys.argv[2]
    validators = {}
    for stream in ("changes", "family", "revocations"):
        with open(f"{schema_dir}/entitlements.{stream}.schema.json") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        validators[stream] = Draft202012Validator(schema, format_checker=FormatChecker())
    # retention-messaging's stream has a schema of its own (it is no entitlement event).
    with open(f"{schema_dir}/retention.offered.schema.json") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validators["retention"] = Draft202012Validator(schema, format_checker=FormatChecker())
    with open(events_path) as f:
        events = json.load(f)
    failures = 0
    for index, event in enumerate(events):
        validator = validators.get(event.get("stream"))
        if validator is None:
            print(f"event {index}: unknown stream {event.get('stream')!r}")
            failures += 1
            continue
        for error in validator.iter_errors(event):
            print(f"event {index} ({event.get('eventType')}): {error.json_path}: {error.message}")
            failures += 1
    print(f"{len(events)} events checked, {failures} errors")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
