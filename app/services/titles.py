"""Titles made by the model: after a conversation's first answer, a title of at most six words.

Until then a conversation is named by its first words (:func:`first_words_title`, what the
window names it on the first send). After its first completed answer, :meth:`Titles.after_answer`
asks the same model for a short title and renames the conversation — unless the person named it
themselves (F2): a title other than the first-words one is theirs and is never replaced, and it
is checked again right before renaming.

The title request goes straight to the provider model (``Model.stream``), outside the agent and
the request journal: it is never saved into the history, writes no running marker or stop
record, holds no conversation lock, so Resume never sees it. A failure is logged and ignored
(the first-words title stays). :func:`auto_title_on` says when titles are asked for: the
``auto_title`` setting (default on), off for the offline simulator unless set explicitly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Final, Protocol

from ..errors import ContinuumError
from ..messages import AssistantMessage, Message, UserMessage
from ..model import Model, ModelRequest, StepEnd, TextDelta
from ..settings import Settings
from ..simulator.planning import DEFAULT_MODELS
from ..storage.base import SessionInfo

__all__ = [
    "MAX_TITLE_CHARS",
    "TITLE_WORDS",
    "TitleTarget",
    "Titles",
    "auto_title_on",
    "clean_title",
    "first_words_title",
    "simulated",
    "title_request",
    "wants_title",
]

log = logging.getLogger(__name__)

TITLE_WORDS: Final = 6
MAX_TITLE_CHARS: Final = 60
#: How much of the question and of the answer the title request quotes.
QUOTED_CHARS: Final = 1500
#: How much of the model's reply is read before the request is closed (a title is short).
MAX_REPLY_CHARS: Final = 400
TIMEOUT: Final = 30.0

_SYSTEM: Final = (
    "You name conversations. Reply with a title of at most six words for the conversation "
    "below, in the language of its question: no quotes, no final punctuation, nothing else."
)


def first_words_title(text: str) -> str:
    """What a conversation is named before its model-made title: its first words."""
    return " ".join(text.split())[:MAX_TITLE_CHARS] or "New conversation"


def auto_title_on(settings: Settings, kind: str | None = None, model: str | None = None) -> bool:
    """Whether titles are asked of the model: ``auto_title`` when set, else on except with
    the offline simulator (its echo would name every conversation after the question).
    ``kind``/``model``: the conversation's provider kind and model (default: Settings')."""
    if settings.auto_title is not None:
        return settings.auto_title
    kind = settings.provider_kind if kind is None else kind
    return not simulated(kind, settings.model if model is None else model)


def simulated(kind: str | None, model: str) -> bool:
    """Whether a provider of ``kind`` serving ``model`` is the offline simulator (its own
    kind, or one of its models behind an OpenAI-compatible address)."""
    return kind == "simulator" or model in DEFAULT_MODELS


def title_request(question: str, answer: str) -> ModelRequest:
    """The one-off request for a title (never saved: it is not a conversation message)."""

    def quoted(text: str) -> str:
        text = text.strip()
        return text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + " …"

    prompt = (
        f"Question:\n{quoted(question)}\n\nAnswer:\n{quoted(answer)}\n\n"
        f"A title of at most {TITLE_WORDS} words for this conversation:"
    )
    return ModelRequest([UserMessage(prompt)], system_prompt=_SYSTEM)


_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:\*\*)?title(?:\*\*)?\s*[:：-]\s*", re.IGNORECASE)
_EDGES = "\"'“”‘’«»„`*_#>~ \t"
_END = ".!?:;,。！？…"


def clean_title(reply: str) -> str | None:
    """The title in a model's reply: its first line, without a "Title:" label, Markdown marks,
    quotes and final punctuation, at most :data:`TITLE_WORDS` words and
    :data:`MAX_TITLE_CHARS` characters (``None``: nothing usable)."""
    text = _THINK.sub("", reply)
    line = next((ln for ln in text.splitlines() if ln.strip(_EDGES)), "")
    line = _LABEL.sub("", line)
    line = line.strip(_EDGES).rstrip(_END).strip(_EDGES)
    words = line.split()[:TITLE_WORDS]
    title = " ".join(words)
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] if " " in title else title[:60]
    return title or None


def _text(message: Message) -> str:
    """A message's text: its content, or the text parts of a content made of parts."""
    content: object = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, tuple):
        return " ".join(str(getattr(part, "text", "") or "") for part in content).strip()
    return ""


def wants_title(info: SessionInfo | None, messages: Iterable[Message]) -> tuple[str, str] | None:
    """(question, answer) to title the conversation from, or ``None`` when it needs no title:
    it has one already (any title but its first words'), or no completed answer yet."""
    question = answer = None
    for message in messages:
        if question is None and isinstance(message, UserMessage) and _text(message).strip():
            question = _text(message)
        elif question is not None and isinstance(message, AssistantMessage) and _text(message):
            answer = _text(message)
            break
    if info is None or question is None or answer is None:
        return None
    if info.title is not None and info.title != first_words_title(question):
        return None  # the person's (or an earlier model-made) title
    return question, answer


async def ask_title(model: Model, question: str, answer: str) -> str | None:
    """Ask ``model`` for a title (a non-saved request); ``None``: nothing usable came back."""
    reply: list[str] = []
    stream = model.stream(title_request(question, answer))
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for event in stream:
            if isinstance(event, TextDelta):
                reply.append(event.text)
                if sum(map(len, reply)) >= MAX_REPLY_CHARS:
                    break
            elif isinstance(event, StepEnd):
                break
    return clean_title("".join(reply))


class TitleStore(Protocol):
    async def get_session(self, session_id: str) -> SessionInfo | None: ...

    async def load(self, session_id: str) -> list[Message]: ...

    async def rename_session(self, session_id: str, title: str | None) -> None: ...


#: The model that answers a conversation, its provider's kind and the model's name.
TitleTarget = tuple[Model, str | None, str]


class Titles:
    """Model-made titles for one store (see the module docstring). ``target`` gives the model
    a conversation's requests use (the title is asked of the same one)."""

    def __init__(
        self,
        store: TitleStore,
        target: Callable[[str], Awaitable[TitleTarget]],
        settings: Callable[[], Settings],
    ) -> None:
        self._store = store
        self._target = target
        self._settings = settings
        self._asking: set[str] = set()

    async def after_answer(self, session_id: str) -> bool:
        """Title the conversation if it needs one; returns whether it was renamed. Never
        raises but cancellation: a failure is logged, and the first-words title stays."""
        if session_id in self._asking:
            return False
        self._asking.add(session_id)
        try:
            return await asyncio.wait_for(self._title(session_id), TIMEOUT)
        except asyncio.CancelledError:
            raise
        except (ContinuumError, TimeoutError, OSError) as err:
            log.warning("no title for the conversation: %s: %s", type(err).__name__, err)
        except Exception:
            log.exception("asking the model for a title failed")
        finally:
            self._asking.discard(session_id)
        return False

    async def _title(self, session_id: str) -> bool:
        info = await self._store.get_session(session_id)
        wanted = wants_title(info, await self._store.load(session_id))
        if wanted is None:
            return False
        question, _answer = wanted
        model, kind, name = await self._target(session_id)
        if not auto_title_on(self._settings(), kind, name):
            return False
        title = await ask_title(model, *wanted)
        if title is None:
            log.info("the model's title reply had no usable words")
            return False
        # The person may have renamed it while the model answered: theirs stays.
        info = await self._store.get_session(session_id)
        if info is None or (info.title is not None and info.title != first_words_title(question)):
            return False
        await self._store.rename_session(session_id, title)
        return True
