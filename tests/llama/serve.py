"""Run llama.cpp's own HTTP server (the ``xllamacpp`` wheel) in this process until killed.

``python -m tests.llama.serve MODEL.gguf PORT N_CTX`` starts the server on 127.0.0.1:PORT with
greedy sampling (top_k 1), prints ``READY <address>`` on stdout once it listens, and then waits
for stdin to close (the parent ending) or a signal. :mod:`tests.llama.server` drives it.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import xllamacpp

    model, port, n_ctx = argv[0], int(argv[1]), int(argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = n_ctx
    params.n_batch = min(512, n_ctx)
    params.n_ubatch = min(512, n_ctx)
    params.n_parallel = 1
    params.use_jinja = True
    params.warmup = False
    params.ctx_shift = False
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.sampling.top_k = 1
    params.sampling.temp = 0.0
    server = xllamacpp.Server(params)
    print("READY", server.listening_address, flush=True)
    sys.stdin.read()
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
