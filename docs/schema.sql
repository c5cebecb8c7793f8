--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: account_token_owners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_token_owners (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    app_account_token text NOT NULL,
    app_user_id text NOT NULL,
    declared_by_key text NOT NULL,
    declared_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT account_token_owners_app_account_token_check CHECK ((app_account_token = lower(app_account_token)))
);


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    key_id text NOT NULL,
    bundle_id text NOT NULL,
    label text DEFAULT ''::text NOT NULL,
    secret_sha256 bytea NOT NULL,
    rate_per_second integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    revoked_at timestamp with time zone,
    replaced_by text,
    role text DEFAULT 'app'::text NOT NULL
);


--
-- Name: consumption_facts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.consumption_facts (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    customer text NOT NULL,
    transaction_id text DEFAULT ''::text NOT NULL,
    customer_consented boolean NOT NULL,
    play_time_minutes bigint,
    delivery_status text,
    consumption_percentage integer,
    user_status integer,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    customer_kind text DEFAULT 'appUserId'::text NOT NULL
);


--
-- Name: consumption_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.consumption_requests (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    transaction_id text NOT NULL,
    original_transaction_id text NOT NULL,
    customer text NOT NULL,
    reason text,
    notification_uuid text NOT NULL,
    requested_at bigint NOT NULL,
    deadline bigint NOT NULL,
    times_requested integer DEFAULT 1 NOT NULL,
    status text NOT NULL,
    api_version text,
    facts jsonb,
    answer jsonb,
    attempts integer DEFAULT 0 NOT NULL,
    answered_at bigint,
    detail text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: customer_bindings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.customer_bindings (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    original_transaction_id text NOT NULL,
    app_user_id text NOT NULL,
    previous_app_user_id text,
    source text NOT NULL,
    bound_at timestamp with time zone DEFAULT now() NOT NULL,
    transfer_proof text
);


--
-- Name: dead_letters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.dead_letters (
    topic text NOT NULL,
    partition integer NOT NULL,
    "offset" bigint NOT NULL,
    subject text,
    environment text,
    bundle_id text,
    reason text NOT NULL,
    detail text,
    notification_uuid text,
    record jsonb NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    replayed_at timestamp with time zone
);


--
-- Name: entitlements; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.entitlements (
    customer text NOT NULL,
    product_id text NOT NULL,
    active boolean NOT NULL,
    original_transaction_id text NOT NULL,
    source_transaction_id text NOT NULL,
    ownership_type text NOT NULL,
    valid_from bigint,
    valid_until bigint,
    revoked_at bigint,
    revocation_reason integer,
    revocation_type text,
    last_signed_date bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    environment text DEFAULT ''::text NOT NULL,
    bundle_id text DEFAULT ''::text NOT NULL,
    entitlement_id text NOT NULL
);


--
-- Name: event_sequences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_sequences (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    subject text NOT NULL,
    last_sequence bigint NOT NULL
);


--
-- Name: notification_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_log (
    notification_uuid text NOT NULL,
    notification_type text NOT NULL,
    subtype text,
    subject text NOT NULL,
    environment text NOT NULL,
    signed_date bigint NOT NULL,
    received_at bigint,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    outcome text NOT NULL,
    detail text,
    advances_subject boolean DEFAULT false NOT NULL,
    bundle_id text DEFAULT ''::text NOT NULL,
    duplicates integer DEFAULT 0 NOT NULL
);


--
-- Name: outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    event_id text NOT NULL,
    topic text NOT NULL,
    key text NOT NULL,
    payload json NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    environment text DEFAULT ''::text NOT NULL,
    bundle_id text DEFAULT ''::text NOT NULL,
    trace_parent text,
    writer_xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    sequence bigint
);


--
-- Name: outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outbox_id_seq OWNED BY public.outbox.id;


