"""Opens customer-api's console in Debian's chromium through Playwright (nothing downloaded) at its webhooks (the
link's fragment names the app, the admin key and `webhooks`), opens the delivery log of the endpoint named, replays
its newest delivery with the page's button, and prints one JSON object: the endpoints' rows as text, how many
deliveries the log showed, the first delivery row's text, which delivery was replayed, and the Content-Security-Policy
violations the browser reported.

usage: console_webhooks.py URL ENDPOINT_ID   (URL = http://host:port/console#app=…&key=…&webhooks=1)
"""
import json
import sys

from playwright.sync_api import sync_playwright


def main(url, endpoint):
    result = {"violations": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page()
            page.on("console", lambda message: result["violations"].append(message.text)
                    if "Content Security Policy" in message.text or "Refused to" in message.text else None)
            page.goto(url)
            page.wait_for_selector("body[data-webhooks]", timeout=30000)
            result["webhooks"] = page.evaluate("document.body.dataset.webhooks")
            result["endpoints"] = page.locator("#hooks tr[data-endpoint]").all_inner_texts()
            page.click(f'tr[data-endpoint="{endpoint}"] button[data-hook="deliveries"]')
            page.wait_for_selector("body[data-deliveries]", timeout=30000)
            result["deliveries"] = int(page.evaluate("document.body.dataset.deliveries"))
            rows = page.locator("#deliveries tbody tr")
            result["first"] = rows.first.inner_text() if rows.count() else ""
            result["images"] = page.locator("#hooks img").count()
            if rows.count():
                page.click('#deliveries tbody tr >> nth=0 >> button[data-hook="replay"]')
                page.wait_for_selector("body[data-replayed]", timeout=30000)
                result["replayed"] = page.evaluate("document.body.dataset.replayed")
            result["status"] = page.inner_text("#status")
        finally:
            browser.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
