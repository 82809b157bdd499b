"""HTTPS and API keys with the official openai client (issue #18, security).

A self-signed certificate is made here with the `openssl` tool; `folio serve` gets it through
vLLM's flags (--ssl-certfile, --ssl-keyfile, --ssl-ca-certs, --ssl-cert-reqs) and several keys
(--api-key twice and an --api-key-file). The client checks the certificate against that file, as
a team deploying with its own CA would. Also: plain HTTP to the TLS port gets no HTTP answer and
leaves the server healthy, client certificates when required, keys never logged, and bad TLS
flags refused at start-up with a message naming the flag."""
import http.client
import socket
import ssl
import subprocess
import time

import openai
import pytest

from folio_server import FOLIO, MODEL, running_server

KEYS = ["key-from-flag-1", "key-from-flag-2"]
FILE_KEYS = ["key-from-file"]


def make_cert(dir_, name, cn):
    key, cert = dir_ / f"{name}.key", dir_ / f"{name}.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={cn}",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True)
    return key, cert


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    server_key, server_cert = make_cert(d, "server", "127.0.0.1")
    client_key, client_cert = make_cert(d, "client", "folio-test-client")
    key_file = d / "keys.txt"
    key_file.write_text("# folio test keys\n\n" + "\n".join(FILE_KEYS) + "\n")
    return {"key": server_key, "cert": server_cert, "client_key": client_key,
            "client_cert": client_cert, "key_file": key_file, "dir": d}


def trust(certs):
    return ssl.create_default_context(cafile=str(certs["cert"]))


@pytest.fixture(scope="module")
def server(certs):
    flags = ["--ssl-certfile", str(certs["cert"]), "--ssl-keyfile", str(certs["key"]),
             "--api-key", KEYS[0], "--api-key", KEYS[1], "--api-key-file", str(certs["key_file"]),
             "--max-model-len", "512"]
    with running_server(*flags, tls=trust(certs)) as s:
        yield s
    assert s["exit_code"] == 0


def client(server, certs, key, **kw):
    return openai.OpenAI(base_url=server["base"] + "/v1", api_key=key, max_retries=0, timeout=60,
                         http_client=openai.DefaultHttpxClient(verify=trust(certs), **kw))


def test_every_key_works_over_https(server, certs):
    answers = []
    for key in KEYS + FILE_KEYS:
        c = client(server, certs, key)
        assert [m.id for m in c.models.list().data]
        r = c.chat.completions.create(
            model="", messages=[{"role": "user", "content": "Name a colour."}], max_tokens=8,
            temperature=0)
        assert r.choices[0].message.content
        answers.append(r.choices[0].message.content)
    assert len(set(answers)) == 1  # greedy: the same answer whichever key


def test_streaming_over_https_equals_non_streaming(server, certs):
    c = client(server, certs, KEYS[1])
    kw = dict(model="", prompt="The capital of France is", max_tokens=12, temperature=0)
    whole = c.completions.create(**kw).choices[0].text
    streamed = "".join(ch.choices[0].text for ch in c.completions.create(stream=True, **kw)
                       if ch.choices)
    assert streamed == whole and whole


def test_wrong_or_missing_key_is_refused(server, certs):
    for key in ["wrong", KEYS[0] + "x", KEYS[0][:-1], "# folio test keys"]:
        with pytest.raises(openai.AuthenticationError):
            client(server, certs, key).models.list()
    conn = http.client.HTTPSConnection("127.0.0.1", server["port"], timeout=10,
                                       context=trust(certs))
    for path in ["/v1/models", "/tokenize", "/version"]:
        conn.request("GET" if path != "/tokenize" else "POST", path, body="{}")
        r = conn.getresponse()
        r.read()
        assert r.status == 401, path
    conn.request("GET", "/health")
    assert conn.getresponse().status == 200


def test_untrusted_certificate_is_rejected_by_the_client(server, certs):
    c = openai.OpenAI(base_url=server["base"] + "/v1", api_key=KEYS[0], max_retries=0,
                      timeout=10, http_client=openai.DefaultHttpxClient())  # system CAs only
    with pytest.raises(openai.APIConnectionError):
        c.models.list()


def test_plain_http_to_the_tls_port_gets_no_answer(server, certs):
    with socket.create_connection(("127.0.0.1", server["port"]), timeout=10) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        assert not data.startswith(b"HTTP/")
    # ... and the server still serves TLS clients.
    assert client(server, certs, KEYS[0]).models.list().data


def test_keys_never_logged(server, certs):
    for key in KEYS + ["a-wrong-key-123"]:
        try:
            client(server, certs, key).models.list()
        except openai.AuthenticationError:
            pass
    server["proc"].terminate()
    out = server["proc"].stdout.read()
    server["exit_code"] = server["proc"].wait(timeout=30)
    for key in KEYS + FILE_KEYS + ["a-wrong-key-123"]:
        assert key not in out
    assert "https://" in out


def test_client_certificate_required(certs):
    flags = ["--ssl-certfile", str(certs["cert"]), "--ssl-keyfile", str(certs["key"]),
             "--ssl-ca-certs", str(certs["client_cert"]), "--ssl-cert-reqs", "2",
             "--max-model-len", "256"]
    # The health probe itself needs the client certificate.
    ctx = trust(certs)
    ctx.load_cert_chain(str(certs["client_cert"]), str(certs["client_key"]))
    with running_server(*flags, tls=ctx) as s:
        with_cert = openai.OpenAI(base_url=s["base"] + "/v1", api_key="none", max_retries=0,
                                  timeout=30, http_client=openai.DefaultHttpxClient(verify=ctx))
        assert with_cert.models.list().data
        without = client(s, certs, "none")
        with pytest.raises(openai.APIConnectionError):
            without.models.list()
    assert s["exit_code"] == 0


@pytest.mark.parametrize("flags,named", [
    (["--ssl-certfile", "{cert}"], "--ssl-keyfile"),
    (["--ssl-certfile", "{cert}", "--ssl-keyfile", "{client_key}"], "--ssl-keyfile"),
    (["--ssl-certfile", "{key}", "--ssl-keyfile", "{key}"], "--ssl-certfile"),
    (["--ssl-cert-reqs", "2", "--ssl-certfile", "{cert}", "--ssl-keyfile", "{key}"],
     "--ssl-ca-certs"),
    (["--ssl-cert-reqs", "3"], "--ssl-cert-reqs"),
    (["--api-key-file", "{dir}/missing.txt"], "--api-key-file"),
    (["--api-key", ""], "--api-key"),
    (["--allowed-origins", "chat.example"], "--allowed-origins"),
])
def test_bad_security_flags_are_refused(certs, flags, named):
    args = [f.format(**{k: str(v) for k, v in certs.items()}) for f in flags]
    t0 = time.time()
    r = subprocess.run([FOLIO, "serve", str(MODEL), "--port", "0", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert named in r.stderr, r.stderr
    assert time.time() - t0 < 120
