"""folio: a native LLM inference engine, with vLLM's offline API.

    from folio import LLM, SamplingParams
    llm = LLM(model="models/SmolLM2-135M-Instruct.Q4_1.gguf", max_num_seqs=64)
    for out in llm.generate(["The capital of France is"], SamplingParams(max_tokens=16)):
        print(out.outputs[0].text)

`LLM` runs batches through folio's continuous-batching engine on the calling
thread (the GIL is released while it steps; Ctrl-C aborts the batch);
`AsyncLLM` runs the engine on its own thread and streams to asyncio. Engine
arguments are `folio serve`'s flags as keywords (docs/CONFIG.md).
"""

from folio._core import FolioError
from folio.async_llm import AsyncLLM
from folio.llm import LLM
from folio.outputs import CompletionOutput, Logprob, RequestOutput
from folio.sampling_params import GuidedDecodingParams, SamplingParams
from folio.tokenizer import Tokenizer

__version__ = "0.1.0"

__all__ = [
    "AsyncLLM",
    "CompletionOutput",
    "FolioError",
    "GuidedDecodingParams",
    "LLM",
    "Logprob",
    "RequestOutput",
    "SamplingParams",
    "Tokenizer",
    "__version__",
]
