"""A loopback model provider that speaks OpenAI and Anthropic streaming, with fault injection.

``continuum-sim`` (``python -m app.simulator``) runs it standalone; tests, benchmarks and the
app's offline mode import it::

    async with Simulator() as sim:
        sim.enqueue(Fault.drop_after(3))                    # the next request is cut
        model = OpenAICompatibleModel(sim.openai_base_url, "sim-echo")
        model = AnthropicModel(sim.base_url, "sim-claude")
        ...
        assert len(sim.model_requests()) == 1

A request can also choose its own fault with the ``X-Sim-Fault`` header (see
:mod:`app.simulator.script` for the spec language, including the named quirks of real servers:
``ollama_index0``, ``no_done``, ``llamacpp_error_field``, ``json_body``, …).
"""

from __future__ import annotations

from .script import (
    BAD_ARGUMENTS,
    Fault,
    FaultKind,
    Quirk,
    Reply,
    SimToolCall,
    SpecError,
    fault_header_value,
    load_scenario,
    parse_spec,
)
from .server import FAULT_HEADER, RecordedRequest, Simulator, SimulatorThread

__all__ = [
    "BAD_ARGUMENTS",
    "FAULT_HEADER",
    "Fault",
    "FaultKind",
    "Quirk",
    "RecordedRequest",
    "Reply",
    "SimToolCall",
    "Simulator",
    "SimulatorThread",
    "SpecError",
    "fault_header_value",
    "load_scenario",
    "parse_spec",
]
