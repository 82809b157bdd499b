"""SIGTERM drains `folio serve` with nothing dropped silently (issue #18, section 2).

Streams are started on a real server, then the process gets SIGTERM: every accepted request must
finish whole (finish_reason and [DONE], all its tokens), a new request must be refused (503 or
connection refused), and the process must exit 0. A second SIGTERM ends the grace period: every
request still running must then get an explicit error (a 503 error event) and the process must
still exit 0, at once. Counted per request."""
import http.client
import json
import signal
import threading
import time

from folio_server import running_server

N = 6


def stream(port, max_tokens, result, started):
    """One streamed completion; records its SSE payloads (parsed) in result."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": max_tokens, "stream": True,
                       "ignore_eos": True, "stream_options": {"include_usage": True}})
    conn.request("POST", "/v1/completions", body=body,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    result["status"] = r.status
    payloads = []
    try:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            data = line[len("data: "):]
            payloads.append(data if data == "[DONE]" else json.loads(data))
            started.set()
    except (http.client.IncompleteRead, ConnectionError) as e:
        result["broken"] = repr(e)
    result["payloads"] = payloads
    started.set()


def start_streams(port, max_tokens):
    results = [{} for _ in range(N)]
    events = [threading.Event() for _ in range(N)]
    threads = [threading.Thread(target=stream, args=(port, max_tokens, results[i], events[i]))
               for i in range(N)]
    for t in threads:
        t.start()
    for e in events:
        assert e.wait(60), "a stream did not start"
    return results, threads


def late_request_refused(port):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "x", "max_tokens": 1}))
        return conn.getresponse().status == 503
    except (ConnectionError, OSError):
        return True  # the listener is closed


def test_sigterm_lets_every_accepted_request_finish():
    with running_server("--shutdown-grace", "120", "--max-model-len", "512") as s:
        results, threads = start_streams(s["port"], 40)
        s["proc"].send_signal(signal.SIGTERM)
        time.sleep(0.2)
        assert late_request_refused(s["port"])
        for t in threads:
            t.join(120)
        assert s["proc"].wait(timeout=60) == 0
    finished = 0
    for r in results:
        assert r["status"] == 200 and "broken" not in r
        ps = r["payloads"]
        assert ps[-1] == "[DONE]"
        usage = ps[-2]["usage"]
        assert usage["completion_tokens"] == 40
        assert any(c["finish_reason"] == "length" for p in ps[:-2] for c in p["choices"])
        assert not any("error" in p for p in ps[:-1])
        finished += 1
    assert finished == N


def test_second_sigterm_aborts_with_an_error_to_each_client():
    with running_server("--shutdown-grace", "120", "--max-model-len", "4096") as s:
        results, threads = start_streams(s["port"], 3000)
        s["proc"].send_signal(signal.SIGTERM)
        time.sleep(0.5)
        t0 = time.time()
        s["proc"].send_signal(signal.SIGTERM)
        for t in threads:
            t.join(30)
        assert s["proc"].wait(timeout=30) == 0
        assert time.time() - t0 < 15
    errors = 0
    for r in results:
        assert r["status"] == 200 and "broken" not in r
        ps = r["payloads"]
        assert ps[-1] == "[DONE]"
        errs = [p for p in ps[:-1] if "error" in p]
        assert len(errs) == 1 and errs[0]["error"]["code"] == 503, ps[-3:]
        errors += 1
    assert errors == N
