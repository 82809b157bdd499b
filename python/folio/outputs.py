"""Request outputs, shaped as vLLM's RequestOutput / CompletionOutput."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class Logprob:
    """One token's log-probability (over the raw model distribution)."""

    logprob: float
    rank: Optional[int] = None  # 1 = the most likely; None when outside the top-N asked for
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    """One sample of a request."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: Optional[float]
    logprobs: Optional[list[dict[int, Logprob]]]
    finish_reason: Optional[str] = None  # "stop", "length", "abort"; None while running
    stop_reason: Optional[str] = None  # the stop string that ended it

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestOutput:
    """A request's prompt and its samples (all of them once finished)."""

    request_id: str
    prompt: Optional[str]
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    num_cached_tokens: int = 0
    metrics: dict = field(default_factory=dict)


def _logprobs(rows: list[Any]) -> list[dict[int, Logprob]]:
    out = []
    for row in rows:
        chosen, top = row[0], row[1:]
        d: dict[int, Logprob] = {}
        rank = None
        for i, alt in enumerate(top):
            d[alt.id] = Logprob(alt.logprob, i + 1, alt.text)
            if alt.id == chosen.id:
                rank = i + 1
        d[chosen.id] = Logprob(chosen.logprob, rank, chosen.text)
        out.append(d)
    return out


def from_core(request_id: str, prompt: Optional[str], prompt_ids: list[int], res: Any,
              with_logprobs: bool) -> RequestOutput:
    """A RequestOutput from the engine's result (folio._core.CoreResult)."""
    outs = []
    for c in res.outputs:
        outs.append(
            CompletionOutput(
                index=c.index,
                text=c.text,
                token_ids=list(c.token_ids),
                cumulative_logprob=c.cumulative_logprob if with_logprobs else None,
                logprobs=_logprobs(c.logprobs) if with_logprobs else None,
                finish_reason=c.finish_reason or None,
                stop_reason=c.stop_reason or None,
            )
        )
    return RequestOutput(
        request_id=request_id,
        prompt=prompt,
        prompt_token_ids=list(prompt_ids),
        outputs=outs,
        finished=res.finished,
        num_cached_tokens=res.num_cached_tokens,
    )
