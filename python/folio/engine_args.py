"""Engine arguments: `folio serve`'s engine flags as keywords (docs/CONFIG.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, Optional, Union

from folio import _core


@dataclass
class EngineArgs:
    """The keyword arguments of LLM(...) and AsyncLLM(...), as vLLM names them.

    An argument folio does not have (vLLM's tensor_parallel_size,
    gpu_memory_utilization, ...) is a TypeError naming it.
    """

    max_model_len: int = 0  # 0: the model's context length
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048
    long_prefill_token_threshold: int = 0
    block_size: int = 16
    kv_cache_memory: Optional[Union[int, str]] = None  # bytes or "2GiB"; None: the default
    kv_cache_dtype: str = "auto"  # auto (f16), f16, f32, int8, int4
    enable_prefix_caching: bool = True
    scheduling_policy: str = "fcfs"  # or "priority"
    threads: int = 0  # kernel threads; 0: every core
    activation_bits: int = 16  # 16 or 8
    speculative_config: Optional[Union[dict, str]] = None  # vLLM's JSON object
    attention_window: int = 0  # sink + window attention for every request; 0: off
    attention_sinks: Optional[int] = None  # None: the default for the window

    def to_core(self) -> Any:
        a = _core.EngineArgs()
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "kv_cache_memory":
                value = "" if value is None else str(value)
            elif f.name == "speculative_config":
                value = "" if value is None else (
                    value if isinstance(value, str) else json.dumps(value))
            elif f.name == "attention_sinks":
                value = -1 if value is None else value
            setattr(a, f.name, value)
        return a
