"""`folio info --json` on the real models, checked against figures computed here
independently with the `gguf` package's GGUFReader.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_info.py
The models come from scripts/setup; a missing one is a failure, not a skip.
"""
import collections
import functools
import json
import os
import pathlib
import subprocess

import pytest
import gguf
import numpy as np
from gguf import GGUFReader

ROOT = pathlib.Path(os.environ.get("FOLIO_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
FOLIO = os.environ.get("FOLIO_BIN", "/work/main/build/release/folio")
MODELS = {
    "smollm2": ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": ROOT / "models" / "gemma-3-270m-q4_k_m.gguf",
}


def model(name):
    path = MODELS[name]
    assert path.exists(), f"{path} is missing: run scripts/setup to download the test models"
    return path


def folio_info(path, *args):
    out = subprocess.run([FOLIO, "info", str(path), *args], check=True, capture_output=True, text=True)
    return out.stdout


def folio_json(path, *args):
    return json.loads(folio_info(path, "--json", *args))


@functools.lru_cache(maxsize=None)
def reference(path):
    return Reference(path)


class Reference:
    """What the file says, read with gguf-py (not with folio)."""

    def __init__(self, path):
        r = GGUFReader(str(path))
        self.fields = r.fields
        self.tensors = r.tensors
        self.arch = self.get("general.architecture")
        a = self.arch
        self.layers = self.get(f"{a}.block_count")
        self.heads = self.get(f"{a}.attention.head_count")
        self.kv_heads = self.get(f"{a}.attention.head_count_kv", self.heads)
        self.embd = self.get(f"{a}.embedding_length")
        self.head_dim_k = self.get(f"{a}.attention.key_length", self.embd // self.heads)
        self.head_dim_v = self.get(f"{a}.attention.value_length", self.embd // self.heads)
        self.context = self.get(f"{a}.context_length")
        self.window = self.get(f"{a}.attention.sliding_window", 0)
        self.vocab = len(self.fields["tokenizer.ggml.tokens"].data)

    def get(self, key, default=None):
        f = self.fields.get(key)
        return default if f is None else f.contents()

    def kv_elements_per_token(self):
        return self.layers * self.kv_heads * (self.head_dim_k + self.head_dim_v)

    def int8_bytes(self, elements):
        # int8 rows: a byte a value plus an f16 scale per 32 values (kv_sizing.h).
        row = lambda d: d + 2 * -(-d // 32)  # noqa: E731
        return elements // (self.head_dim_k + self.head_dim_v) * (row(self.head_dim_k) + row(self.head_dim_v))

    def int4_bytes(self, elements):
        # int4 rows: half a byte a value plus an f16 scale per 32 values (kv_row.h).
        row = lambda d: (d + 1) // 2 + 2 * -(-d // 32)  # noqa: E731
        return elements // (self.head_dim_k + self.head_dim_v) * (row(self.head_dim_k) + row(self.head_dim_v))

    def histogram(self):
        h = collections.defaultdict(lambda: {"count": 0, "parameters": 0, "bytes": 0})
        for t in self.tensors:
            e = h[t.tensor_type.name]
            e["count"] += 1
            e["parameters"] += int(t.n_elements)
            e["bytes"] += int(t.n_bytes)
        return dict(h)


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    path = model(request.param)
    return request.param, path, reference(path), folio_json(path)


def test_hyper_parameters_match_gguf_py(case):
    _, _, ref, info = case
    m = info["model"]
    assert m["architecture"] == ref.arch
    assert m["block_count"] == ref.layers
    assert m["head_count"] == ref.heads
    assert m["head_count_kv"] == ref.kv_heads
    assert m["head_dim_k"] == ref.head_dim_k
    assert m["head_dim_v"] == ref.head_dim_v
    assert m["embedding_length"] == ref.embd
    assert m["context_length"] == ref.context
    assert m["vocab_size"] == ref.vocab
    assert m["sliding_window"] == ref.window
    assert info["tokenizer"]["vocab_size"] == ref.vocab
    assert info["tokenizer"]["model"] == ref.get("tokenizer.ggml.model")


def test_tensor_totals_and_histogram_match_gguf_py(case):
    _, path, ref, info = case
    t = info["tensors"]
    assert t["count"] == len(ref.tensors)
    assert t["parameters"] == sum(int(x.n_elements) for x in ref.tensors)
    assert t["weight_bytes"] == sum(int(x.n_bytes) for x in ref.tensors)
    assert t["types"] == ref.histogram()
    assert info["file"]["size_bytes"] == path.stat().st_size


def test_kv_cache_per_token(case):
    _, _, ref, info = case
    kv = info["kv_cache"]
    elems = ref.kv_elements_per_token()
    assert kv["elements_per_token"] == elems
    assert kv["bytes_per_token"] == {"f16": 2 * elems, "int8": ref.int8_bytes(elems),
                                     "int4": ref.int4_bytes(elems)}
    assert kv["max_model_len"] == ref.context and kv["num_seqs"] == 1
    assert kv["full_bytes"]["f16"] == 2 * elems * ref.context


def test_smollm2_figures():
    info = folio_json(model("smollm2"))
    m = info["model"]
    assert (m["block_count"], m["head_count_kv"], m["head_dim_k"]) == (30, 3, 64)
    assert info["kv_cache"]["bytes_per_token"]["f16"] == 23040  # 2 x 30 x 3 x 64 x 2
    assert info["tensors"]["count"] == 272
    assert "windowed_bytes" not in info["kv_cache"]  # no sliding window
    assert info["tokenizer"]["pre"] == "smollm"
    assert info["tokenizer"]["special"]["bos"] == 1 and info["tokenizer"]["special"]["eos"] == 2


def test_load_reports_the_repacked_matrices():
    # At every SIMD level every 2-D tensor of a type with a panel layout is repacked at load
    # (the tied token embedding too: it is also the output head), into one layout shared by
    # the levels, and panels are as large as the file's bytes when the row count is a
    # multiple of 8 (true for every SmolLM2 matrix).
    path = model("smollm2")
    load = folio_json(path)["load"]
    panel_types = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q6_K"}
    expected = [t for t in GGUFReader(path).tensors
                if t.tensor_type.name in panel_types and len(t.shape) == 2]
    assert load["seconds"] > 0
    assert load["isa"] == load["isa_detected"]
    if load["isa"] != "scalar":
        assert load["repacked_matrices"] == len(expected) == 211
        assert load["repacked_bytes"] == sum(int(t.n_bytes) for t in expected)
        assert "matrices repacked into 8-row panels" in folio_info(path)
        # The panels are advised for 2 MiB pages; the system's THP mode decides.
        enabled = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")
        mode = (enabled.read_text().split("[")[1].split("]")[0] if enabled.exists()
                else "unavailable")
        assert load["huge_pages"] == mode
        pages = {"always": " in 2 MiB pages", "madvise": " in 2 MiB pages",
                 "never": " in 4 KiB pages"}.get(mode, "")
        assert f"MiB{pages} (transparent huge pages: {mode})" in folio_info(path)
    else:
        assert load["repacked_matrices"] == 0


def folio_env(path, isa, *args):
    env = dict(os.environ, FOLIO_ISA=isa)
    return subprocess.run([FOLIO, "info", str(path), *args], capture_output=True, text=True,
                          env=env)


def test_folio_isa_caps_the_kernel_level():
    # FOLIO_ISA=scalar runs the portable kernels on any CPU: nothing is repacked, and the
    # text names the cap and what the CPU supports.
    path = model("smollm2")
    detected = folio_json(path)["load"]["isa_detected"]
    out = folio_env(path, "scalar", "--json")
    assert out.returncode == 0, out.stderr
    load = json.loads(out.stdout)["load"]
    assert load["isa"] == "scalar" and load["isa_detected"] == detected
    assert load["repacked_matrices"] == 0 and load["kernels"] == "scalar tiles"
    text = folio_env(path, "scalar").stdout
    if detected != "scalar":
        assert f"capped by FOLIO_ISA; the CPU supports {detected}" in text


def test_stream_ahead_is_reported_and_set_by_the_environment():
    # The SIMD kernels request the weights they stream some bytes ahead: 2 KiB on AMD CPUs,
    # 16 KiB on others (kernels/cpu_features.h); FOLIO_STREAM_AHEAD sets it, bad values fail.
    path = model("smollm2")
    load = folio_json(path)["load"]
    vendor = open("/proc/cpuinfo").read()
    expected = 2048 if "AuthenticAMD" in vendor else 16384
    if load["isa"] == "scalar":
        assert load["stream_ahead_bytes"] == 0
        return
    assert load["stream_ahead_bytes"] == expected
    assert f"weights requested {expected} bytes ahead" in folio_info(path)
    env = dict(os.environ, FOLIO_STREAM_AHEAD="4096")
    out = subprocess.run([FOLIO, "info", str(path), "--json"], capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["load"]["stream_ahead_bytes"] == 4096
    env["FOLIO_STREAM_AHEAD"] = "4000"
    out = subprocess.run([FOLIO, "info", str(path)], capture_output=True, text=True, env=env)
    assert out.returncode == 1
    assert "FOLIO_STREAM_AHEAD=4000: expected a byte count, a multiple of 64" in out.stderr
    out = folio_env(path, "scalar", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["load"]["stream_ahead_bytes"] == 0


def test_folio_isa_refuses_unknown_and_unsupported_levels():
    path = model("smollm2")
    out = folio_env(path, "avx9")
    assert out.returncode == 1
    assert "instruction set 'avx9': expected one of scalar, avx2, avx512, amx" in out.stderr
    levels = ["scalar", "avx2", "avx512", "amx"]
    detected = folio_json(path)["load"]["isa_detected"]
    for above in levels[levels.index(detected) + 1:]:
        out = folio_env(path, above)
        assert out.returncode == 1
        assert f"this CPU supports at most {detected}" in out.stderr


def test_load_of_an_unsupported_architecture_is_reported(tmp_path):
    # A GGUF of an architecture folio has no forward pass for (written with gguf-py).
    path = tmp_path / "mamba.gguf"
    w = gguf.GGUFWriter(str(path), "mamba")
    w.add_block_count(1)
    w.add_embedding_length(8)
    w.add_context_length(64)
    w.add_feed_forward_length(16)
    w.add_head_count(2)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(["a", "b"])
    w.add_tensor("token_embd.weight", np.zeros((2, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    load = folio_json(path)["load"]
    assert "mamba" in load["error"] and "not supported" in load["error"]
    assert "gemma3" in load["error"]  # the supported list


def test_gemma3_loads_with_its_features_reported():
    info = folio_json(model("gemma3"))
    assert "error" not in info["load"]
    m = info["model"]
    assert m["rope"]["freq_base"] == 1e6 and m["rope"]["freq_base_swa"] == 10000.0
    assert m["attention_scale"] == pytest.approx(1 / 16)  # 1/sqrt(head_dim 256)
    assert m["attn_logit_softcapping"] == 0 and m["final_logit_softcapping"] == 0
    # The file has no tokenizer.chat_template: folio's built-in one is used.
    assert reference(model("gemma3")).get("tokenizer.chat_template") is None
    assert info["tokenizer"]["chat_template"] == "built-in gemma3"
    assert folio_json(model("smollm2"))["tokenizer"]["chat_template"] == "the model's"


def test_max_model_len_and_num_seqs():
    info = folio_json(model("smollm2"), "--max-model-len", "1000", "--num-seqs", "3")
    kv = info["kv_cache"]
    assert (kv["max_model_len"], kv["num_seqs"]) == (1000, 3)
    # int8: 30 layers x 3 heads x 2 rows x (64 + 2 scales of 2 bytes) = 12240 B a token;
    # int4: 30 x 3 x 2 x (32 + 2 x 2) = 6480 B.
    assert kv["full_bytes"] == {"f16": 23040 * 3000, "int8": 12240 * 3000, "int4": 6480 * 3000}
    # No window: one layer group of all 30 layers, every position kept.
    pg = kv["paged"]
    assert pg["group_windows"] == [0] and pg["layers_per_block"] == 30
    assert pg["blocks_per_seq"] == pg["every_position_blocks_per_seq"] == 1000 // 16 + 1


def test_gemma3_sliding_window_caps_local_layers():
    ref = reference(model("gemma3"))
    info = folio_json(model("gemma3"), "--max-model-len", "4096", "--num-seqs", "2")
    m, kv = info["model"], info["kv_cache"]
    # Gemma 3: every 6th layer attends globally, the other five within the window.
    is_global = [(i + 1) % 6 == 0 for i in range(ref.layers)]
    assert m["sliding_layers"] == is_global.count(False) == 15
    per_layer = ref.kv_heads * (ref.head_dim_k + ref.head_dim_v)
    windowed = sum(per_layer * (4096 if g else min(4096, ref.window)) for g in is_global) * 2
    assert kv["windowed_bytes"]["f16"] == 2 * windowed
    assert kv["full_bytes"]["f16"] == 2 * ref.kv_elements_per_token() * 4096 * 2
    assert kv["windowed_bytes"]["f16"] < kv["full_bytes"]["f16"]
    global_elems = is_global.count(True) * per_layer
    assert kv["bytes_per_token_beyond_window"] == {"f16": 2 * global_elems,
                                                   "int8": ref.int8_bytes(global_elems),
                                                   "int4": ref.int4_bytes(global_elems)}
    # The paged pool: 3 global layers, 15 sliding ones in 5 groups of 3; blocks
    # of 16 positions; a sliding group holds the window plus one 2048-token step.
    pg = kv["paged"]
    assert pg["group_windows"] == [0] + [ref.window] * 5
    assert pg["layers_per_block"] == 3
    assert pg["bytes_per_block"]["f16"] == 3 * 16 * 2 * per_layer
    blocks = 4096 // 16
    sliding = min(blocks, -(-(ref.window - 1 + 2048) // 16) + 1)
    assert pg["blocks_per_seq"] == blocks + 5 * sliding
    assert pg["every_position_blocks_per_seq"] == 6 * blocks
    assert pg["bytes"]["f16"] == 2 * (blocks + 5 * sliding) * pg["bytes_per_block"]["f16"]


def test_attention_window_keeps_the_paged_need_flat():
    # SmolLM2 (no window of its own) under --attention-window 1024 + 4 sinks: one group holds
    # its sink block and the window plus one 2048-token step, however long the sequence.
    for length in (8192, 32768):
        info = folio_json(model("smollm2"), "--max-model-len", str(length), "--attention-window",
                          "1024", "--attention-sinks", "4")
        pg = info["kv_cache"]["paged"]
        assert pg["attention_window"] == {"window": 1024, "sinks": 4}
        assert pg["blocks_per_seq"] == 1 + (-(-(1024 - 1 + 2048) // 16) + 1)
        assert pg["every_position_blocks_per_seq"] == length // 16
        assert pg["bytes"]["f16"] == pg["blocks_per_seq"] * pg["bytes_per_block"]["f16"]
    # Gemma 3: a policy wider than its own window narrows only the global layers.
    pg = folio_json(model("gemma3"), "--max-model-len", "32768", "--attention-window",
                    "2048")["kv_cache"]["paged"]
    sliding = -(-(512 - 1 + 2048) // 16) + 1
    assert pg["blocks_per_seq"] == (1 + -(-(2048 - 1 + 2048) // 16) + 1) + 5 * sliding
    for bad in (["--attention-sinks", "4"], ["--attention-window", "8", "--attention-sinks", "9"],
                ["--attention-window", "-1"]):
        r = subprocess.run([FOLIO, "info", model("smollm2"), *bad], capture_output=True, text=True)
        assert r.returncode != 0 and "--attention-" in r.stderr, (bad, r.stderr)


def test_text_output_and_metadata_only_when_asked():
    text = folio_info(model("smollm2"))
    assert "per token: f16 23040 B | int8 12240 B" in text
    assert "llama" in text and "30" in text
    assert "tokenizer.ggml.merges" not in text
    with_md = folio_info(model("smollm2"), "--metadata")
    assert "tokenizer.ggml.merges = [string x 48900]" in with_md
    md = folio_json(model("smollm2"), "--metadata")["metadata"]
    assert md["llama.block_count"] == 30
    assert md["tokenizer.ggml.tokens"] == {"array_of": "string", "length": 49152}
    assert "metadata" not in folio_json(model("smollm2"))


def test_bad_file_is_a_clean_error(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(60))
    out = subprocess.run([FOLIO, "info", str(bad)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "not a GGUF file" in out.stderr


def test_speculative_draft_model_is_checked_and_described():
    smol, gemma = model("smollm2"), model("gemma3")
    spec = '{"method": "draft_model", "model": "%s", "num_speculative_tokens": 3}'
    info = folio_json(smol, "--speculative-config", spec % smol)
    s = info["speculative"]
    assert s["method"] == "draft_model" and s["num_speculative_tokens"] == 3
    ref = reference(smol)
    d = s["draft_model"]
    assert d["n_layer"] == ref.layers and d["n_vocab"] == len(ref.get("tokenizer.ggml.tokens"))
    assert d["kv_bytes_per_token"]["f16"] == 2 * ref.kv_elements_per_token()
    assert s["draft_cost"] == pytest.approx(1.0)  # the model as its own draft: a whole step
    assert "cost=1.00" in s["description"]
    # Another vocabulary: refused, saying where (gemma's 262144 tokens vs SmolLM2's 49152).
    r = subprocess.run([FOLIO, "info", str(smol), "--speculative-config", spec % gemma],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert ("the target has 49152 tokens, the draft %d"
            % len(reference(gemma).get("tokenizer.ggml.tokens"))) in r.stderr
