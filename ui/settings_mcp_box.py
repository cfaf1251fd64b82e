"""Settings → MCP servers: the list of servers Continuum starts (a name and a command line
each, and its environment variables: secrets go to the keyring on Save), with Add and Remove;
with the app's services (``status``), each server's state (starting,
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
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.services import (
    MCP_DEFAULT_CALL_TIMEOUT,
    MCP_MAX_CALL_TIMEOUT,
    McpServerConfig,
    McpServerStatus,
    NoKeyringError,
    delete_mcp_secrets,
    is_secret_variable,
    mcp_prefix_clash,
    mcp_server_prefix,
    parse_variables,
    store_mcp_secrets,
)

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
        self.env = QPlainTextEdit()
        self.env.setObjectName("mcpEnv")
        self.env.setAccessibleName("MCP server environment variables")
        self.env.setPlaceholderText("GITHUB_TOKEN=…\nHTTPS_PROXY=http://proxy:3128")
        self.env.setTabChangesFocus(True)
        self.env.setMaximumHeight(self.env.fontMetrics().lineSpacing() * 3 + 2 * SPACE[2])
        env_note = QLabel(
            "One NAME=value a line. Variables named like a secret (…TOKEN, …KEY, …SECRET, "
            "…PASSWORD, AUTH…) are kept in the system keyring, not in the settings file."
        )
        env_note.setObjectName("mcpEnvNote")
        env_note.setWordWrap(True)
        self.timeout = QSpinBox()
        self.timeout.setObjectName("mcpTimeout")
        self.timeout.setAccessibleName("MCP server call timeout in seconds")
        self.timeout.setRange(1, int(MCP_MAX_CALL_TIMEOUT))
        self.timeout.setValue(int(MCP_DEFAULT_CALL_TIMEOUT))
        self.timeout.setSuffix(" s")
        inner = self.timeout.findChild(QLineEdit)  # the spin box's own field: named too
        if inner is not None:
            inner.setAccessibleName("MCP server call timeout in seconds")
        self.timeout.setToolTip(
            "How long a call may go without an answer or a progress report from the server."
        )
        self.trust_read_only = QCheckBox("Run its read-only tools without asking")
        self.trust_read_only.setObjectName("mcpTrustReadOnly")
        self.trust_read_only.setToolTip(
            "Tools the server itself declares read-only run without asking. Off by default: "
            "the server, not Continuum, says they change nothing."
        )
        #: Secret values typed for servers added in this dialog, stored on Save.
        self.secrets: dict[str, dict[str, str]] = {}
        #: Servers removed in this dialog (their keyring entries go on Save).
        self.removed: list[McpServerConfig] = []
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
        form.addRow("Varia&bles", self.env)
        form.addRow("", env_note)
        form.addRow("Time&out", self.timeout)
        form.addRow("", self.trust_read_only)
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
        clash = mcp_prefix_clash(name, [server.name for server in self.servers()])
        if clash is not None:
            self._fail(
                f"The tools of {name!r} would be named like those of {clash!r} (both "
                f"{mcp_server_prefix(name)}__…); choose a name that differs in its letters or "
                "digits."
            )
            return
        variables, problems = parse_variables(self.env.toPlainText())
        if problems:
            self._fail(f"The variables cannot be read ({'; '.join(problems)}); write NAME=value.")
            return
        secrets = {k: v for k, v in variables.items() if is_secret_variable(k)}
        plain = {k: v for k, v in variables.items() if k not in secrets}
        self._add_item(
            McpServerConfig(
                name,
                words[0],
                tuple(words[1:]),
                env=plain or None,
                secret_env=tuple(secrets),
                trust_read_only=self.trust_read_only.isChecked(),
                call_timeout=float(self.timeout.value()),
            )
        )
        if secrets:
            self.secrets[name] = secrets
        self.name.clear()
        self.command.clear()
        self.env.clear()  # do not keep secrets in a widget longer than needed
        self.trust_read_only.setChecked(False)
        self.timeout.setValue(int(MCP_DEFAULT_CALL_TIMEOUT))
        self._ok()

    def _remove(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            item = self.list.takeItem(row)
            server: McpServerConfig = item.data(Qt.ItemDataRole.UserRole)
            self.secrets.pop(server.name, None)
            self.removed.append(server)

    def save_secrets(self) -> None:
        """On Save: removed servers' secrets leave the keyring, the typed ones go in (each
        variable its own entry). :class:`NoKeyringError` when there is no keyring (its message
        names the variable to set instead)."""
        kept = {server.name: server for server in self.servers()}
        for server in self.removed:
            still = kept.get(server.name)
            names = set(server.secret_env) - set(still.secret_env if still else ())
            delete_mcp_secrets(server.name, sorted(names))
        self.removed.clear()
        try:
            for name, values in list(self.secrets.items()):
                if name in kept:
                    store_mcp_secrets(name, values)
                del self.secrets[name]
        except NoKeyringError:
            self.secrets.clear()  # cannot be kept: the message names the variable to set
            raise


def _line(server: McpServerConfig) -> str:
    """A server's line: name, command line and its variables' names (never their values)."""
    line = f"{server.name} — {shlex.join([server.command, *server.args])}"
    names = [*(server.env or {}), *(f"{name} (keyring)" for name in server.secret_env)]
    if names:
        line += f" · {', '.join(names)}"
    if server.call_timeout != MCP_DEFAULT_CALL_TIMEOUT:
        line += f" · timeout {server.call_timeout:g} s"
    return line + (" · read-only tools unasked" if server.trust_read_only else "")
