"""The model's tokenizer (folio's exact GGUF tokenizer), with HF-like methods."""

from __future__ import annotations

import json
from typing import Any, Optional, Union


class Tokenizer:
    """llm.get_tokenizer(): encode / decode / apply_chat_template."""

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def eos_token_id(self) -> Optional[int]:
        ids = self._core.eos_token_ids
        return ids[0] if ids else None

    @property
    def bos_token_id(self) -> Optional[int]:
        return self._core.bos_token_id

    @property
    def vocab_size(self) -> int:
        return self._core.vocab_size

    def __len__(self) -> int:
        return self._core.vocab_size

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of `text` (BOS/EOS as the vocabulary asks when add_special_tokens)."""
        if not isinstance(text, str):
            raise TypeError(f"encode() takes a str, not {type(text).__name__}")
        return self._core.encode(text, add_special_tokens)

    def decode(self, token_ids: list[int], skip_special_tokens: bool = True) -> str:
        """The text of `token_ids`."""
        return self._core.decode([int(t) for t in token_ids], skip_special_tokens)

    def apply_chat_template(
        self,
        messages: list[dict],
        tokenize: bool = True,
        add_generation_prompt: bool = False,
        chat_template: Optional[str] = None,
    ) -> Union[str, list[int]]:
        """The model's chat template applied to OpenAI-style messages (as transformers)."""
        text, ids = chat_prompt(self._core, messages, add_generation_prompt, chat_template,
                                tokenize)
        return ids if tokenize else text


def chat_prompt(core: Any, messages: list[dict], add_generation_prompt: bool,
                chat_template: Optional[str], tokenize: bool = True
                ) -> tuple[str, Optional[list[int]]]:
    """A conversation rendered as `/v1/chat/completions` renders it (the model's template or
    `chat_template`), and its token ids (control-token text parsed, no BOS/EOS added: the
    template writes them) when `tokenize`."""
    text = core.render_chat(json.dumps(list(messages)), add_generation_prompt,
                            chat_template or "")
    return text, core.encode(text, False, True) if tokenize else None


def prompt_ids(core: Any, p: Any, i: int) -> tuple[Optional[str], list[int]]:
    """A generate() prompt's text (None for token ids alone) and token ids: a str is
    tokenized with the vocabulary's BOS/EOS rules, no chat template (as `folio generate`);
    {"prompt": str} likewise; {"prompt_token_ids": [int], "prompt"?: str} is used as given."""
    if isinstance(p, str):
        return p, core.encode(p, True, False)
    if isinstance(p, dict):
        unknown = set(p) - {"prompt", "prompt_token_ids"}
        if unknown:
            raise TypeError(f"prompt {i}: unsupported keys {sorted(unknown)}")
        if "prompt_token_ids" in p:
            return p.get("prompt"), [int(t) for t in p["prompt_token_ids"]]
        if isinstance(p.get("prompt"), str):
            return p["prompt"], core.encode(p["prompt"], True, False)
    raise TypeError(f"prompt {i}: expected a str, {{'prompt': str}} or "
                    f"{{'prompt_token_ids': [int]}}, got {type(p).__name__}")
