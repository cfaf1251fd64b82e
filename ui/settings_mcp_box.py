"""Settings → MCP servers: the list of servers Continuum starts (a name and a command line
each), with Add and Remove; with the app's services (``status``), each server's state (starting,
running with its number of tools, exited, could not start), the selected one's problem and last
error output, and a Restart button. Problems (a duplicate name, a name whose tools would be named
like another server's, unreadable quotes) are said through the dialog's own problem line
(``fail``)."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import McpServerConfig, McpServerStatus
from app.services.mcp import prefix_clash, server_prefix

from .theme import SPACE

__all__ = ["McpBox", "McpStatusSource", "state_words"]

REFRESH_MS = 1000


@runtime_checkable
class McpStatusSource(Protocol):
    """What the box asks of the app about running servers (``AppServices`` has both)."""

    def mcp_statuses(self) -> list[McpServerStatus]: ...

    def restart_mcp_server(self, name: str) -> asyncio.Task[None] | None: ...


def state_words(status: McpServerStatus | None) -> str:
    """A server's state in a few words, for its line in the list."""
    if status is None:
        return "starts when saved"
    if status.state.value == "running":
        return f"running, {status.tools} tool{'s' if status.tools != 1 else ''}"
    return status.state.value


def state_details(status: McpServerStatus | None) -> str:
    """The selected server's state, problem and last error output, as plain text."""
    if status is None:
        return "Not started yet: it starts when the settings are saved."
    lines = [f"State: {state_words(status)}"]
    if status.restarts:
        lines[0] += f" (restarted {status.restarts} time{'s' if status.restarts != 1 else ''})"
    if status.problem:
        lines.append(status.problem)
    if status.last_output:
        lines.append(f"Last error output:\n{status.last_output}")
    return "\n".join(lines)


class McpBox(QGroupBox):
    """The MCP servers group of the Settings dialog."""

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        fail: Callable[[str], None],
        ok: Callable[[], None],
        parent: QWidget | None = None,
        status: McpStatusSource | None = None,
    ) -> None:
        super().__init__("MCP servers (their tools ask before each run)", parent)
        self._fail, self._ok, self._status = fail, ok, status
        self.list = QListWidget()
        self.list.setObjectName("mcpList")
        self.list.setAccessibleName("MCP servers")
        self.list.setMaximumHeight(90)
        self.name = QLineEdit()
        self.name.setObjectName("mcpName")
        self.name.setAccessibleName("MCP server name")
        self.name.setPlaceholderText("For example files")
        self.command = QLineEdit()
        self.command.setObjectName("mcpCommand")
        self.command.setAccessibleName("MCP server command line")
        self.command.setPlaceholderText("For example npx -y some-mcp-server /path")
        for edit in (self.name, self.command):
            width = edit.fontMetrics().horizontalAdvance(edit.placeholderText())
            edit.setMinimumWidth(width + 2 * SPACE[3])
        self.add_button = QPushButton("Add server")
        self.add_button.setObjectName("mcpAdd")
        self.add_button.setAccessibleName("Add MCP server")
        self.remove_button = QPushButton("Remove selected")
        self.remove_button.setObjectName("mcpRemove")
        self.remove_button.setAccessibleName("Remove MCP server")
        self.restart_button = QPushButton("Restart selected")
        self.restart_button.setObjectName("mcpRestart")
        self.restart_button.setAccessibleName("Restart MCP server")
        self.restart_button.setEnabled(False)
        self.state = QLabel()
        self.state.setObjectName("mcpState")
        self.state.setAccessibleName("MCP server state")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.PlainText)  # a server's output, as is
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.state.setVisible(status is not None)
        for server in servers:
            self._add_item(server)
        self.add_button.clicked.connect(self._add)
        self.remove_button.clicked.connect(self._remove)
        self.restart_button.clicked.connect(self._restart)
        self.list.currentRowChanged.connect(lambda _row: self.refresh())
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addWidget(self.state)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setHorizontalSpacing(SPACE[2])
        form.setVerticalSpacing(SPACE[1])
        form.addRow("&Name", self.name)
        form.addRow("Comman&d", self.command)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        if status is not None:
            buttons.addWidget(self.restart_button)
            self._timer = QTimer(self)
            self._timer.setInterval(REFRESH_MS)
            self._timer.timeout.connect(self.refresh)
            self._timer.start()
        layout.addLayout(buttons)
        self.refresh()

    def _statuses(self) -> dict[str, McpServerStatus]:
        if self._status is None:
            return {}
        return {status.name: status for status in self._status.mcp_statuses()}

    def refresh(self) -> None:
        """Show the servers' states now (also every second while the dialog is open)."""
        if self._status is None:
            return
        statuses = self._statuses()
        role = Qt.ItemDataRole.UserRole
        for row in range(self.list.count()):
            item = self.list.item(row)
            server: McpServerConfig = item.data(role)
            item.setText(f"{_line(server)} · {state_words(statuses.get(server.name))}")
        item = self.list.currentItem()
        selected = statuses.get(item.data(role).name) if item is not None else None
        self.state.setText(
            state_details(selected) if item is not None else "Select a server to see its state."
        )
        self.restart_button.setEnabled(selected is not None)

    def _restart(self) -> None:
        item = self.list.currentItem()
        if item is None or self._status is None:
            return
        task = self._status.restart_mcp_server(item.data(Qt.ItemDataRole.UserRole).name)
        if task is not None:
            task.add_done_callback(lambda _task: self.refresh())
        self.refresh()

    def _add_item(self, server: McpServerConfig) -> None:
        item = QListWidgetItem(_line(server))
        item.setData(Qt.ItemDataRole.UserRole, server)
        self.list.addItem(item)

    def servers(self) -> tuple[McpServerConfig, ...]:
        role = Qt.ItemDataRole.UserRole
        return tuple(self.list.item(i).data(role) for i in range(self.list.count()))

    def _add(self) -> None:
        name = self.name.text().strip()
        try:
            words = shlex.split(self.command.text())
        except ValueError as err:
            self._fail(f"The command line cannot be read ({err}); check its quotes.")
            return
        if not name or not words:
            self._fail("Enter a name and the command line that starts the MCP server.")
            return
        if any(server.name == name for server in self.servers()):
            self._fail(f"There is already an MCP server named {name!r}.")
            return
        clash = prefix_clash(name, [server.name for server in self.servers()])
        if clash is not None:
            self._fail(
                f"The tools of {name!r} would be named like those of {clash!r} (both "
                f"{server_prefix(name)}__…); choose a name that differs in its letters or digits."
            )
            return
        self._add_item(McpServerConfig(name, words[0], tuple(words[1:])))
        self.name.clear()
        self.command.clear()
        self._ok()

    def _remove(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)


def _line(server: McpServerConfig) -> str:
    return f"{server.name} — {shlex.join([server.command, *server.args])}"
