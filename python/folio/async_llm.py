"""AsyncLLM: the engine on its own thread, streamed to asyncio (vLLM's AsyncLLM)."""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any, AsyncIterator, Optional, Union

from folio import _core
from folio.engine_args import EngineArgs
from folio.llm import PromptType
from folio.outputs import RequestOutput, from_core
from folio.sampling_params import SamplingParams
from folio.tokenizer import Tokenizer, chat_prompt, prompt_ids


class AsyncLLM:
    """Concurrent streaming generation:

        engine = AsyncLLM(model="model.gguf", max_num_seqs=64)
        async for out in engine.generate("Hello", SamplingParams(max_tokens=32), "r1"):
            print(out.outputs[0].text)   # the whole text so far (cumulative)

    The engine steps on its own thread (continuous batching across every
    request in flight). Each step wakes the event loop once through an
    eventfd, and only the streams that advanced are resumed. Leaving the
    `async for` early (break, cancellation) aborts the request. The engine
    serves one event loop at a time: it moves to a new loop once the previous
    one is closed, or stopped with no stream open (so consecutive
    `asyncio.run(...)` calls share one engine); a second loop while the first
    still runs or streams is an error.
    """

    def __init__(self, model: Union[str, os.PathLike], **engine_args: Any) -> None:
        args = EngineArgs(**engine_args)
        self.model = os.fspath(model)
        self.engine_args = args
        self._core = _core.AsyncEngine(self.model, args.to_core())
        self._ids = itertools.count(1)
        self._by_name: dict[str, int] = {}
        self._events: dict[int, asyncio.Event] = {}
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def get_tokenizer(self) -> Tokenizer:
        self._live()
        return Tokenizer(self._core)

    def _live(self) -> None:
        if self._core is None:
            raise RuntimeError("AsyncLLM has been shut down")

    def _attach(self) -> None:
        self._live()
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        old = self._loop
        if old is not None and not old.is_closed() and (old.is_running() or self._events):
            raise RuntimeError(
                "AsyncLLM is serving another event loop that is still running or streaming; "
                "use one loop at a time")
        self._detach()
        self._loop = loop
        loop.add_reader(self._core.wake_fd, self._on_wake)

    def _detach(self) -> None:
        """Stops watching the engine's wake-ups on the current loop (a closed
        loop has already dropped its readers)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._core.wake_fd)
        self._loop = None

    def _on_wake(self) -> None:
        for rid in self._core.take_ready():
            ev = self._events.get(rid)
            if ev is not None:
                ev.set()

    async def generate(
        self,
        prompt: PromptType,
        sampling_params: Optional[SamplingParams] = None,
        request_id: Optional[str] = None,
    ) -> AsyncIterator[RequestOutput]:
        """Streams one request: a RequestOutput after each engine step that
        advanced it (cumulative text and token ids); the last has finished=True."""
        self._attach()
        text, tokens = prompt_ids(self._core, prompt, 0)
        sp = sampling_params or SamplingParams()
        name = request_id if request_id is not None else f"req-{next(self._ids)}"
        if name in self._by_name:
            raise ValueError(f"request id {name!r} is already running")
        rid = next(self._ids)
        ev = asyncio.Event()
        self._events[rid] = ev
        self._by_name[name] = rid
        finished = False
        try:
            self._core.submit(rid, sp._to_core(tokens))
            while not finished:
                await ev.wait()
                ev.clear()
                res = self._core.drain(rid)
                if res is None:
                    continue
                if res.error and res.finished:
                    raise _core.FolioError(res.error)
                finished = res.finished
                yield from_core(name, text, tokens, res, sp.logprobs is not None)
        finally:
            if self._core is not None:
                self._core.release(rid)  # aborts it when the consumer left early
            del self._events[rid]
            del self._by_name[name]

    async def chat(
        self,
        messages: list[dict],
        sampling_params: Optional[SamplingParams] = None,
        request_id: Optional[str] = None,
        *,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = True,
    ) -> AsyncIterator[RequestOutput]:
        """Streams a chat completion of one conversation (the model's chat template)."""
        self._live()
        text, ids = chat_prompt(self._core, messages, add_generation_prompt, chat_template)
        async for out in self.generate({"prompt": text, "prompt_token_ids": ids},
                                       sampling_params, request_id):
            yield out

    async def abort(self, request_id: str) -> None:
        """Stops a running request; its stream ends with finish_reason "abort"."""
        rid = self._by_name.get(request_id)
        if rid is not None:
            self._core.abort(rid)

    def shutdown(self) -> None:
        """Stops the engine thread (running requests are aborted)."""
        self._detach()
        self._core = None

    def __enter__(self) -> "AsyncLLM":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
