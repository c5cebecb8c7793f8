# Source this file: functions that start the local stack the way run.sh and the benchmarks need it.
#   stack_start DIR BIN              broker + PostgreSQL in DIR, migrated, the services' roles granted, topics created; sets
#                                    $bootstrap, exports DATABASE_URL (the owner's), fills service_database_url[NAME]
#   pipeline_start BIN DIR SIM_PORT  configures the services for appstore-sim (keys in DIR/sim, API on SIM_PORT) and
#                                    starts them with logs in DIR; fills service_port[NAME], operations_port[NAME] (/health,
#                                    /ready, /metrics) and service_pid[NAME]; appends to pids
#   stack_stop DIR                   stops the broker and PostgreSQL of DIR
#   sim_follow LOG PID               shows appstore-sim's progress until its delivery ends
#   sim_undelivered LOG              after sim_follow: how many notifications the sim left undelivered
#   pids_stop                        stops (SIGTERM) and reaps every process in `pids`, then empties it
# The caller keeps `pids` (an array) of what it started.
pipeline_services=(ingest chain-verifier entitlement-updater refund-resolver event-publisher customer-api retention-messaging
    webhook-dispatcher)
# The apps the services accept: appstore-sim's, and the one of the real Apple notification in Tests/Fixtures.
sim_app="com.example.subscriptions:1234567890"
real_app="com.loki-project.loki-messenger:1470168868"
declare -A service_port service_pid operations_port service_database_url

pids_stop() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}

