"""The chat page at / (src/server/webui/), in a real browser: Debian's headless Chromium driven by
Selenium through Debian's chromedriver.

Checked: the page and its assets load with no key; an answer streams in (its text grows before it
is done) and renders markdown with highlighted code and per-answer stats (TTFT, tok/s); the
request carries the conversation so far, the system prompt and the sampling settings; Stop aborts
the request and the server aborts the generation (/metrics: nothing running, one more abort, no
more tokens); the model picker sends the chosen model, and that model answers (/metrics); a reload
shows the same conversation and settings, and "New chat" clears it for good; against a server with
--api-key the page asks for the key, asks again after a wrong one, and then chats with it.

Set FOLIO_CHAT_SCREENSHOT=docs/chat-page.png to save the page after its first answer (a code
block) for the README."""
import json
import os
import re
import shutil
import time
import urllib.request

import pytest

webdriver = pytest.importorskip("selenium.webdriver")

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

from folio_server import MODEL, ROOT, running_server  # noqa: E402

GEMMA = ROOT / "models" / "gemma-3-270m-q4_k_m.gguf"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
COMMON = ("--max-model-len", "2048", "--max-num-seqs", "4", "--kv-cache-memory", "256MiB")
KEY = "chat-page-test-key"

# Records every fetch the page makes (url, headers, body) before its own scripts run, so a test
# sees exactly what the page sent.
RECORD_FETCH = """
window.__requests = [];
const realFetch = window.fetch.bind(window);
window.fetch = (url, opts = {}) => {
  window.__requests.push({url: String(url), headers: opts.headers || {}, body: opts.body || null});
  return realFetch(url, opts);
};
"""


