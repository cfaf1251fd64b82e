"""The conversation on screen: a Qt list model over rows, and the view that paints them."""

from .model import ItemKind, ToolState, TranscriptItem, TranscriptModel
from .view import TranscriptView

__all__ = ["ItemKind", "ToolState", "TranscriptItem", "TranscriptModel", "TranscriptView"]
