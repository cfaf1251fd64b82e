"""Settings → MCP servers, the real dialog (offscreen): names whose tools would be named alike
are refused with a reason."""

from __future__ import annotations

from typing import Any

from app.services import McpServerConfig
from app.settings import Settings


def test_a_name_whose_tools_would_be_named_like_another_servers_is_refused(qapp: Any) -> None:
    from ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(provider_kind="simulator"))
    try:
        dialog.mcp_name.setText("my files")
        dialog.mcp_command.setText("srv-a")
        dialog.mcp_add.click()
        dialog.mcp_name.setText("my.files")
        dialog.mcp_command.setText("srv-b")
        dialog.mcp_add.click()
        assert dialog.result_settings().mcp_servers == (McpServerConfig("my files", "srv-a"),)
        assert not dialog.error.isHidden()
        text = dialog.error.text()
        assert "'my.files'" in text and "'my files'" in text and "my_files__" in text
        assert dialog.mcp_name.text() == "my.files"  # kept, to be changed
        dialog.mcp_name.setText("файлы")
        dialog.mcp_add.click()
        assert [s.name for s in dialog.result_settings().mcp_servers] == ["my files", "файлы"]
        assert dialog.error.isHidden()
    finally:
        dialog.deleteLater()
