"""What the local run prints at the end (deploy/local/run.sh): counters, the sim's verdict, timelines, events.

Usage: summary.py --bootstrap B --database-url URL --expected expected.json [--facts facts.json] --service NAME=URL ... [--wait S]
With --wait, first waits up to S seconds for the database to hold exactly the sim's expected entitlements and
for the outbox to be drained.
"""
import argparse
import collections
import json
import subprocess
import sys
import time
import urllib.request

from topic_reader import read_topic

DOWNSTREAM = ["entitlements.changes", "entitlements.family", "entitlements.revocations"]
PIPELINE = ["appstore.notifications.raw", "appstore.notifications.verified", "appstore.notifications.rejected",
            "appstore.status.requests", "appstore.status.requests.retry"]


# MARK: reading the database and the services

def sql(database_url, query):
    """Rows of a query, as lists of strings (psql, tab-separated)."""
    out = subprocess.run(["psql", database_url, "-At", "-F", "\t", "-c", query],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def metrics(url):
    """A service's Prometheus counters as {name{labels}: value}."""
    values = {}
    with urllib.request.urlopen(url, timeout=5) as answer:
        for line in answer.read().decode().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    values[name] = float(value)
                except ValueError:
                    pass
    return values


def total(values, prefix):
    """The sum of every series whose name starts with `prefix`."""
    return int(sum(v for k, v in values.items() if k.startswith(prefix)))


def by_label(values, prefix):
    """{label value: count} for a counter with one label."""
    result = {}
    for key, value in values.items():
        if key.startswith(prefix + "{"):
            result[key.split('"')[1]] = int(value)
    return result


# MARK: comparing with the sim

def stored_entitlements(database_url, customers):
    """The stored entitlements of the sim's customers, as (environment, customer, product, active, revoked)."""
    rows = sql(database_url, "SELECT environment, customer, product_id, active, revoked_at IS NOT NULL FROM entitlements")
    return {(env, c, p, a == "t", r == "t") for env, c, p, a, r in rows if c in customers}


def difference(database_url, expected):
    """(missing, unexpected) entitlements compared with the sim's expectation, per environment."""
    want = {(e.get("environment", "Production"), e["customer"], e["productId"], e["active"], e["revoked"]) for e in expected}
    have = stored_entitlements(database_url, {e["customer"] for e in expected})
    return want - have, have - want


def completeness(database_url, facts):
    """(transactions stored, with the newest revocation state, carried; refund-like with one revocation event, all)."""
    stored = {(env, tid): r == "t" for env, tid, r in
              sql(database_url, "SELECT environment, transaction_id, revocation_date IS NOT NULL FROM transactions")}
    carried = facts["transactions"]
    present = [t for t in carried if (t["environment"], t["transactionId"]) in stored]
    newest = [t for t in present if stored[(t["environment"], t["transactionId"])] == t["revoked"]]
    counts = {}
    for (uuid,) in sql(database_url, """SELECT payload->'cause'->>'notificationUUID' FROM outbox
                                         WHERE topic = 'entitlements.revocations'
                                           AND payload->>'eventType' <> 'consumption.requested'"""):
        counts[uuid] = counts.get(uuid, 0) + 1
    refunds = facts["refundLike"]
    return len(present), len(newest), len(carried), sum(1 for u in refunds if counts.get(u) == 1), len(refunds)


def has_outbox_cursor(database_url):
    """Whether the database publishes its outbox up to a cursor (migration 13): a benchmark may run another commit's
    build (BENCHMARK_BIN), whose outbox still marks rows published_at."""
    return sql(database_url, "SELECT to_regclass('outbox_publications') IS NOT NULL")[0][0] == "t"


def pending_events_query(database_url):
    """How to count events not yet published: the rows after the relay's cursor (or, before migration 13, the rows
    not marked published)."""
    return ("SELECT count(*) FROM outbox_pending" if has_outbox_cursor(database_url)
            else "SELECT count(*) FROM outbox WHERE published_at IS NULL")


def wait_until_converged(database_url, expected, seconds):
    """Polls until the database equals the expectation and nothing waits in the outbox; returns the difference."""
    start = time.time()
    pending_query = pending_events_query(database_url)
    while True:
        missing, extra = difference(database_url, expected)
        pending = int(sql(database_url, pending_query)[0][0])
        if (not missing and not extra and pending == 0) or time.time() > start + seconds:
            print(f"  {'converged' if not missing and not extra else 'gave up'} {time.time() - start:.1f} s after the last delivery")
            return missing, extra
        time.sleep(1)


# MARK: customer-api

def id_type(customer):
    """The kind of a sim customer's id, as customer-api's idType names it: the sim's app users are `app-user-…`,
    the other customers an appAccountToken (a UUID) or an originalTransactionId."""
    import uuid
    if customer.startswith("app-user-"):
        return "appUserId"
    try:
        uuid.UUID(customer)
        return "appAccountToken"
    except ValueError:
        return "originalTransactionId"


def print_customer_api(url, api_key, expected):
    """Asks customer-api about every expected entitlement's customer and compares what it answers as of now with
    the sim's expectation, per environment."""
    if not url:
        return True
    import urllib.error
    import urllib.request
    print("== customer-api: every expected entitlement read back through GET /v1/apps/{bundleId}/customers/{customer}")
    matching, totals, failures = {}, {}, []
    for e in expected:
        environment = e.get("environment", "Production")
        totals[environment] = totals.get(environment, 0) + 1
        path = f"/v1/apps/com.example.subscriptions/customers/{e['customer']}?environment={environment}&idType={id_type(e['customer'])}"
        request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                view = json.load(response)
        except urllib.error.HTTPError as error:
            failures.append(f"{environment} {e['customer']}: HTTP {error.code}")
            continue
        got = [x for x in view["entitlements"] if x["productId"] == e["productId"]]
        if got and got[0]["active"] == e["active"] and (got[0].get("revokedAt") is not None) == e["revoked"]:
            matching[environment] = matching.get(environment, 0) + 1
        else:
            failures.append(f"{environment} {e['customer']} {e['productId']}: {got[:1]}")
    for environment in sorted(totals):
        print(f"  {environment}: {matching.get(environment, 0)}/{totals[environment]} answered as the sim expects (active now, revoked)")
    for failure in failures[:5]:
        print(f"    differs: {failure}")
    app_users = sum(1 for e in expected if e["customer"].startswith("app-user-"))
    print(f"  of them {app_users} belong to app user ids (purchases the app posted, no appAccountToken)")
    print(f"  customer-api: {url} (its OpenAPI 3.1 description: {url}/openapi.json, also docs/openapi.json)")
    print(f"  try: curl -H 'Authorization: Bearer {api_key}' '{url}/v1/apps/com.example.subscriptions/customers/<appUserId>'"
          " (or <token>?idType=appAccountToken, <id>?idType=originalTransactionId)")
    print(f"       curl -H 'Authorization: Bearer {api_key}' -H 'Content-Type: application/json' "
          f"-d '{{\"transactionId\": \"<id>\"}}' '{url}/v1/apps/com.example.subscriptions/customers/<appUserId>/transactions'"
          " (409 device-proof-required for a purchase nobody owns yet: add the device's signedAppTransaction and"
          " deviceVerificationId, see docs/customer-api.md)")
    return not failures


# MARK: printing

def print_support(database_url, customer_api, admin_key, expected):
    """Consumption requests (answered in time / total, and why the others were not) and the support console's URL
    (`customer_api` is customer-api's admin listener, where the console is served)."""
    print("== refund and support work")
    deadline = time.time() + 60
    while True:
        counts = dict(sql(database_url, "SELECT status, count(*) FROM consumption_requests GROUP BY status"))
        if "pending" not in counts or time.time() > deadline:
            break
        time.sleep(1)
    counts = {k: int(v) for k, v in counts.items()}
    in_time = int(sql(database_url, "SELECT count(*) FROM consumption_requests WHERE status = 'sent' AND answered_at <= deadline")[0][0])
    total = sum(counts.values())
    answerable = (total - counts.get("late", 0) - counts.get("not-consented", 0) - counts.get("no-policy", 0)
                  - counts.get("not-supported", 0))
    print(f"  consumption requests answered in time: {in_time}/{total} "
          f"({in_time}/{answerable} of those Apple wants an answer to; {counts.get('late', 0)} arrived after their 12-hour window and are "
          f"reported late, {counts.get('not-consented', 0)} without the customer's consent are not answered, as Apple requires; "
          f"{counts.get('not-supported', 0)} of assigned purchases take no answer (4000227); "
          f"missed {counts.get('missed', 0)}, failed {counts.get('failed', 0)}, still pending {counts.get('pending', 0)})")
    dead = sql(database_url, "SELECT count(*), count(replayed_at) FROM dead_letters")[0]
    print(f"  DLQ records kept for the console: {dead[0]} ({dead[1]} replayed)")
    if customer_api and admin_key:
        sample = next((e["customer"] for e in expected if e["active"]), "")
        print(f"  support console: {customer_api}/console   (app, admin key {admin_key[:12]}…, search e.g. {sample})")
        app = sql(database_url, "SELECT bundle_id FROM api_keys WHERE role = 'admin' LIMIT 1")[0][0]
        print(f"    one-click link (the key stays in the fragment, never sent): {customer_api}/console#app={app}&key={admin_key}&q={sample}")
    return counts.get("pending", 0) == 0 and counts.get("missed", 0) == 0 and counts.get("failed", 0) == 0 and in_time == answerable


def print_counters(services):
    """Accepted, verified, rejected, applied, published: from the services' own metrics."""
    m = {name: metrics(url + "/metrics") for name, url in services.items()}
    ingest = by_label(m["ingest"], "ingest_requests_total")
    print(f"  ingest:              {ingest.get('accepted', 0)} accepted (HTTP 200), "
          + ", ".join(f"{v} {k}" for k, v in sorted(ingest.items()) if k != "accepted"))
    rejected = by_label(m["chain-verifier"], "chain_verifier_rejected_total")
    print(f"  chain-verifier:      {total(m['chain-verifier'], 'chain_verifier_verified_total')} verified, "
          f"{sum(rejected.values())} rejected to the DLQ {dict(sorted(rejected.items())) or ''}")
    outcomes = by_label(m["entitlement-updater"], "entitlement_updater_notifications_total")
    print("  entitlement-updater: " + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items())))
    resolver = by_label(m["refund-resolver"], "refund_resolver_requests_total")
    calls = by_label(m["refund-resolver"], "refund_resolver_api_calls_total")
    print("  refund-resolver:     status requests " + (", ".join(f"{v} {k}" for k, v in sorted(resolver.items())) or "none")
          + "; API calls " + (", ".join(f"{v} {k}" for k, v in sorted(calls.items())) or "none"))
    print(f"  event-publisher:     {total(m['event-publisher'], 'event_publisher_published_total')} events published")


