"""Settings → MCP servers: the list of servers Continuum starts (a name and a command line
each), with Add and Remove. Problems (a duplicate name, a name whose tools would be named like
another server's, unreadable quotes) are said through
the dialog's own problem line (``fail``)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services import McpServerConfig
from app.services.mcp import prefix_clash, server_prefix

from .theme import SPACE

__all__ = ["McpBox"]


class McpBox(QGroupBox):
    """The MCP servers group of the Settings dialog."""

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        fail: Callable[[str], None],
        ok: Callable[[], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("MCP servers (their tools ask before each run)", parent)
        self._fail, self._ok = fail, ok
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
        for server in servers:
            self._add_item(server)
        self.add_button.clicked.connect(self._add)
        self.remove_button.clicked.connect(self._remove)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
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
        layout.addLayout(buttons)

    def _add_item(self, server: McpServerConfig) -> None:
        line = shlex.join([server.command, *server.args])
        item = QListWidgetItem(f"{server.name} — {line}")
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