stack_start() {
    local dir=$1 bin=$2
    bootstrap=$(deploy/local/broker.sh start "$dir/kafka")
    DATABASE_URL=$(deploy/local/postgres.sh start "$dir/postgres")
    export DATABASE_URL
    # The schema's owner migrates and grants each service that uses PostgreSQL a role of its own (least privilege).
    local service role password passwords=()
    for service in entitlement-updater customer-api event-publisher retention-messaging webhook-dispatcher; do
        role="iap_${service//-/_}" password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
        passwords+=("ROLE_PASSWORD_$(tr a-z A-Z <<<"${role#iap_}")=$password")
        service_database_url[$service]=$(echo "$DATABASE_URL" | sed "s#^postgres://[^@]*@#postgres://$role:$password@#")
    done
    env "${passwords[@]}" "$bin/iapctl" migrate --roles | sed 's/^/  /'
    "$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 --replication-factor 1 | sed 's/^/  /'
}

stack_stop() {
    deploy/local/broker.sh stop "$1/kafka" || true
    deploy/local/postgres.sh stop "$1/postgres" || true
}

pipeline_start() {
    local bin=$1 dir=$2 sim_port=$3
    # The sim's certificates name its OCSP responder (APPSTORE_ONLINE_CHECKS=true asks it; off by default).
    "$bin/appstore-sim" init --dir "$dir/sim" --ocsp-url "http://127.0.0.1:$sim_port/sim/ocsp" > /dev/null
    export KAFKA_BOOTSTRAP_SERVERS="$bootstrap" HTTP_HOST=127.0.0.1 LOG_LEVEL=${LOG_LEVEL:-warning} KAFKA_SESSION_TIMEOUT_MS=6000
    # The verified topic's records are signed by their producer, each with a key of its own (fresh for this run); the
    # updater holds them all and applies nothing else. iapctl, run from this shell (resync), signs as itself.
    local producer verifying=""
    declare -gA record_key=()
    for producer in chain-verifier customer-api refund-resolver iapctl; do
        record_key[$producer]="local:$(head -c 32 /dev/urandom | base64 -w0)"
        verifying+="${verifying:+,}$producer:${record_key[$producer]}"
    done
    export RECORD_SIGNING_KEYS="${record_key[iapctl]}"
    export APPSTORE_APPS="$sim_app,$real_app" APPSTORE_ENVIRONMENTS=Production,Sandbox
    export APPSTORE_ROOT_CERTIFICATES="$PWD/Tests/Fixtures/real-sandbox/AppleRootCA-G3.der,$dir/sim/root.der"
    export APPSTORE_API_KEY_FILE="$dir/sim/api-key.p8" APPSTORE_API_KEY_ID=SIMKEY0001
    export APPSTORE_API_ISSUER_ID=57246542-96fe-1a63-e053-0824d011072a APPSTORE_API_BUNDLE_ID="${sim_app%%:*}"
    # Offers are signed with a second In-App Purchase key (customer-api refuses to sign with the API key).
    export APPSTORE_OFFER_KEY_FILE="$dir/sim/offer-key.p8" APPSTORE_OFFER_KEY_ID=SIMOFFER01
    # The products and offers customer-api may sign offers for (the sim's app's, written by `appstore-sim init`).
    export APPSTORE_OFFER_CATALOG_FILE="$dir/sim/offer-catalog.json"
    # retention-messaging answers the App Store's real-time requests with the example rules (docs/retention.md).
    export RETENTION_RULES_FILE="$PWD/deploy/examples/retention-rules.json"
    # The sim serves Production's API at its root and Sandbox's under /sandbox; the key calls for the sim's app only.
    export APPSTORE_API_URL_PRODUCTION="http://127.0.0.1:$sim_port" APPSTORE_API_URL_SANDBOX="http://127.0.0.1:$sim_port/sandbox"
    export APPSTORE_API_APPS="${sim_app%%:*}"
    # Webhook endpoints on loopback (the demo's receiver): allowed here only, never in the manifests.
    export WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true
    export RESOLVER_RATE_PER_SECOND=${RESOLVER_RATE_PER_SECOND:-50} RECONCILE_INTERVAL_SECONDS=${RECONCILE_INTERVAL_SECONDS:-60}
    local service
    # customer-api's support routes and console listen on a port of their own, as in the manifests.
    customer_api_admin_port=$(deploy/local/free-port.sh)
    for service in "${pipeline_services[@]}"; do
        service_port[$service]=$(deploy/local/free-port.sh)
        operations_port[$service]=${service_port[$service]}
        # The two services with a public port serve /health, /ready and /metrics on an operations port of their own.
        case $service in ingest|customer-api|retention-messaging) operations_port[$service]=$(deploy/local/free-port.sh) ;; esac
        # Each service connects with its own role; the updater leaves migrations to the owner (done above).
        # Only the producers get a signing key, only the updater the verifying keys.
        RECORD_SIGNING_KEYS=${record_key[$service]:-} RECORD_VERIFYING_KEYS=$([[ $service == entitlement-updater ]] && echo "$verifying") \
            OPERATIONS_PORT=$([[ ${operations_port[$service]} != "${service_port[$service]}" ]] && echo "${operations_port[$service]}") \
            CUSTOMER_API_ADMIN_PORT=$([[ $service == customer-api ]] && echo "$customer_api_admin_port") \
            DATABASE_URL=${service_database_url[$service]:-$DATABASE_URL} MIGRATE_ON_START=false \
            HTTP_PORT=${service_port[$service]} "$bin/$service" 2>>"$dir/$service.log" &
        service_pid[$service]=$!
        pids+=($!)
    done
    for service in "${pipeline_services[@]}"; do
        for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:${operations_port[$service]}/ready" >/dev/null && break; sleep 0.1; done
        curl -fs "http://127.0.0.1:${operations_port[$service]}/ready" >/dev/null \
            || { echo "$service did not become ready:" >&2; tail "$dir/$service.log" >&2; return 1; }
    done
}

# The sim's last line when its delivery ends; a retry pass's "retrying N undelivered notifications" is not the end.
sim_delivery_ended='^appstore-sim: ([0-9]+) notifications undelivered'

# sim_follow LOG PID: prints the sim's log as it grows until its delivery ends.
sim_follow() {
    local log=$1 shown=0 total
    until grep -qE "$sim_delivery_ended" "$log" 2>/dev/null; do
        sleep 0.5
        total=$(wc -l < "$log")
        if [[ $total -gt $shown ]]; then sed -n "$((shown + 1)),${total}p" "$log" | sed 's/^/  /'; shown=$total; fi
        kill -0 "$2" 2>/dev/null || { echo "appstore-sim stopped" >&2; return 1; }
    done
    sed -n "$((shown + 1)),\$p" "$log" | sed 's/^/  /'
}

# sim_undelivered LOG: the count of the sim's last line (after sim_follow has returned).
sim_undelivered() {
    sed -nE "s/$sim_delivery_ended.*/\\1/p" "$1" | tail -n 1
}
