"""A tiny llama model for llama.cpp's server, written by hand so its answers are fixed.

The model is a 2-layer llama (n_embd 64, 4 heads, F32, a few hundred tokens: the 256 byte
tokens, a handful of words and the chat-template control tokens). Attention and feed-forward
weights are all zero, so the residual stream only carries the current token's embedding and the
next token is a fixed function of the current one: ``token_embd`` gives each token of a chain a
one-hot direction, ``output`` maps that direction to the chain's next token. With greedy
sampling the answer is therefore the same on every run.

The prompt's last token picks the chain: the chat template ends the prompt with a different
control token depending on the last user message:

- a message containing ``LOOP`` → ``<loop>``: "again and again and …" until the token limit;
- a message containing ``TOOL`` → ``<tool>``: a Qwen3-Coder style call of
  ``read_file(path="todo.md")``, which llama.cpp's server streams as ``tool_calls``;
- anything else (also after a tool result) → ``<answer>``: :data:`ANSWER` followed by ``<|im_end|>`` (end of generation).

The three marker tokens' texts are tabs (``<answer>`` = 1, ``<loop>`` = 2, ``<tool>`` = 3): the
server hands the prompt's generation part to its output parser, which trims that whitespace, so
the marker never shows in the answer's text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: What the model says to any unmarked prompt.
ANSWER = "Hello from the tiny llama."
#: The phrase a prompt containing ``LOOP`` repeats (one token per word) until the token limit.
LOOP_MARKER = "LOOP"
LOOP_TEXT = "again and again and again and again and again"  # …and so on, one token per word

N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
CONTEXT_LENGTH = 4096

# The marker tokens that end a prompt (see the module docstring).
ANSWER_START, LOOP_START, TOOL_START = "\t", "\t\t", "\t\t\t"

#: The tool the model calls for a prompt containing ``TOOL`` (Qwen3-Coder's XML call syntax).
TOOL_MARKER = "TOOL"
TOOL_NAME = "read_file"  # the name of the workspace file tool, so the window can run it too
TOOL_ARGUMENTS = {"path": "todo.md"}

# Tools and tool calls are rendered the way Qwen3-Coder's template does, so llama.cpp's
# template analysis finds that format and parses the model's <tool_call> output into tool_calls.
CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n# Tools\n<tools>"
    "{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools><|im_end|>\n{% endif %}"
    "{% for m in messages %}"
    "{% if m.role == 'assistant' and m.tool_calls %}"
    "<|im_start|>assistant\n{{ m.content if m.content is string else '' }}"
    "{% for tc in m.tool_calls %}"
    "{% set f = tc.function if tc.function is defined else tc %}"
    "<tool_call>\n<function={{ f.name }}>\n"
    "{% for k, v in f.arguments | items %}"
    "<parameter={{ k }}>\n{{ v if v is string else v | tojson }}\n</parameter>\n"
    "{% endfor %}"
    "</function>\n</tool_call>"
    "{% endfor %}<|im_end|>\n"
    "{% elif m.role == 'tool' %}"
    "<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% elif m.role == 'assistant' %}"
    "<|im_start|>assistant\n{{ m.content if m.content is string else '' }}"
    "<|im_end|>\n"
    "{% else %}"
    "<|im_start|>{{ m.role }}\n{{ m.content if m.content is string else '' }}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}"
    "{% set last = messages[-1] if messages else none %}"
    "<|im_start|>assistant\n"
    "{% if last and last.role == 'user' and last.content is string %}"
    "{% if '" + LOOP_MARKER + "' in last.content %}" + LOOP_START + ""
    "{% elif '" + TOOL_MARKER + "' in last.content %}" + TOOL_START + ""
    "{% else %}" + ANSWER_START + "{% endif %}"
    "{% else %}" + ANSWER_START + "{% endif %}"
    "{% endif %}"
)

# SentencePiece token types (gguf.TokenType values).
_NORMAL, _CONTROL, _USER, _BYTE = 1, 3, 4, 6

_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "<|im_start|>",
    "<|im_end|>",
    ANSWER_START,
    LOOP_START,
    TOOL_START,
)
# The tool call's pieces, each its own (user-defined) token so each has one successor.
_CALL = (
    "<tool_call>\n",
    f"<function={TOOL_NAME}>\n",
    "<parameter=path>\n",
    f"{TOOL_ARGUMENTS['path']}\n",
    "</parameter>\n",
    "</function>\n",
    "</tool_call>",
)
_WORDS = ("Hello", "▁from", "▁the", "▁tiny", "▁llama", ".", "again", "▁again", "▁and")


def _vocabulary() -> tuple[list[str], list[int]]:
    tokens: list[str] = []
    types: list[int] = []
    for s in _SPECIALS:
        tokens.append(s)
        types.append(_CONTROL)
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(_BYTE)
    for w in _WORDS:
        tokens.append(w)
        types.append(_NORMAL)
    for c in _CALL:
        tokens.append(c)
        types.append(_USER)
    return tokens, types


def _chains(index: dict[str, int]) -> dict[int, int]:
    """The next-token table: token id → the id the model emits after it."""
    answer = [ANSWER_START, "Hello", "▁from", "▁the", "▁tiny", "▁llama", ".", "<|im_end|>"]
    table = {index[a]: index[b] for a, b in zip(answer, answer[1:], strict=False)}
    call = [TOOL_START, *_CALL, "<|im_end|>"]
    table.update({index[a]: index[b] for a, b in zip(call, call[1:], strict=False)})
    table[index[LOOP_START]] = index["again"]
    table[index["again"]] = index["▁and"]
    table[index["▁again"]] = index["▁and"]
    table[index["▁and"]] = index["▁again"]
    return table


def write_model(path: Path) -> Path:
    """Write the model to ``path`` (a ``.gguf`` file, about 0.5 MB) and return ``path``."""
    import gguf

    tokens, types = _vocabulary()
    index = {t: i for i, t in enumerate(tokens)}
    table = _chains(index)
    n_vocab = len(tokens)

    # Each token that starts a transition gets its own one-hot direction; every other token
    # shares the last direction, which leads to <|im_end|> (so a stray token ends the answer).
    sources = sorted(table)
    assert len(sources) < N_EMBD
    direction = {tok: d for d, tok in enumerate(sources)}
    fallback = N_EMBD - 1
    embd = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    for tok in range(n_vocab):
        embd[tok, direction.get(tok, fallback)] = 1.0
    out = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    for tok, nxt in table.items():
        out[nxt, direction[tok]] = 4.0
    out[index["<|im_end|>"], fallback] = 4.0

    head_dim = N_EMBD // N_HEAD
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("continuum-test-tiny-llama")
    w.add_context_length(CONTEXT_LENGTH)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types(types)
    w.add_bos_token_id(index["<s>"])
    w.add_eos_token_id(index["<|im_end|>"])
    w.add_unk_token_id(index["<unk>"])
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    ones = np.ones(N_EMBD, dtype=np.float32)
    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", out)
    zeros = np.zeros
    for layer in range(N_LAYER):
        p = f"blk.{layer}."
        w.add_tensor(p + "attn_norm.weight", ones)
        w.add_tensor(p + "attn_q.weight", zeros((N_EMBD, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "attn_k.weight", zeros((N_EMBD, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "attn_v.weight", zeros((N_EMBD, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "attn_output.weight", zeros((N_EMBD, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "ffn_norm.weight", ones)
        w.add_tensor(p + "ffn_gate.weight", zeros((N_FF, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "ffn_up.weight", zeros((N_FF, N_EMBD), dtype=np.float32))
        w.add_tensor(p + "ffn_down.weight", zeros((N_EMBD, N_FF), dtype=np.float32))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
