"""The request parameters as form fields: temperature, top-p, output limit, reasoning effort and
thinking budget, each empty for "the default" (shown as the placeholder).

:func:`parse_parameters` (pure) reads the typed texts into :class:`Parameters` or says, in
words, which field is wrong; :func:`parameter_texts` is the reverse. :class:`ParameterFields`
is the widget the conversation panel and Settings both use; :func:`applies` says which fields a
provider kind uses (reasoning effort is OpenAI's, the thinking budget Anthropic's).
"""

from __future__ import annotations

import math

from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QWidget

from app.services import REASONING_EFFORTS, Parameters

from .theme import SPACE

__all__ = ["ParameterFields", "applies", "parameter_texts", "parse_parameters", "placeholder"]

#: (field, label, how a number is shown in its hint)
FIELDS = (
    ("temperature", "Temperature", "0–2"),
    ("top_p", "Top-p", "0–1"),
    ("max_output_tokens", "Max output tokens", "tokens"),
    ("thinking_budget", "Thinking budget", "tokens, at least 1024"),
)


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_parameters(
    texts: dict[str, str], effort: str | None
) -> tuple[Parameters | None, str | None]:
    """The typed ``texts`` (by field name; empty: the default) and the chosen ``effort`` as
    parameters, or ``None`` and what to fix. Pure."""
    floats: dict[str, float | None] = {}
    ints: dict[str, int | None] = {}
    for key, label, hint in FIELDS:
        text = texts.get(key, "").strip()
        if not text:
            (floats if key in ("temperature", "top_p") else ints)[key] = None
            continue
        number = _number(text)
        if key in ("temperature", "top_p"):
            high = 2.0 if key == "temperature" else 1.0
            if number is None or not 0.0 <= number <= high:
                return (
                    None,
                    f"{label} must be a number from 0 to {high:g}, or empty for the default.",
                )
            floats[key] = number
            continue
        low = 1024 if key == "thinking_budget" else 1
        if number is None or number != int(number) or not low <= number <= 1_000_000:
            return None, f"{label} must be a whole number from {low} to 1000000 ({hint}), or empty."
        ints[key] = int(number)
    chosen = next((e for e in REASONING_EFFORTS if e == effort), None)
    params = Parameters(
        temperature=floats["temperature"],
        top_p=floats["top_p"],
        max_output_tokens=ints["max_output_tokens"],
        reasoning_effort=chosen,
        thinking_budget=ints["thinking_budget"],
    )
    return params, None


def _shown(value: float | int | None) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def parameter_texts(params: Parameters) -> dict[str, str]:
    """What each field shows for ``params`` (empty where unset). Pure."""
    return {key: _shown(getattr(params, key)) for key, _label, _hint in FIELDS}


def placeholder(default: float | int | str | None, hint: str) -> str:
    """A field's placeholder: the default it falls back to, or the provider's own."""
    if default is None:
        return f"Provider default ({hint})"
    return f"Default: {_shown(default) if not isinstance(default, str) else default}"


def applies(kind: str | None) -> set[str]:
    """The fields a provider kind uses (the simulator: the OpenAI-compatible ones)."""
    common = {"temperature", "top_p", "max_output_tokens"}
    if kind == "anthropic":
        return common | {"thinking_budget"}
    return common | {"reasoning_effort"}


class ParameterFields:
    """The parameter fields, added as rows of a form; empty fields show the defaults."""

    def __init__(self, form: QFormLayout, parent: QWidget, prefix: str) -> None:
        self.edits: dict[str, QLineEdit] = {}
        self.rows: dict[str, QWidget] = {}
        for key, label, hint in FIELDS:
            edit = QLineEdit(parent)
            edit.setObjectName(f"{prefix}{key.title().replace('_', '')}")
            edit.setAccessibleName(label)
            edit.setClearButtonEnabled(True)
            widest = placeholder(None, hint)
            edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance(widest) + 2 * SPACE[4])
            self.edits[key] = edit
            self.rows[key] = edit
        self.effort = QComboBox(parent)
        self.effort.setObjectName(f"{prefix}ReasoningEffort")
        self.effort.setAccessibleName("Reasoning effort")
        self.effort.addItem("Default", None)
        for effort in REASONING_EFFORTS:
            self.effort.addItem(effort.capitalize(), effort)
        self.rows["reasoning_effort"] = self.effort
        self._labels: dict[str, str] = {key: label for key, label, _hint in FIELDS}
        self._labels["reasoning_effort"] = "Reasoning effort"
        for key in ("temperature", "top_p", "max_output_tokens", "reasoning_effort"):
            form.addRow(self._labels[key], self.rows[key])
        form.addRow(self._labels["thinking_budget"], self.rows["thinking_budget"])
        self._form = form

    def set_defaults(self, defaults: Parameters) -> None:
        """Show what an empty field falls back to."""
        for key, _label, hint in FIELDS:
            self.edits[key].setPlaceholderText(placeholder(getattr(defaults, key), hint))
        shown = defaults.reasoning_effort
        self.effort.setItemText(0, f"Default ({shown})" if shown else "Default")

    def set_values(self, params: Parameters) -> None:
        for key, text in parameter_texts(params).items():
            self.edits[key].setText(text)
        self.effort.setCurrentIndex(max(0, self.effort.findData(params.reasoning_effort)))

    def clear(self) -> None:
        self.set_values(Parameters())

    def values(self) -> tuple[Parameters | None, str | None]:
        texts = {key: edit.text() for key, edit in self.edits.items()}
        return parse_parameters(texts, self.effort.currentData())

    def show_for(self, kind: str | None) -> None:
        """Only the fields the provider kind uses are shown."""
        used = applies(kind)
        for key, widget in self.rows.items():
            self._form.setRowVisible(widget, key in used)