--
-- Name: outbox_publications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox_publications (
    through_xid xid8 NOT NULL,
    through_id bigint NOT NULL,
    events integer NOT NULL,
    published_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: outbox_pending; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.outbox_pending AS
 SELECT outbox.id,
    outbox.event_id,
    outbox.topic,
    outbox.key,
    outbox.payload,
    outbox.created_at,
    outbox.environment,
    outbox.bundle_id,
    outbox.trace_parent,
    outbox.writer_xid
   FROM public.outbox
  WHERE ((outbox.writer_xid, outbox.id) > ( SELECT cursor.through_xid,
            cursor.through_id
           FROM (( SELECT outbox_publications.through_xid,
                    outbox_publications.through_id
                   FROM public.outbox_publications
                  ORDER BY outbox_publications.through_xid DESC, outbox_publications.through_id DESC
                 LIMIT 1)
                UNION ALL
                 SELECT '0'::xid8,
                    0) cursor
          ORDER BY cursor.through_xid DESC, cursor.through_id DESC
         LIMIT 1));


--
-- Name: realtime_answers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_answers (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    request_identifier text NOT NULL,
    first_seen_at timestamp with time zone NOT NULL,
    answer bytea
);


--
-- Name: renewal_infos; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.renewal_infos (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    original_transaction_id text NOT NULL,
    product_id text,
    auto_renew_product_id text,
    auto_renew_status integer,
    expiration_intent integer,
    is_in_billing_retry boolean,
    grace_period_expires_date bigint,
    price_increase_status integer,
    offer_type integer,
    offer_identifier text,
    offer_discount_type text,
    renewal_date bigint,
    renewal_price bigint,
    currency text,
    recent_subscription_start_date bigint,
    app_account_token text,
    app_transaction_id text,
    signed_date bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    eligible_win_back_offer_ids jsonb
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: status_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.status_requests (
    id bigint NOT NULL,
    request_id text NOT NULL,
    original_transaction_id text NOT NULL,
    environment text NOT NULL,
    reason text NOT NULL,
    notification_uuid text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    bundle_id text DEFAULT ''::text NOT NULL
);


--
-- Name: status_requests_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.status_requests_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: status_requests_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.status_requests_id_seq OWNED BY public.status_requests.id;


--
-- Name: subscription_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.subscription_migrations (
    environment text NOT NULL,
    bundle_id text NOT NULL,
    previous_original_transaction_id text NOT NULL,
    original_transaction_id text NOT NULL,
    customer text,
    notification_uuid text NOT NULL,
    signed_date bigint NOT NULL,
    migrated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: subscriptions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.subscriptions (
    original_transaction_id text NOT NULL,
    customer text NOT NULL,
    product_id text NOT NULL,
    subscription_group_identifier text,
    environment text NOT NULL,
    status integer,
    auto_renew_status integer,
    auto_renew_product_id text,
    expires_date bigint,
    grace_period_expires_date bigint,
    is_in_billing_retry boolean,
    price_increase_status integer,
    expiration_intent integer,
    last_signed_date bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    bundle_id text DEFAULT ''::text NOT NULL
);


--
-- Name: transactions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transactions (
    transaction_id text NOT NULL,
    original_transaction_id text NOT NULL,
    web_order_line_item_id text,
    bundle_id text NOT NULL,
    product_id text NOT NULL,
    product_type text,
    subscription_group_identifier text,
    environment text NOT NULL,
    app_account_token text,
    ownership_type text,
    purchase_date bigint,
    original_purchase_date bigint,
    expires_date bigint,
    quantity integer,
    transaction_reason text,
    is_upgraded boolean DEFAULT false NOT NULL,
    offer_type integer,
    offer_identifier text,
    price bigint,
    currency text,
    storefront text,
    revocation_date bigint,
    revocation_reason integer,
    revocation_type text,
    revocation_percentage integer,
    signed_date bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    storefront_id text,
    offer_discount_type text,
    offer_period text,
    app_transaction_id text
);


--
-- Name: webhook_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_attempts (
    delivery_id bigint NOT NULL,
    attempted_at timestamp with time zone NOT NULL,
    status integer,
    latency_ms integer NOT NULL,
    error text,
    response text
);


--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    id bigint NOT NULL,
    endpoint_id text NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    subject text NOT NULL,
    sequence bigint,
    payload text NOT NULL,
    published_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    first_failure_at timestamp with time zone,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    leased_until timestamp with time zone,
    delivered_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'delivered'::text])))
);


--
-- Name: webhook_deliveries_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_deliveries_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_deliveries_id_seq OWNED BY public.webhook_deliveries.id;


