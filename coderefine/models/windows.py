"""How much context a model has, as far as its name tells, and what the signals section may take of it.

The signals section is folded to about ``signal-tokens`` tokens (1,500 by default). That default suits a
hosted model with a long context; a small local model served with 8k tokens of context needs the room for
the file and its own reply, so when the user has not chosen a budget it is cut to a sixteenth of the
smallest context among the models that read the signals. A model whose window the name does not tell
keeps the default.
"""

from __future__ import annotations

from collections.abc import Iterable

from coderefine.edits.formats import SMALL_MODEL_BILLIONS, model_size_billions

# The context of the llama.cpp server coderefine starts for a gguf: model: 8,192 tokens hold a prompt of
# ~7k tokens and a reply of 1k, what a small model can use.
LOCAL_CONTEXT = 8192
LOCAL_REPLY = 1024  # the longest reply a gguf: model is asked for, unless max-output-tokens is set
# The smallest share of a context the signals may take, and the least they are ever given: below a few
# hundred tokens not even one failure with its traceback fits.
SHARE = 16
FLOOR = 400
# Context windows by the start of a model's name (after any "provider:" and "org/" prefix). Where a
# family has members of several sizes, the smallest is given: the budget is a ceiling, not a target.
_WINDOWS = (
    ("claude-", 200_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gemini-", 1_000_000),
    ("deepseek-", 64_000),
    ("mistral-large", 128_000),
)


def context_window(model: str) -> int | None:
    """The tokens of context ``model`` has, or None when its name does not tell. A ``gguf:`` file runs in
    the server coderefine starts, with ``LOCAL_CONTEXT`` tokens; a name that gives at most 8B parameters
    (``ollama:qwen2.5-coder:1.5b``) is taken to be served the same way."""
    if model.startswith("gguf:"):
        return LOCAL_CONTEXT
    provider, _, rest = model.partition(":")
    name = (rest if rest and provider.isidentifier() else model).rsplit("/", 1)[-1].lower()
    for prefix, window in _WINDOWS:
        if name.startswith(prefix):
            return window
    size = model_size_billions(name)
    return LOCAL_CONTEXT if size is not None and size <= SMALL_MODEL_BILLIONS else None


def signal_budget(setting: int, chosen: bool, models: Iterable[str]) -> int:
    """The signals section's budget in tokens: ``setting`` when the user chose it (or it is 0, no limit);
    otherwise ``setting`` cut to a sixteenth of the smallest known context among ``models``."""
    if chosen or not setting:
        return setting
    windows = [w for w in (context_window(m) for m in models if m) if w is not None]
    if not windows:
        return setting
    return max(FLOOR, min(setting, min(windows) // SHARE))


# What a request holds besides the files, the signals and the spec: the system prompt's rules, the intent,
# the diff and the instructions (the critic's request on a small change is about this much).
REQUEST_OVERHEAD = 1_500
# Of that, what the intent and the diff may take; a longer diff (a change over many functions) is paid for
# out of the files' views, or the request would pass the window after all.
DIFF_ALLOWANCE = 500


def prompt_limit(models: Iterable[str], max_output: int, chosen: bool) -> int | None:
    """The tokens a request's prompt may take in the smallest known context among ``models``: the window
    less the reply; None when no model's window is known. The reply is ``max_output`` when the user chose
    it (``chosen``), else at most an eighth of the window and at least ``LOCAL_REPLY``, what a gguf:
    model's server is asked for."""
    limits = []
    for model in models:
        window = context_window(model) if model else None
        if window is None:
            continue
        # A reply the user did not size takes at most an eighth of the window (1,024 of a local 8k).
        reply = max_output if chosen else min(max_output, max(LOCAL_REPLY, window // 8))
        limits.append(window - reply)
    return min(limits) if limits else None


def view_budget(models: Iterable[str], max_output: int, chosen: bool, sections: int) -> int | None:
    """The tokens the files' views may take of ``prompt_limit``: less the signals and spec sections
    (``sections``) and the rest of a request; None when no model's window is known. A local model served
    with 8k tokens is sent excerpts of a file that would not fit whole: whole, the request was refused."""
    limit = prompt_limit(models, max_output, chosen)
    return None if limit is None else max(FLOOR, limit - sections - REQUEST_OVERHEAD)
