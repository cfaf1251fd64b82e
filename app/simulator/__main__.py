"""``continuum-sim`` / ``python -m app.simulator``: run the provider simulator standalone."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence

from .script import FaultKind, Quirk, SpecError, load_scenario, parse_spec
from .server import Simulator

#: The quirks of real servers the simulator plays, by the name ``X-Sim-Fault`` takes.
NAMED = (
    *(q.value for q in Quirk),
    *(k.value for k in (FaultKind.LLAMACPP_CTX, FaultKind.LLAMACPP_ERROR_FIELD, FaultKind.QUOTA,
                        FaultKind.REJECT_STREAM_OPTIONS)),
)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="continuum-sim",
        description="A loopback LLM provider speaking OpenAI Chat Completions and Anthropic "
        "Messages streaming, with scripted replies and fault injection.",
        epilog="Per request, send the header 'X-Sim-Fault: drop_after=3' (see "
        "app/simulator/script.py for every fault). Real servers' quirks are named faults too: "
        f"{', '.join(NAMED)}; 'think' adds reasoning (signed thinking on Anthropic) and a "
        'request with "stream": false gets one whole JSON answer.',
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="tokens per second (0: as fast as possible)"
    )
    parser.add_argument(
        "--scenario", help="JSON file with a list of replies served in order to plain requests"
    )
    parser.add_argument(
        "--default", dest="default_spec", help="fault spec used when the queue is empty"
    )
    parser.add_argument("--api-key", help="refuse requests without this key (HTTP 401)")
    return parser


async def _serve(args: argparse.Namespace) -> None:
    default = parse_spec(args.default_spec) if args.default_spec else None
    sim = Simulator(
        args.host, args.port, tokens_per_second=args.rate, default=default, api_key=args.api_key
    )
    if args.scenario:
        sim.enqueue(*load_scenario(args.scenario))
    await sim.start()
    print(
        f"Continuum simulator on {sim.base_url}\n"
        f"  OpenAI-compatible base URL: {sim.openai_base_url}\n"
        f"  Anthropic base URL:         {sim.base_url}\n"
        "Press Ctrl+C to stop.",
        flush=True,
    )
    await sim.serve_forever()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(args))
    except SpecError as err:
        print(f"continuum-sim: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(
            f"continuum-sim: cannot listen on {args.host}:{args.port} ({err.strerror}). "
            "Choose another --port.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
