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
        text = self._core.render_chat(json.dumps(messages), add_generation_prompt,
                                      chat_template or "")
        if not tokenize:
            return text
        return self._core.encode(text, False, True)
