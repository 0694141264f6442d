"""The status page in a real browser: headless Chromium against a real server.

The page is served by werkzeug on 127.0.0.1, deliveries go to the local
``endpoint`` server. Nothing here uses JavaScript on the page: the page has
none, and its Content-Security-Policy forbids any.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from flask_indexnow import clock as clock_module
from flask_indexnow.status import csrf

from ..conftest import rows
from ..live_server import LiveServer
from .browser import ARTIFACTS, StaticPage, chromium
from .conftest import PREFIX, allow, extension, history_row, insert, queue_row

#: What a browser shows does not depend on the database: SQLite only (the page's
#: queries and buttons run on all three in test_status_page.py and test_status_actions.py).
pytestmark = pytest.mark.browser
WAIT = 20  # seconds an expected page may take to appear; a pass ends far sooner


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def driver(browser: Any) -> Any:
    """The module's browser, with no cookie left from the previous test, at desktop size."""
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.set_window_size(1280, 900)
    browser.get("about:blank")
    return browser


def card(driver: Any, name: str) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, f"#{name} .value").text)


def wait_for(driver: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(ec.presence_of_element_located((By.ID, element_id)))


def click_and_wait(driver: Any, element_id: str) -> None:
    """Click a button that submits a form, and wait until the page it leads to has replaced this one."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    old_page = driver.find_element(By.TAG_NAME, "html")

    def replaced(_: Any) -> bool:
        try:
            old_page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            # Caught mid-navigation, Chromium may name the same fact differently.
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    driver.find_element(By.ID, element_id).click()
    WebDriverWait(driver, WAIT).until(replaced)
    wait_for(driver, "actions")  # the new page has arrived, not just left the old one


def console_errors(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
            and "favicon.ico" not in entry["message"]]


def phone(driver: Any, height: int = 844) -> None:
    """Emulate a 390 px wide phone (a headless window cannot be made that narrow)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": height, "deviceScaleFactor": 1, "mobile": True})


def full_page_screenshot(driver: Any, path: Any, width: int) -> None:
    height = min(int(driver.execute_script("return document.documentElement.scrollHeight")) + 40, 8000)
    if width < 500:
        phone(driver, height)
    else:
        driver.set_window_size(width, height + 100)
    path.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(path))


def test_process_queue_button(make_app, endpoint, driver):
    from selenium.webdriver.common.by import By

    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        for path in ("/", "/about", "/blog/first-post"):
            extension(app).enqueue(f"https://example.com{path}")
    now = clock_module.utcnow()
    insert(app, "Queue", queue_row("https://example.com/refused", "failed", when=now, attempts=1,
                                   http_status=422, error="HTTP 422: URL does not belong to the host"))
    insert(app, "History", history_row("https://example.com/refused", "failed", when=now - timedelta(hours=1),
                                       http_status=422, error="HTTP 422: URL does not belong to the host"))
    driver.get_log("browser")  # start with an empty console
    with LiveServer(app) as server:
        driver.get(server.url + PREFIX + "/")
        assert driver.title.startswith("IndexNow status")
        assert card(driver, "count-pending") == "3"
        assert card(driver, "count-failed") == "1"
        assert driver.find_elements(By.TAG_NAME, "script") == []
        # the stylesheet loaded under the page's CSP
        button = driver.find_element(By.ID, "process-queue")
        assert button.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"

        click_and_wait(driver, "process-queue")
        notice = wait_for(driver, "notice")
        assert "Queue processed: claimed 3, succeeded 3" in notice.text
        assert driver.current_url.endswith(PREFIX + "/#actions")
        assert card(driver, "count-pending") == "0"
        assert card(driver, "count-delivered") == "3"
        assert sorted(endpoint.urls_received()) == [
            "https://example.com/", "https://example.com/about", "https://example.com/blog/first-post"]
        history = driver.find_element(By.ID, "history-table").text
        assert "https://example.com/blog/first-post" in history
        ARTIFACTS.mkdir(exist_ok=True)
        full_page_screenshot(driver, ARTIFACTS / "status-page.png", 1280)
        driver.set_window_size(1280, 900)

        click_and_wait(driver, "retry-failed")
        assert "1 failed URL(s) back to pending." in wait_for(driver, "notice").text
        assert card(driver, "count-failed") == "0"
        assert card(driver, "count-pending") == "1"
    assert [r.status for r in rows(app)] == ["pending"]
    assert console_errors(driver) == []  # no CSP violation, no failed resource