def print_timelines(database_url, expected, count):
    """A few customers with telling life cycles: every notification the updater logged, then the entitlement."""
    states = {}
    for e in expected:
        kind = "revoked" if e["revoked"] else ("active" if e["active"] else "inactive")
        states.setdefault(kind, []).append(e)
    picks = [group[len(group) // 2] for group in states.values()][:count]
    for e in picks:
        environment = e.get("environment", "Production")
        print(f"  customer {e['customer']} · {e['productId']} · {environment} · original transaction {e['originalTransactionId']}")
        rows = sql(database_url, f"""
            SELECT to_char(to_timestamp(signed_date / 1000.0), 'YYYY-MM-DD HH24:MI'), notification_type,
                   coalesce(subtype, ''), outcome
            FROM notification_log WHERE subject = '{e['originalTransactionId']}' AND environment = '{environment}'
            ORDER BY signed_date, applied_at""")
        for signed, kind, subtype, outcome in rows:
            print(f"    {signed}  {(kind + ' ' + subtype).strip():<42} {outcome}")
        row = sql(database_url, f"""
            SELECT active, coalesce(to_char(to_timestamp(valid_until / 1000.0), 'YYYY-MM-DD HH24:MI'), '-'),
                   coalesce(revocation_reason::text, '-'), ownership_type
            FROM entitlements WHERE customer = '{e['customer']}' AND product_id = '{e['productId']}'
              AND environment = '{environment}'""")
        if row:
            active, until, reason, ownership = row[0]
            print(f"    → entitlement active={active == 't'} until {until} revocation reason {reason} ({ownership}); "
                  f"the sim expects active={e['active']} revoked={e['revoked']}")


def print_topics(bootstrap):
    """Message counts of every topic, and the downstream events by type."""
    for topic in PIPELINE:
        print(f"  {topic:<36} {len(read_topic(bootstrap, topic)):>6}")
    for topic in DOWNSTREAM:
        messages = read_topic(bootstrap, topic)
        types = collections.Counter(json.loads(m.value())["eventType"] for m in messages)
        ids = {json.loads(m.value())["eventId"] for m in messages}
        detail = ", ".join(f"{n} {t}" for t, n in types.most_common())
        print(f"  {topic:<36} {len(messages):>6}  ({len(ids)} distinct event ids) {detail}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--facts", help="the sim's completeness facts (appstore-sim run --facts-out)")
    parser.add_argument("--customer-api", help="customer-api's base URL, to ask it about a customer")
    parser.add_argument("--api-key", help="a customer-api key of the sim's app")
    parser.add_argument("--admin-key", help="an admin key of the sim's app (the support console)")
    parser.add_argument("--customer-api-admin", help="customer-api's admin listener (support routes and console)")
    parser.add_argument("--service", action="append", default=[], help="NAME=http://host:port")
    parser.add_argument("--wait", type=float, default=0)
    parser.add_argument("--timelines", type=int, default=3)
    args = parser.parse_args()
    expected = json.load(open(args.expected))
    services = dict(s.split("=", 1) for s in args.service)

    if args.wait:
        missing, extra = wait_until_converged(args.database_url, expected, args.wait)
    else:
        missing, extra = difference(args.database_url, expected)
    print("== notifications, by service")
    print_counters(services)
    print("== the database against the sim's expected state")
    matching = len(expected) - len(missing)
    print(f"  {matching}/{len(expected)} expected entitlements stored exactly "
          f"({sum(e['active'] for e in expected)} active, {sum(e['revoked'] for e in expected)} revoked); "
          f"{len(missing)} missing or different, {len(extra)} unexpected")
    for row in sorted(missing)[:5]:
        print(f"    expected but not stored: {row}")
    for row in sorted(extra)[:5]:
        print(f"    stored but not expected: {row}")
    by_environment = {}
    for e in expected:
        by_environment.setdefault(e.get("environment", "Production"), []).append(e)
    for environment, rows in sorted(by_environment.items()):
        wrong = sum(1 for m in missing if m[0] == environment)
        print(f"    {environment}: {len(rows) - wrong}/{len(rows)} exactly as the sim expects")
    complete = True
    if args.facts:
        present, newest, carried, one_event, refunds = completeness(args.database_url, json.load(open(args.facts)))
        print("== completeness: nothing verified is thrown away, late or not")
        print(f"  transactions stored / carried by verified notifications: {present}/{carried} "
              f"({newest} with the newest signed revocation state)")
        print(f"  revocation events / refund-like notifications (REFUND, REFUND_REVERSED, REVOKE, REFUND_DECLINED): "
              f"{one_event}/{refunds} with exactly one")
        complete = present == carried == newest and one_event == refunds
        print("  status requests the updater made, by reason (each answered by a status snapshot):")
        for reason, made, resolved in sql(args.database_url, """
                SELECT r.reason, count(*), count(l.notification_uuid) FROM status_requests r
                LEFT JOIN notification_log l ON l.notification_uuid = 'status-snapshot:' || r.request_id
                WHERE r.notification_uuid <> 'renewal-sweep' GROUP BY r.reason ORDER BY r.reason"""):
            print(f"    {reason}: {made} made, {resolved} resolved")
    print("== the app's side and lost notifications")
    bound = sql(args.database_url, "SELECT count(*), count(DISTINCT app_user_id) FROM customer_bindings")[0]
    posted = sql(args.database_url, "SELECT count(*) FROM notification_log WHERE notification_type = 'APP_PURCHASE'")[0][0]
    swept = sql(args.database_url, "SELECT count(*) FROM status_requests WHERE notification_uuid = 'renewal-sweep'")[0][0]
    print(f"  purchases posted by the app: {posted} applied, {bound[0]} purchases bound to {bound[1]} app users")
    print(f"  renewal-time sweep: {swept} subscriptions past their end asked for their status (lost DID_RENEW/EXPIRED made up for)")
    api_ok = print_customer_api(args.customer_api, args.api_key, expected)
    support_ok = print_support(args.database_url, args.customer_api_admin or args.customer_api, args.admin_key, expected)
    print("== entitlement timelines of a few customers")
    print_timelines(args.database_url, expected, args.timelines)
    print("== topics")
    print_topics(args.bootstrap)
    print("== metrics (Prometheus text; every service also has /health and /ready)")
    for name, url in services.items():
        print(f"  {name:<20} {url}/metrics")
    return 0 if not missing and not extra and complete and api_ok and support_ok else 1


if __name__ == "__main__":
    sys.exit(main())
