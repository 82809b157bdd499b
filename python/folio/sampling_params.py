"""Sampling parameters, named and defaulted as vLLM's SamplingParams."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from folio import _core


@dataclass
class GuidedDecodingParams:
    """Structured output: exactly one of the fields (vLLM's GuidedDecodingParams).

    json: a JSON Schema (dict or JSON text); json_object: any JSON object;
    regex: the whole output matches it; choice: the output is one of these
    strings; grammar: a GBNF grammar with a `root` rule.
    """

    json: Optional[Union[str, dict]] = None
    regex: Optional[str] = None
    choice: Optional[list[str]] = None
    grammar: Optional[str] = None
    json_object: Optional[bool] = None

    def _set_on(self, req: Any) -> None:
        import json as _json

        chosen = [
            name
            for name in ("json", "regex", "choice", "grammar", "json_object")
            if getattr(self, name) not in (None, False)
        ]
        if len(chosen) != 1:
            raise ValueError(
                "GuidedDecodingParams takes exactly one of json, regex, choice, grammar, "
                f"json_object (got {chosen or 'none'})"
            )
        kind = chosen[0]
        req.constraint_kind = kind
        if kind == "json":
            req.constraint_text = self.json if isinstance(self.json, str) else _json.dumps(self.json)
        elif kind == "regex":
            req.constraint_text = self.regex
        elif kind == "grammar":
            req.constraint_text = self.grammar
        elif kind == "choice":
            req.constraint_choices = list(self.choice)


@dataclass
class SamplingParams:
    """Sampling parameters for one request (vLLM's names and defaults).

    Range checks are the engine's (the same messages `folio serve` returns).
    An argument folio does not implement (vLLM's best_of, prompt_logprobs,
    ...) is a TypeError naming it, never silently ignored.
    """

    n: int = 1
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: Optional[int] = None
    stop: Optional[Union[str, list[str]]] = None
    stop_token_ids: Optional[list[int]] = None
    ignore_eos: bool = False
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    logprobs: Optional[int] = None
    include_stop_str_in_output: bool = False
    skip_special_tokens: bool = True
    logit_bias: Optional[dict[int, float]] = None
    guided_decoding: Optional[GuidedDecodingParams] = None
    priority: int = 0

    def _to_core(self, prompt: list[int]) -> Any:
        p = _core.CoreSamplingParams()
        p.temperature = float(self.temperature)
        p.top_p = float(self.top_p)
        p.top_k = int(self.top_k)
        p.min_p = float(self.min_p)
        p.presence_penalty = float(self.presence_penalty)
        p.frequency_penalty = float(self.frequency_penalty)
        p.repetition_penalty = float(self.repetition_penalty)
        p.logit_bias = {int(k): float(v) for k, v in (self.logit_bias or {}).items()}
        p.seed = None if self.seed is None else int(self.seed)
        p.max_tokens = None if self.max_tokens is None else int(self.max_tokens)
        p.min_tokens = int(self.min_tokens)
        stop = self.stop
        p.stop = [stop] if isinstance(stop, str) else list(stop or [])
        p.stop_token_ids = [int(t) for t in (self.stop_token_ids or [])]
        p.ignore_eos = bool(self.ignore_eos)
        p.include_stop_str_in_output = bool(self.include_stop_str_in_output)
        p.logprobs = None if self.logprobs is None else int(self.logprobs)
        r = _core.CoreRequest()
        r.prompt = prompt
        r.params = p
        r.n = int(self.n)
        r.skip_special_tokens = bool(self.skip_special_tokens)
        r.priority = int(self.priority)
        if self.guided_decoding is not None:
            self.guided_decoding._set_on(r)
        return r