def test_buttons_under_a_host_with_its_own_csrf_nonce(make_app, endpoint, driver):
    """Issue 19.3: the host refuses every form POST without its session's nonce; the hook adds it."""
    from .test_status_host_nonce import nonce_host, with_hook

    app = with_hook(nonce_host(allow(make_app(INDEXNOW_QUEUE_ENABLED=False))))
    with app.app_context():
        extension(app).enqueue("https://example.com/nonce")
    with LiveServer(app) as server:
        driver.get(server.url + PREFIX + "/")
        click_and_wait(driver, "process-queue")
        assert "Queue processed: claimed 1, succeeded 1" in wait_for(driver, "notice").text
    assert endpoint.urls_received() == ["https://example.com/nonce"]
    assert rows(app) == []


ATTACK = """<!doctype html>
<html><body>
<h1>You won a prize</h1>
<form id="attack" method="post" action="{target}">
  <input type="hidden" name="{field}" value="{token}">
</form>
<script>document.getElementById("attack").submit();</script>
</body></html>
"""


@pytest.mark.parametrize("token", ["forged", "leaked"])
def test_cross_site_form_post_is_refused(make_app, endpoint, driver, token):
    """A page on another origin auto-submits a form to /process: refused, nothing changes.

    "leaked" even carries the victim's real token, to prove the origin check
    stands on its own.
    """
    from selenium.webdriver.common.by import By

    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        extension(app).enqueue("https://example.com/a")
    before = [(r.url, r.status, r.attempts) for r in rows(app)]
    with LiveServer(app) as server:
        driver.get(server.url + PREFIX + "/")  # the victim is on the page: has a session and a token
        real = driver.find_element(By.NAME, csrf.FIELD).get_attribute("value")
        assert real
        html = ATTACK.format(field=csrf.FIELD, target=server.url + PREFIX + "/process", token=real if token == "leaked" else "forged")
        with StaticPage(html) as attacker:
            assert attacker.url.split(":")[2] != server.url.split(":")[2]  # another port: another origin
            driver.get(attacker.url)
            message = wait_for(driver, "message")
            assert attacker.requests == 1
        assert "Cross-site request refused" in message.text
        assert driver.current_url == server.url + PREFIX + "/process"
        # the victim's own page still works and shows nothing changed
        driver.get(server.url + PREFIX + "/")
        assert card(driver, "count-pending") == "1"
    assert [(r.url, r.status, r.attempts) for r in rows(app)] == before
    assert rows(app, "History") == []
    assert endpoint.received == []


def test_phone_width(make_app, endpoint, driver):
    """At 390 px the page does not scroll sideways; wide tables scroll inside their box."""
    from selenium.webdriver.common.by import By

    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    now = clock_module.utcnow()
    hostile = ["https://example.com/" + "x" * 1500, "https://example.com/\u202eexe.txt",
               'https://example.com/"><script>alert(1)</script>']
    insert(app, "History", *[history_row(url, "failed", when=now, http_status=400, error="HTTP 400: " + "y" * 300)
                             for url in hostile])
    insert(app, "Queue", *[queue_row(url, "failed", when=now, error="z" * 900) for url in hostile])
    with LiveServer(app) as server:
        phone(driver)
        driver.get(server.url + PREFIX + "/")
        page_width = driver.execute_script("return document.documentElement.scrollWidth")
        viewport = driver.execute_script("return window.innerWidth")
        assert viewport == 390
        assert page_width <= viewport, (page_width, viewport)
        boxes = driver.find_elements(By.CSS_SELECTOR, ".scroll")
        assert boxes and any(
            driver.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", box) for box in boxes)
        button = driver.find_element(By.ID, "process-queue")
        assert button.is_displayed() and button.rect["x"] + button.rect["width"] <= viewport
        assert "[U+202E]exe.txt" in driver.find_element(By.ID, "history-table").text
        assert driver.execute_script("return typeof window.alert") == "function"  # page intact, nothing ran
        assert driver.find_elements(By.TAG_NAME, "script") == []
        ARTIFACTS.mkdir(exist_ok=True)
        full_page_screenshot(driver, ARTIFACTS / "status-page-phone.png", 390)
