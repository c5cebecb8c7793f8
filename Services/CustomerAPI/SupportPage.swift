import Foundation
import HTTPTypes
import Mustache

/// The support console: a plain page served without a build step. The shell (`/console`) asks for the app, an
/// admin key (kept in the tab's session storage, never in a cookie) and a search; the customer's part is
/// rendered on the server (``fragment(_:bundleId:)``) and put in place by a little script, which also runs the
/// actions (resync, extend a renewal date, replay a DLQ record) against the admin routes. Its Webhooks button lists
/// the app's webhook endpoints and, for one, its delivery log with a replay per delivery (built as text nodes: an
/// endpoint's answer is shown, never interpreted).
enum SupportPage {
    // MARK: The customer's fragment

    /// The server-rendered HTML of one customer: ``SupportFragment``'s template over the view's values as text.
    static func fragment(_ view: SupportView, bundleId: String) -> String {
        SupportFragment.template.render(SupportFragment.Model(view, bundleId: bundleId))
    }

    // MARK: The shell

    /// `/console`: the form and the place for the customer. No inline script or style: the page's
    /// Content-Security-Policy (``securityHeaders``) allows only `/console.js` and `/console.css` of this origin.
    static let shell = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Support console · customer-api</title>
        <link rel="stylesheet" href="/console.css">
        </head>
        <body>
        <h1>Support console</h1>
        <form id="search">
          <label>App <input name="app" id="app" size="28" required></label>
          <label>Admin key <input name="key" id="key" type="password" size="30" required></label>
          <label>Search <input name="q" id="q" size="36" placeholder="app user id, original transaction id, transaction id or order id" required></label>
          <button type="submit">Search</button>
          <button type="button" id="webhooks">Webhooks</button>
        </form>
        <p id="status"></p>
        <div id="result"></div>
        <div id="hooks"></div>
        <script src="/console.js"></script>
        </body></html>
        """

    /// `/console.css`.
    static let stylesheet = """
        body{font:14px system-ui,sans-serif;margin:1.5em;color:#222} table{border-collapse:collapse;margin:.3em 0 1em}
        th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top} th{background:#f3f3f3}
        .yes{color:#070}.no{color:#a00}.outcome.stale,.outcome.duplicate{color:#777}.outcome.conflict{color:#a00}
        .note{background:#fff6d5;padding:4px} .meta{color:#666} #status{min-height:1.4em;font-weight:bold} input{margin-right:.6em}
        """

    /// `/console.js`: reads app, key and search from the fragment (never sent to the server) or the form, drops
    /// the key from the address bar, fetches the customer's fragment and runs the actions.
    static let script = """
        const $ = (id) => document.getElementById(id);
        const state = {};
        function say(text) { $("status").textContent = text; }
        function base() { return "/v1/admin/apps/" + encodeURIComponent(state.app); }
        async function call(path, options) {
          const headers = Object.assign({"Authorization": "Bearer " + state.key}, (options && options.headers) || {});
          const response = await fetch(base() + path, Object.assign({}, options || {}, {headers}));
          const text = await response.text();
          if (!response.ok) { let m = text; try { const j = JSON.parse(text); m = j.error + ": " + j.message; } catch (e) {} throw new Error(response.status + " " + m); }
          return text;
        }
        async function search() {
          say("Searching " + state.q + "…");
          try {
            $("result").innerHTML = await call("/support/" + encodeURIComponent(state.q) + "?format=html&refunds=1");
            say("Showing " + state.q);
            document.body.dataset.loaded = "true";
          } catch (error) { $("result").innerHTML = ""; say(error.message); document.body.dataset.loaded = "error"; }
        }
        async function act(button) {
          const json = {"Content-Type": "application/json"};
          try {
            if (button.dataset.action === "resync") {
              await call("/customers/" + encodeURIComponent(button.dataset.customer) + "/resync", {method: "POST"});
              say("Resync requested; search again in a moment.");
            } else if (button.dataset.action === "extend") {
              const days = prompt("Extend " + button.dataset.original + " by how many days (1–90)?", "7");
              if (!days) return;
              const answer = JSON.parse(await call("/subscriptions/" + encodeURIComponent(button.dataset.original) + "/extend?environment=" + button.dataset.environment,
                {method: "POST", headers: json, body: JSON.stringify({extendByDays: Number(days), extendReasonCode: 1})}));
              say("Extended to " + new Date(answer.effectiveDate).toISOString());
            } else if (button.dataset.action === "replay") {
              await call("/dead-letters/replay", {method: "POST", headers: json, body: JSON.stringify({position: button.dataset.position})});
              say("Replayed " + button.dataset.position);
            }
          } catch (error) { say(error.message); }
        }
        function button(text, data) { const b = document.createElement("button"); b.type = "button"; b.textContent = text; Object.assign(b.dataset, data); return b; }
        function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text == null ? "" : String(text); if (cls) td.className = cls; return td; }
        function table(headers) { const t = document.createElement("table"); const r = t.createTHead().insertRow(); for (const h of headers) { const th = document.createElement("th"); th.textContent = h; r.appendChild(th); } t.createTBody(); return t; }
        function heading(text) { const h = document.createElement("h2"); h.textContent = text; return h; }
        async function webhooks() {
          say("Reading the webhook endpoints…");
          try {
            const list = JSON.parse(await call("/webhooks"));
            const t = table(["endpoint", "environment", "url", "event types", "pending", "state", ""]);
            for (const e of list.endpoints) {
              const r = t.tBodies[0].insertRow(); r.dataset.endpoint = e.id;
              cell(r, e.id); cell(r, e.environment); cell(r, e.url); cell(r, e.eventTypes.length ? e.eventTypes.join(", ") : "every type"); cell(r, e.pending);
              cell(r, e.disabledAt ? "disabled: " + e.disabledReason : "enabled", e.disabledAt ? "no" : "yes");
              const actions = cell(r, ""); actions.appendChild(button("Deliveries", {hook: "deliveries", endpoint: e.id}));
              if (e.disabledAt) actions.appendChild(button("Enable", {hook: "enable", endpoint: e.id}));
            }
            $("hooks").replaceChildren(heading("Webhook endpoints"), t);
            say(list.endpoints.length + " webhook endpoint(s)");
            document.body.dataset.webhooks = "loaded";
          } catch (error) { say(error.message); document.body.dataset.webhooks = "error"; }
        }
        async function deliveries(endpoint) {
          say("Reading the deliveries of " + endpoint + "…");
          const answer = JSON.parse(await call("/webhooks/" + encodeURIComponent(endpoint) + "/deliveries?limit=50"));
          const t = table(["delivery", "event", "type", "subject · sequence", "state", "attempts", "last answer", "latency", "response", ""]);
          t.id = "deliveries";
          for (const d of answer.deliveries) {
            const r = t.tBodies[0].insertRow(); const last = d.attempts[d.attempts.length - 1] || {};
            cell(r, d.id); cell(r, d.eventId); cell(r, d.eventType); cell(r, d.subject + " · " + (d.sequence == null ? "–" : d.sequence));
            cell(r, d.state, d.state === "delivered" ? "yes" : "no"); cell(r, d.attempts.length);
            cell(r, last.status == null ? (last.error || "") : last.status); cell(r, last.latencyMs == null ? "" : last.latencyMs + " ms"); cell(r, last.response || "");
            cell(r, "").appendChild(button("Replay", {hook: "replay", endpoint: endpoint, delivery: d.id}));
          }
          const old = $("deliveries"); if (old) { old.previousSibling.remove(); old.remove(); }
          $("hooks").append(heading("Deliveries of " + endpoint + ", newest first"), t);
          say(answer.deliveries.length + " deliveries of " + endpoint);
          document.body.dataset.deliveries = String(answer.deliveries.length);
        }
        async function hook(b) {
          const json = {"Content-Type": "application/json"};
          try {
            if (b.dataset.hook === "deliveries") { await deliveries(b.dataset.endpoint); }
            else if (b.dataset.hook === "enable") { await call("/webhooks/" + encodeURIComponent(b.dataset.endpoint) + "/enable", {method: "POST"}); await webhooks(); say("Enabled " + b.dataset.endpoint); }
            else if (b.dataset.hook === "replay") {
              await call("/webhooks/" + encodeURIComponent(b.dataset.endpoint) + "/replay", {method: "POST", headers: json, body: JSON.stringify({deliveryId: Number(b.dataset.delivery)})});
              say("Delivery " + b.dataset.delivery + " queued again"); document.body.dataset.replayed = b.dataset.delivery;
            }
          } catch (error) { say(error.message); }
        }
        $("hooks").addEventListener("click", (event) => { const b = event.target.closest("button[data-hook]"); if (b) hook(b); });
        $("webhooks").addEventListener("click", () => {
          state.app = $("app").value; state.key = $("key").value;
          sessionStorage.setItem("console", JSON.stringify({app: state.app, key: state.key}));
          webhooks();
        });
        $("search").addEventListener("submit", (event) => {
          event.preventDefault();
          state.app = $("app").value; state.key = $("key").value; state.q = $("q").value;
          sessionStorage.setItem("console", JSON.stringify({app: state.app, key: state.key}));
          search();
        });
        $("result").addEventListener("click", (event) => { const b = event.target.closest("button[data-action]"); if (b) act(b); });
        // A link may carry app, key and q in the fragment (never sent to the server): #app=…&key=…&q=…
        const saved = JSON.parse(sessionStorage.getItem("console") || "{}");
        const linked = new URLSearchParams(location.hash.slice(1));
        $("app").value = linked.get("app") || saved.app || ""; $("key").value = linked.get("key") || saved.key || ""; $("q").value = linked.get("q") || "";
        // The key leaves the address bar (and so the history) as soon as it is read.
        if (linked.has("key")) { linked.delete("key"); history.replaceState(null, "", location.pathname + location.search + (linked.toString() ? "#" + linked.toString() : "")); }
        if ($("app").value && $("key").value && $("q").value) { state.app = $("app").value; state.key = $("key").value; state.q = $("q").value; search(); }
        if ($("app").value && $("key").value && linked.has("webhooks")) { state.app = $("app").value; state.key = $("key").value; webhooks(); }
        """

    /// The headers every console response carries: a Content-Security-Policy without inline script (same-origin
    /// scripts, styles and fetches only, no framing, no form posts elsewhere), nosniff, no referrer, no caching.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .cacheControl: "no-store",
    ]
}
