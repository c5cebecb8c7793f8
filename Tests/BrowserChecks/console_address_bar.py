"""Opens customer-api's support console in Debian's chromium through Playwright (nothing downloaded) with the
admin key in the link's fragment, waits until the page has loaded the customer, and prints one JSON object:
where the address bar ends up, whether the page loaded, the Content-Security-Policy violations the browser
reported, and the console response's security headers.

usage: console_address_bar.py URL   (URL = http://host:port/console#app=…&key=…&q=…)
"""
import json
import sys

from playwright.sync_api import sync_playwright


def main(url):
    result = {"violations": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page()
            page.on("console", lambda message: result["violations"].append(message.text)
                    if "Content Security Policy" in message.text or "Refused to" in message.text else None)
            response = page.goto(url)
            result["headers"] = {name: value for name, value in response.headers.items()
                                 if name in ("content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options")}
            page.wait_for_selector("body[data-loaded]", timeout=30000)
            result["loaded"] = page.evaluate("document.body.dataset.loaded")
            result["address"] = page.url
            result["history"] = page.evaluate("history.length")
        finally:
            browser.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
