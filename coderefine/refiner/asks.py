"""Code on request: a model shown a file in part may ask to see definitions by name.

The text form works with every provider, tools or not (a small local model included): an answer made
only of lines ``SHOW: name`` (or ``SHOW: path:name``; a method as ``Class.method``) is answered, in the
same conversation, with those definitions verbatim, and the model is asked again. At most
``MAX_ASKS`` asks per call and ``MAX_NAMES`` names per ask, within the budget the caller gives; the
run counts them (``RefineResult.asks``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from coderefine.edits.symbols import symbols
from coderefine.refiner.context import FileView, Span

MAX_ASKS = 2
MAX_NAMES = 3
_ASK = re.compile(r"^\s*SHOW:\s*`?(?:(?P<path>[\w./-]+\.py):)?(?P<name>[A-Za-z_][\w.]*)`?\s*$")

# What a request that shows a file in part says about asking (in the partial files' note); the critic
# answers with the critique tool, so it asks through the tool's ``show`` field (or the same in its JSON).
CRITIC_HOW_TO_ASK = (
    "If you cannot judge the change without a definition that is not shown, give its name in `show` (a "
    f"method as `Class.method`, at most {MAX_NAMES}) with no issues: it is shown to you and you are asked "
    "again."
)
LAST_ASK = " You may not ask again in this request: answer now with what you have."
HOW_TO_ASK = (
    "To see a definition that is not shown, answer with only lines `SHOW: name` (a method as "
    f"`Class.method`, at most {MAX_NAMES}) and it is shown to you before you answer."
)


@dataclass(frozen=True)
class Ask:
    path: str | None
    name: str


def named(names: list[str] | tuple[str, ...]) -> list[Ask]:
    """``names`` (from the critique tool's ``show``) as asks, those that are no name left out."""
    return asks_in("\n".join(f"SHOW: {name}" for name in names)) if names else []


def asks_in(reply: str) -> list[Ask]:
    """The definitions ``reply`` asks to see: only when every line of it that is not blank is an ask
    (an answer with edits or a critique in it is an answer, not a question)."""
    lines = [line for line in reply.splitlines() if line.strip()]
    found = [_ASK.match(line) for line in lines]
    if not lines or not all(found):
        return []
    asks = [Ask(m.group("path"), m.group("name")) for m in found if m is not None]
    return list(dict.fromkeys(asks))[:MAX_NAMES]


def answer(
    asks: list[Ask],
    views: Mapping[str, FileView],
    texts: Mapping[str, str],
    budget: int,
    render: Callable[[FileView, Span], str],
    last: bool = False,
) -> str:
    """The asked definitions, each as ``render`` shows a span of a file (verbatim, with its line
    numbers), within ``budget`` characters; a name that no file under review defines is said so."""
    parts: list[str] = []
    notes: list[str] = []
    for ask in asks:
        # A path off by its folders is no reason to refuse: every file under review is looked in.
        paths = [ask.path] if ask.path is not None and ask.path in texts else list(texts)
        spans = [
            (path, (s.line, s.end_line))
            for path in paths
            for s in symbols(texts[path])
            if _names(s.name, ask.name, path)
        ]
        if not spans:
            notes.append(f"No definition named `{ask.name}` is in the files under review.")
            continue
        for path, span in spans[:2]:
            view = views.get(path) or FileView(path, texts[path])
            shown = FileView(path, texts[path], (span,)) if view.whole else view
            text = render(shown, span)
            if len(text) > budget:
                # Its first lines, as far as the room goes: a model that asked for a long definition
                # can still edit the lines it is shown, where "too long" alone left it nothing.
                head = _head(shown, span, budget, render)
                if head is None:
                    notes.append(f"`{ask.name}` ({path} lines {span[0]}-{span[1]}) is too long to show here.")
                    continue
                text = render(shown, head)
                notes.append(
                    f"Of `{ask.name}` ({path} lines {span[0]}-{span[1]}), lines {head[0]}-{head[1]} are "
                    f"shown; lines {head[1] + 1}-{span[1]} are too long for this request."
                )
            budget -= len(text)
            parts.append(text)
    body = "The definitions you asked to see, verbatim:\n\n" + "\n\n".join(parts) if parts else ""
    close = "Now answer the request as it asked." + (LAST_ASK if last else "")
    return "\n\n".join(p for p in (body, *notes) if p) + "\n\n" + close


MIN_HEAD = 5  # lines of a long definition worth showing in part; fewer says only its signature


def _head(view: FileView, span: Span, room: int, render: Callable[[FileView, Span], str]) -> Span | None:
    """The longest first part of ``span`` that ``render`` fits in ``room`` characters (None: not even
    ``MIN_HEAD`` lines)."""
    low, high = span[0] + MIN_HEAD - 1, span[1] - 1
    if low > high or len(render(view, (span[0], low))) > room:
        return None
    while low < high:  # the longest end that fits, by bisection: a definition can run to thousands of lines
        middle = (low + high + 1) // 2
        if len(render(view, (span[0], middle))) <= room:
            low = middle
        else:
            high = middle - 1
    return (span[0], low)


def _names(defined: str, asked: str, path: str) -> bool:
    """Whether ``asked`` names the definition ``defined`` of ``path``: by its name, the end of its
    qualified name (``shut`` for ``Box.shut``), or with the module in front (``pkg.mod.Box.shut``, as a
    model that read the imports writes it)."""
    if defined == asked or defined.endswith("." + asked):
        return True
    parts = path.removesuffix(".py").split("/")
    modules = {".".join(parts[i:]) for i in range(len(parts))}
    return any(asked == f"{module}.{defined}" for module in modules)
