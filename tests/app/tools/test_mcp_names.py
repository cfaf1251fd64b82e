"""Names of MCP tools (:mod:`app.tools.mcp_names`): table tests of the pure functions; the
same through the services with real servers is in ``tests/app/services/test_mcp_servers.py``."""

from __future__ import annotations

import re

import pytest

from app.tools.mcp_names import mcp_tool_name, prefix_clash, server_prefix, server_prefixes

OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("files", "files"),
        ("my files", "my_files"),
        ("my.files", "my_files"),
        ("Données", "Donnees"),
        ("  spaced  ", "spaced"),
        ("a" * 40, "a" * 24),
    ],
)
def test_latin_names(name: str, prefix: str) -> None:
    assert server_prefix(name) == prefix


@pytest.mark.parametrize("name", ["файлы", "文件", "ファイル", "ملفات", "...", "🙂"])
def test_other_scripts_get_a_digest_not_underscores(name: str) -> None:
    prefix = server_prefix(name)
    assert OK.match(prefix) and prefix.strip("_") and not prefix.startswith("_")
    assert re.fullmatch(r"mcp_[0-9a-f]{8}", prefix)
    assert server_prefix(name) == prefix  # stable


def test_mixed_script_keeps_the_latin_part() -> None:
    assert re.fullmatch(r"my_[0-9a-f]{8}", server_prefix("my файлы"))
    assert server_prefix("my файлы") != server_prefix("my папки")


def test_prefixes_are_unique_in_the_order_given() -> None:
    long_a = "company-internal-knowledge-base-staging"
    long_b = "company-internal-knowledge-base-production"
    names = ["my files", "my.files", "my_files", long_a, long_b, "файлы", "папки"]
    prefixes = server_prefixes(names)
    assert prefixes["my files"] == "my_files"
    assert prefixes["my.files"] == "my_files_2"
    assert prefixes["my_files"] == "my_files_3"
    assert prefixes[long_a] == long_a[:24] and prefixes[long_b] == long_a[:22] + "_2"
    assert len(set(prefixes.values())) == len(names)
    assert all(OK.match(p) and len(p) <= 24 for p in prefixes.values())


def test_tool_names_fit_and_stay_unique() -> None:
    assert mcp_tool_name("files", "read") == "files__read"
    assert mcp_tool_name("my server", "get.weather") == "my_server__get_weather"
    assert mcp_tool_name("x", "read", prefix="x_2") == "x_2__read"
    long = mcp_tool_name("s", "x" * 100)
    assert len(long) == 64
    again = mcp_tool_name("s", "x" * 100, {long})
    assert again != long and len(again) == 64
    assert re.fullmatch(r"s__tool_[0-9a-f]{8}", mcp_tool_name("s", "имя"))
    assert mcp_tool_name("s", "имя") != mcp_tool_name("s", "файл")


def test_clash_names_the_other_server() -> None:
    assert prefix_clash("my.files", ["my files", "web"]) == "my files"
    assert prefix_clash("my files", ["my files"]) is None  # itself
    assert prefix_clash("docs", ["my files"]) is None