--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id text NOT NULL,
    environment text NOT NULL,
    bundle_id text NOT NULL,
    url text NOT NULL,
    event_types text[] DEFAULT '{}'::text[] NOT NULL,
    rate_per_second integer NOT NULL,
    concurrency integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_at timestamp with time zone,
    disabled_reason text,
    CONSTRAINT webhook_endpoints_concurrency_check CHECK ((concurrency > 0)),
    CONSTRAINT webhook_endpoints_rate_per_second_check CHECK ((rate_per_second > 0))
);


--
-- Name: webhook_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_secrets (
    id text NOT NULL,
    endpoint_id text NOT NULL,
    secret text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone
);


--
-- Name: outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox ALTER COLUMN id SET DEFAULT nextval('public.outbox_id_seq'::regclass);


--
-- Name: status_requests id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_requests ALTER COLUMN id SET DEFAULT nextval('public.status_requests_id_seq'::regclass);


--
-- Name: webhook_deliveries id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries ALTER COLUMN id SET DEFAULT nextval('public.webhook_deliveries_id_seq'::regclass);


--
-- Name: account_token_owners account_token_owners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_token_owners
    ADD CONSTRAINT account_token_owners_pkey PRIMARY KEY (environment, bundle_id, app_account_token);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (key_id);


--
-- Name: consumption_facts consumption_facts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.consumption_facts
    ADD CONSTRAINT consumption_facts_pkey PRIMARY KEY (environment, bundle_id, customer_kind, customer, transaction_id);


--
-- Name: consumption_requests consumption_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.consumption_requests
    ADD CONSTRAINT consumption_requests_pkey PRIMARY KEY (environment, bundle_id, transaction_id);


--
-- Name: customer_bindings customer_bindings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.customer_bindings
    ADD CONSTRAINT customer_bindings_pkey PRIMARY KEY (environment, bundle_id, original_transaction_id);


--
-- Name: dead_letters dead_letters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (topic, partition, "offset");


--
-- Name: entitlements entitlements_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.entitlements
    ADD CONSTRAINT entitlements_pkey PRIMARY KEY (environment, bundle_id, customer, product_id);


--
-- Name: event_sequences event_sequences_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_sequences
    ADD CONSTRAINT event_sequences_pkey PRIMARY KEY (environment, bundle_id, subject);


--
-- Name: notification_log notification_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_log
    ADD CONSTRAINT notification_log_pkey PRIMARY KEY (notification_uuid);


--
-- Name: outbox outbox_event_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_event_id_key UNIQUE (event_id);


--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);


--
-- Name: outbox_publications outbox_publications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox_publications
    ADD CONSTRAINT outbox_publications_pkey PRIMARY KEY (through_xid, through_id);


--
-- Name: realtime_answers realtime_answers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_answers
    ADD CONSTRAINT realtime_answers_pkey PRIMARY KEY (environment, bundle_id, request_identifier);


--
-- Name: renewal_infos renewal_infos_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_infos
    ADD CONSTRAINT renewal_infos_pkey PRIMARY KEY (environment, bundle_id, original_transaction_id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: status_requests status_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_requests
    ADD CONSTRAINT status_requests_pkey PRIMARY KEY (id);


--
-- Name: status_requests status_requests_request_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_requests
    ADD CONSTRAINT status_requests_request_id_key UNIQUE (request_id);


--
-- Name: subscription_migrations subscription_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.subscription_migrations
    ADD CONSTRAINT subscription_migrations_pkey PRIMARY KEY (environment, bundle_id, previous_original_transaction_id);


--
-- Name: subscriptions subscriptions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.subscriptions
    ADD CONSTRAINT subscriptions_pkey PRIMARY KEY (environment, bundle_id, original_transaction_id);


--
-- Name: transactions transactions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transactions
    ADD CONSTRAINT transactions_pkey PRIMARY KEY (environment, bundle_id, transaction_id);


--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_event_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_event_id_key UNIQUE (endpoint_id, event_id);


--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);


--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);


--
-- Name: webhook_secrets webhook_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (id);


--
-- Name: account_token_owners_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX account_token_owners_user ON public.account_token_owners USING btree (bundle_id, app_user_id);


--
-- Name: api_keys_bundle; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_bundle ON public.api_keys USING btree (bundle_id);


--
-- Name: consumption_requests_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX consumption_requests_customer ON public.consumption_requests USING btree (bundle_id, customer);


