"""LLM: offline batched generation, vLLM's `LLM` class over folio's engine."""

from __future__ import annotations

import itertools
import os
from typing import Any, Optional, Sequence, Union

from folio import _core
from folio.engine_args import EngineArgs
from folio.outputs import RequestOutput, from_core
from folio.sampling_params import SamplingParams
from folio.tokenizer import Tokenizer, chat_prompt, prompt_ids

PromptType = Union[str, dict]


class LLM:
    """A model loaded into folio's continuous-batching engine.

        llm = LLM(model="model.gguf", max_num_seqs=64, kv_cache_dtype="int8")
        outputs = llm.generate(prompts, SamplingParams(temperature=0, max_tokens=64))

    `model`: a GGUF file or a Hugging Face checkpoint directory. Keyword
    arguments are the engine flags (folio.engine_args.EngineArgs). A batch
    runs on the calling thread with the GIL released; Ctrl-C aborts it and
    raises KeyboardInterrupt. Errors are folio.FolioError (a ValueError) with
    folio's message.
    """

    def __init__(self, model: Union[str, os.PathLike], **engine_args: Any) -> None:
        args = EngineArgs(**engine_args)
        self.model = os.fspath(model)
        self.engine_args = args
        self._core = _core.OfflineEngine(self.model, args.to_core())
        self._ids = itertools.count()

    def __repr__(self) -> str:
        return f"LLM(model={self.model!r}: {self._core.summary()})"

    def get_tokenizer(self) -> Tokenizer:
        return Tokenizer(self._core)

    def generate(
        self,
        prompts: Union[PromptType, Sequence[PromptType]],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        *,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """Generates for every prompt in one engine run; outputs in prompt order.

        A prompt is a string (tokenized with the vocabulary's BOS/EOS rules, no
        chat template), {"prompt": str} or {"prompt_token_ids": [int, ...]}.
        `sampling_params`: one for all prompts or one per prompt (default:
        SamplingParams()). `use_tqdm`: a progress bar when tqdm is installed.
        """
        items = [prompts] if isinstance(prompts, (str, dict)) else list(prompts)
        return self._run([prompt_ids(self._core, p, i) for i, p in enumerate(items)],
                         sampling_params, use_tqdm)

    def chat(
        self,
        messages: Union[list[dict], Sequence[list[dict]]],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        *,
        use_tqdm: bool = True,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = True,
    ) -> list[RequestOutput]:
        """Chat completions: one conversation (a list of {"role", "content"}
        messages) or a list of conversations, rendered with the model's chat
        template (or `chat_template`) as `folio serve` renders them."""
        if not isinstance(messages, (list, tuple)):
            raise TypeError("messages must be a list of messages or a list of conversations")
        convs = [messages] if not messages or isinstance(messages[0], dict) else list(messages)
        return self._run([chat_prompt(self._core, conv, add_generation_prompt, chat_template)
                          for conv in convs], sampling_params, use_tqdm)

    def _run(self, prompts: list[tuple[Optional[str], list[int]]], sampling_params: Any,
             use_tqdm: bool) -> list[RequestOutput]:
        """Runs (text, token ids) prompts; outputs in order."""
        params = _per_prompt(sampling_params, len(prompts))
        requests = [sp._to_core(ids) for sp, (_, ids) in zip(params, prompts)]
        bar = _progress_bar(len(requests)) if use_tqdm and requests else None
        try:
            results = self._core.generate(requests, _updater(bar) if bar else None)
        finally:
            if bar is not None:
                bar.close()
        outs = []
        for (text, tokens), sp, res in zip(prompts, params, results):
            if res.error:
                raise _core.FolioError(res.error)
            outs.append(from_core(str(next(self._ids)), text, tokens, res,
                                  sp.logprobs is not None))
        return outs


def _per_prompt(sampling_params: Any, n: int) -> list[SamplingParams]:
    if sampling_params is None:
        return [SamplingParams()] * n
    if isinstance(sampling_params, SamplingParams):
        return [sampling_params] * n
    params = list(sampling_params)
    if len(params) != n:
        raise ValueError(f"got {len(params)} sampling_params for {n} prompts")
    for p in params:
        if not isinstance(p, SamplingParams):
            raise TypeError(f"sampling_params must be SamplingParams, not {type(p).__name__}")
    return params


def _progress_bar(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="Processed prompts", unit="req", dynamic_ncols=True)


def _updater(bar: Any) -> Any:
    def update(done: int, total: int) -> None:
        if done > bar.n:
            bar.update(done - bar.n)
    return update