def metric(base, name, **labels):
    """The value of one sample of /metrics (0 when absent)."""
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        m = re.match(r"^([a-z_:]+)\{([^}]*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return 0.0


def wait_for(predicate, timeout=20, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def browser():
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        why = "needs Debian's chromium and chromium-driver (scripts/setup installs them)"
        if os.environ.get("CI"):  # CI ran scripts/setup: a missing browser is a failure there
            pytest.fail(why)
        pytest.skip(why)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,860", "--disable-gpu"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_FETCH})
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server():
    with running_server("-m", str(GEMMA), "--served-model-name", "smollm2", "gemma3",
                        *COMMON) as s:
        yield s


def requests_sent(d, path="/v1/chat/completions"):
    return [dict(r, body=json.loads(r["body"]) if r["body"] else None)
            for r in d.execute_script("return window.__requests") if r["url"] == path]


def fill(d, element_id, value):
    el = d.find_element(By.ID, element_id)
    el.clear()
    el.send_keys(str(value))


def send(d, text):
    fill(d, "prompt", text)
    d.find_element(By.ID, "send").click()


def last_answer(d):
    return d.find_elements(By.CSS_SELECTOR, "#log .msg.assistant")[-1]


def messages_shown(d):
    return [(m.get_attribute("class"), m.text) for m in
            d.find_elements(By.CSS_SELECTOR, "#log .msg")]


def wait_done(d, timeout=30):
    wait_for(lambda: d.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "false"
             and last_answer(d).get_attribute("data-state") == "done", timeout, "the answer")
    return last_answer(d)


def open_page(d, base):
    d.get(base + "/")
    wait_for(lambda: "served" in d.find_element(By.ID, "server-status").text, 10, "the model list")


def test_answer_streams_and_renders_markdown(browser, server):
    d = browser
    open_page(d, server["base"])
    picker = Select(d.find_element(By.ID, "model"))
    assert [o.text for o in picker.options] == ["smollm2", "gemma3", "auto"]
    fill(d, "system", "You are a concise coding assistant.")
    fill(d, "temperature", 0)
    fill(d, "top-p", 0.9)
    fill(d, "max-tokens", 200)
    send(d, "Write a Python function that reverses a string.")
    # The text grows while the answer streams (several sizes seen before it is done).
    sizes = []
    deadline = time.time() + 30
    while time.time() < deadline:
        el = last_answer(d)
        state = el.get_attribute("data-state")
        if state == "streaming":
            sizes.append(len(el.find_element(By.CLASS_NAME, "content").text))
        if state == "done":
            break
        time.sleep(0.02)
    assert len(set(s for s in sizes if s > 0)) >= 3, f"text did not grow while streaming: {sizes}"
    el = wait_done(d)
    # Markdown: a fenced block became a highlighted code element.
    assert el.find_elements(By.CSS_SELECTOR, "pre code.hljs span.hljs-keyword"), \
        el.get_attribute("innerHTML")[:500]
    stats = el.find_element(By.CLASS_NAME, "stats").text
    assert re.search(r"smollm2 · TTFT \d+ ms · [\d.]+ tok/s · \d+ tokens · (stop|length)",
                     stats), stats
    if os.environ.get("FOLIO_CHAT_SCREENSHOT"):
        d.save_screenshot(os.environ["FOLIO_CHAT_SCREENSHOT"])
    # Multi-turn: the second request carries the system prompt, the first exchange and the
    # settings typed in the sidebar.
    send(d, "Now make it handle None.")
    wait_done(d)
    body = requests_sent(d)[-1]["body"]
    assert body["model"] == "smollm2" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0, 0.9, 200)
    saved = d.execute_script("return JSON.parse(localStorage.getItem('folio.chat.v1'))")
    first_answer = saved["messages"][1]["content"]
    assert "def " in first_answer
    assert body["messages"] == [
        {"role": "system", "content": "You are a concise coding assistant."},
        {"role": "user", "content": "Write a Python function that reverses a string."},
        {"role": "assistant", "content": first_answer},
        {"role": "user", "content": "Now make it handle None."}]


def test_model_output_cannot_inject_html(browser, server):
    # Answers are model output: raw HTML shows as text, only http(s)/mailto links survive, and
    # images are not fetched (render.js; the page's CSP is the second fence).
    html = browser.execute_script(
        "return import('/ui/render.js').then(m => m.renderMarkdown(arguments[0]))",
        "<img src=x onerror=alert(1)> <script>alert(2)</script> [bad](javascript:alert(3)) "
        "[good](https://example.org) ![pic](https://example.org/p.png)\n\n```js\nlet x = 1;\n```")
    assert "<img" not in html and "<script" not in html and "javascript:" not in html, html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<a href="https://example.org"' in html
    assert 'class="hljs language-js"' in html and "hljs-keyword" in html


def test_stop_aborts_the_generation_on_the_server(browser, server):
    d = browser
    base = server["base"]
    aborted = metric(base, "folio:request_success_total", finished_reason="abort",
                     model_name="smollm2")
    d.find_element(By.ID, "new-chat").click()
    fill(d, "max-tokens", 1500)
    send(d, "List the numbers from 1 to 500, separated by commas.")  # greedy: 1500 tokens
    wait_for(lambda: len(last_answer(d).find_element(By.CLASS_NAME, "content").text) > 20, 20,
             "the long answer to start")
    assert metric(base, "folio:num_requests_running", model_name="smollm2") == 1
    d.find_element(By.ID, "stop").click()
    el = wait_done(d, 10)
    assert el.find_element(By.CLASS_NAME, "stats").text.endswith("stopped")
    assert d.find_element(By.ID, "send").is_displayed()
    # The server aborted it: nothing runs, one more abort, and no more tokens come.
    wait_for(lambda: metric(base, "folio:num_requests_running", model_name="smollm2") == 0, 5,
             "the server to stop generating")
    assert metric(base, "folio:request_success_total", finished_reason="abort",
                  model_name="smollm2") == aborted + 1
    tokens = metric(base, "folio:generation_tokens_total", model_name="smollm2")
    assert tokens < 1500  # far from max_tokens
    time.sleep(0.5)
    assert metric(base, "folio:generation_tokens_total", model_name="smollm2") == tokens


def test_model_picker_sends_the_chosen_model(browser, server):
    d = browser
    base = server["base"]
    answered = metric(base, "folio:request_success_total", finished_reason="length",
                      model_name="gemma3") + metric(
        base, "folio:request_success_total", finished_reason="stop", model_name="gemma3")
    Select(d.find_element(By.ID, "model")).select_by_visible_text("gemma3")
    fill(d, "max-tokens", 12)
    send(d, "Say hello.")
    el = wait_done(d)
    assert requests_sent(d)[-1]["body"]["model"] == "gemma3"
    assert el.get_attribute("data-model") == "gemma3"  # the response's model
    assert el.find_element(By.CLASS_NAME, "stats").text.startswith("gemma3 · ")
    after = metric(base, "folio:request_success_total", finished_reason="length",
                   model_name="gemma3") + metric(
        base, "folio:request_success_total", finished_reason="stop", model_name="gemma3")
    assert after == answered + 1


def test_reload_keeps_the_conversation(browser, server):
    d = browser
    before = messages_shown(d)
    assert len(before) == 4  # the stopped count, then the gemma3 exchange
    d.refresh()
    open_page(d, server["base"])
    assert messages_shown(d) == before
    assert Select(d.find_element(By.ID, "model")).first_selected_option.text == "gemma3"
    assert d.find_element(By.ID, "max-tokens").get_attribute("value") == "12"
    d.find_element(By.ID, "new-chat").click()
    assert d.find_elements(By.CSS_SELECTOR, "#log .msg") == []
    d.refresh()
    open_page(d, server["base"])
    assert d.find_elements(By.CSS_SELECTOR, "#log .msg") == []


def test_asks_for_the_api_key(browser):
    d = browser
    with running_server("--api-key", KEY, *COMMON, model=MODEL) as s:
        d.get(s["base"] + "/")  # the page itself needs no key
        dialog = d.find_element(By.ID, "key-dialog")
        wait_for(lambda: dialog.get_attribute("open") is not None, 10, "the key prompt")
        fill(d, "key-input", "wrong-key")
        d.find_element(By.ID, "key-save").click()
        # Refused again: the prompt comes back.
        wait_for(lambda: len([r for r in d.execute_script("return window.__requests")
                              if r["url"] == "/v1/models"]) >= 2, 10, "the retry")
        wait_for(lambda: dialog.get_attribute("open") is not None, 10, "the key prompt again")
        fill(d, "key-input", KEY)
        d.find_element(By.ID, "key-save").click()
        wait_for(lambda: "1 model served" in d.find_element(By.ID, "server-status").text, 10,
                 "the models with the key")
        fill(d, "max-tokens", 8)
        send(d, "Hi")
        el = wait_done(d)
        assert el.get_attribute("data-finish") in ("stop", "length")
        assert requests_sent(d)[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