--
-- Name: consumption_requests_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX consumption_requests_pending ON public.consumption_requests USING btree (deadline) WHERE (status = 'pending'::text);


--
-- Name: consumption_requests_subscription; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX consumption_requests_subscription ON public.consumption_requests USING btree (bundle_id, original_transaction_id);


--
-- Name: customer_bindings_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX customer_bindings_user ON public.customer_bindings USING btree (bundle_id, app_user_id);


--
-- Name: dead_letters_recorded; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX dead_letters_recorded ON public.dead_letters USING btree (recorded_at);


--
-- Name: dead_letters_subject; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX dead_letters_subject ON public.dead_letters USING btree (subject);


--
-- Name: entitlements_app_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX entitlements_app_customer ON public.entitlements USING btree (bundle_id, customer);


--
-- Name: entitlements_app_original; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX entitlements_app_original ON public.entitlements USING btree (bundle_id, original_transaction_id);


--
-- Name: entitlements_lapsed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX entitlements_lapsed ON public.entitlements USING btree (valid_until) WHERE (active AND (revoked_at IS NULL));


--
-- Name: entitlements_original; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX entitlements_original ON public.entitlements USING btree (environment, bundle_id, original_transaction_id);


--
-- Name: notification_log_applied; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_log_applied ON public.notification_log USING btree (applied_at);


--
-- Name: notification_log_subject; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_log_subject ON public.notification_log USING btree (environment, bundle_id, subject, signed_date);


--
-- Name: notification_log_subject_advancing; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_log_subject_advancing ON public.notification_log USING btree (environment, bundle_id, subject, signed_date) WHERE advances_subject;


--
-- Name: outbox_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_created ON public.outbox USING btree (created_at);


--
-- Name: outbox_publication_order; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_publication_order ON public.outbox USING btree (writer_xid, id);


--
-- Name: outbox_publications_published; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_publications_published ON public.outbox_publications USING btree (published_at);


--
-- Name: realtime_answers_first_seen; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_answers_first_seen ON public.realtime_answers USING btree (first_seen_at);


--
-- Name: status_requests_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX status_requests_created ON public.status_requests USING btree (created_at);


--
-- Name: subscription_migrations_target; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX subscription_migrations_target ON public.subscription_migrations USING btree (environment, bundle_id, original_transaction_id);


--
-- Name: subscriptions_app_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX subscriptions_app_customer ON public.subscriptions USING btree (bundle_id, customer);


--
-- Name: subscriptions_app_original; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX subscriptions_app_original ON public.subscriptions USING btree (bundle_id, original_transaction_id);


--
-- Name: subscriptions_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX subscriptions_customer ON public.subscriptions USING btree (environment, bundle_id, customer);


--
-- Name: transactions_app_original; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transactions_app_original ON public.transactions USING btree (bundle_id, original_transaction_id);


--
-- Name: transactions_app_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transactions_app_token ON public.transactions USING btree (bundle_id, lower(app_account_token));


--
-- Name: transactions_original; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transactions_original ON public.transactions USING btree (environment, bundle_id, original_transaction_id);


--
-- Name: transactions_product; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transactions_product ON public.transactions USING btree (environment, bundle_id, product_id);


--
-- Name: webhook_attempts_delivery; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_attempts_delivery ON public.webhook_attempts USING btree (delivery_id, attempted_at);


--
-- Name: webhook_deliveries_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_created ON public.webhook_deliveries USING btree (endpoint_id, created_at);


--
-- Name: webhook_deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_due ON public.webhook_deliveries USING btree (endpoint_id, next_attempt_at, id) WHERE (state = 'pending'::text);


--
-- Name: webhook_deliveries_sequence; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_sequence ON public.webhook_deliveries USING btree (endpoint_id, subject, sequence);


--
-- Name: webhook_deliveries_subject; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_subject ON public.webhook_deliveries USING btree (endpoint_id, subject, id) WHERE (state = 'pending'::text);


--
-- Name: webhook_endpoints_app; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_app ON public.webhook_endpoints USING btree (environment, bundle_id);


--
-- Name: webhook_secrets_endpoint; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_secrets_endpoint ON public.webhook_secrets USING btree (endpoint_id);


--
-- Name: webhook_attempts webhook_attempts_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;


--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;


--
-- Name: webhook_secrets webhook_secrets_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


