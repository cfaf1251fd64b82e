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


def test_without_a_keyring_a_secret_is_refused_with_the_variable_to_set(qapp: Any) -> None:
    import keyring
    from keyring.backends import fail

    from ui.settings_dialog import SettingsDialog

    keyring.set_keyring(fail.Keyring())  # the autouse fixture puts its own back afterwards
    dialog = SettingsDialog(Settings(provider_kind="simulator"))
    try:
        dialog.mcp_name.setText("gh")
        dialog.mcp_command.setText("srv")
        dialog.mcp_box.env.setPlainText("GITHUB_TOKEN=ghp_x\nBAD LINE\n")
        dialog.mcp_add.click()
        assert "line 2 is not NAME=value" in dialog.error.text()
        assert dialog.result_settings().mcp_servers == ()
        dialog.mcp_box.env.setPlainText("GITHUB_TOKEN=ghp_x\n")
        dialog.mcp_add.click()
        (server,) = dialog.result_settings().mcp_servers
        assert server.secret_env == ("GITHUB_TOKEN",) and not server.env
        dialog.accept()
        assert dialog.result() != dialog.DialogCode.Accepted
        assert "Set the environment variable GITHUB_TOKEN" in dialog.error.text()
        assert "ghp_x" not in dialog.error.text()
        dialog.accept()  # the secret was dropped; the server (reading the variable) is kept
        assert dialog.result() == dialog.DialogCode.Accepted
    finally:
        dialog.deleteLater()


def test_read_only_tools_unasked_is_a_choice_per_server_off_by_default(qapp: Any) -> None:
    from ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(provider_kind="simulator"))
    try:
        box = dialog.mcp_box
        assert not box.trust_read_only.isChecked()
        for name, trust in (("plain", False), ("trusted", True)):
            box.name.setText(name)
            box.command.setText("srv")
            box.trust_read_only.setChecked(trust)
            box.add_button.click()
            assert not box.trust_read_only.isChecked()  # back to off for the next one
        plain, trusted = dialog.result_settings().mcp_servers
        assert not plain.trust_read_only and trusted.trust_read_only
        assert box.list.item(1).text().endswith("· read-only tools unasked")
        assert "unasked" not in box.list.item(0).text()
    finally:
        dialog.deleteLater()


def test_the_timeout_is_a_setting_per_server(qapp: Any) -> None:
    from ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(provider_kind="simulator"))
    try:
        box = dialog.mcp_box
        assert box.timeout.value() == 30
        box.name.setText("long")
        box.command.setText("srv")
        box.timeout.setValue(600)
        box.add_button.click()
        assert box.timeout.value() == 30  # back to the default for the next one
        (server,) = dialog.result_settings().mcp_servers
        assert server.call_timeout == 600.0
        assert box.list.item(0).text().endswith("· timeout 600 s")
    finally:
        dialog.deleteLater()
