#!/usr/bin/env python3
"""One era of the Python SDK client (PyPI `mcp` 2.3.0) against an MCP server: the checks that
.ci/mcp-server-clients.sh tabulates.

Usage: py_client.py --era legacy|modern (URL | -- COMMAND [ARG...])

A URL means Streamable HTTP, `-- COMMAND` a stdio server the client spawns. `legacy` is
`Client(mode="legacy")` (the `initialize` handshake at 2025-11-25), `modern` is
`Client(mode="2026-07-28")` (no handshake and no probe: every request carries the 2026-07-28
`_meta` envelope). Over one connection it runs, each check under its own time bound:

  tools     tools/list names test_simple_text
  text      tools/call test_simple_text answers the fixture's text
  progress  tools/call test_tool_with_progress with a progress callback: at least one
            notifications/progress arrives, and the result is not an error
  sampling  tools/call test_sampling with a sampling callback: the server's question reaches the
            callback (legacy: a sampling/createMessage request; modern: an input_required
            result that the client fulfils and retries) and the answer comes back in the result

Each check prints one line, `check NAME pass|fail DETAIL`. Exit status 0 when all pass.
"""

import sys

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

MODES = {"legacy": "legacy", "modern": "2026-07-28"}
SIMPLE_TEXT = "This is a simple text response for testing."
ANSWER = "sampled by the python client"
CHECK_SECONDS = 15


def texts(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def describe(err: BaseException) -> str:
    """The error, or the errors inside an exception group (what anyio's task groups raise)."""
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in err.exceptions)
    return f"{type(err).__name__}: {err}"


def parse(argv: list[str]) -> tuple[str, object]:
    usage = "usage: py_client.py --era legacy|modern (URL | -- COMMAND [ARG...])"
    if len(argv) < 3 or argv[0] != "--era" or argv[1] not in MODES:
        sys.exit(usage)
    era, rest = argv[1], argv[2:]
    if rest[0] == "--" and len(rest) > 1:
        return era, StdioServerParameters(command=rest[1], args=rest[2:])
    if len(rest) == 1 and rest[0].startswith(("http://", "https://")):
        return era, rest[0]
    sys.exit(usage)


async def main() -> int:
    era, server = parse(sys.argv[1:])
    failures = 0
    progress: list[float] = []
    questions: list[str] = []

    def report(name: str, ok: bool, detail: str) -> None:
        nonlocal failures
        failures += not ok
        print(f"check {name} {'pass' if ok else 'fail'} {detail}", flush=True)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        content = params.messages[-1].content
        questions.append(getattr(content, "text", ""))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=ANSWER), model="canned"
        )

    async def check(name: str, body) -> None:
        try:
            with anyio.fail_after(CHECK_SECONDS):
                ok, detail = await body()
        except Exception as err:  # noqa: BLE001: every failure is reported, none stops the others
            ok, detail = False, describe(err)
        report(name, ok, " ".join(str(detail).split())[:300])

    connected = False
    try:
        async with Client(
            server, mode=MODES[era], read_timeout_seconds=CHECK_SECONDS, sampling_callback=on_sampling
        ) as client:
            connected = True
            print(f"connected: protocolVersion={client.protocol_version}", flush=True)

            async def tools():
                names = [t.name for t in (await client.list_tools()).tools]
                return "test_simple_text" in names, f"{len(names)} tools"

            async def text():
                got = texts(await client.call_tool("test_simple_text", {}))
                return got == SIMPLE_TEXT, repr(got)

            async def with_progress():
                result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
                return bool(progress) and not result.is_error, f"{len(progress)} progress notifications"

            async def sampling():
                got = texts(await client.call_tool("test_sampling", {"prompt": "What is 2+2?"}))
                ok = questions == ["What is 2+2?"] and ANSWER in got
                return ok, f"asked {questions!r}, result {got!r}"

            await check("tools", tools)
            await check("text", text)
            await check("progress", with_progress)
            await check("sampling", sampling)
    except Exception as err:  # noqa: BLE001
        if not connected:
            for name in ("tools", "text", "progress", "sampling"):
                report(name, False, f"connect: {describe(err)}")
        else:
            # The checks ran; a failure to close cleanly is reported but is not one of them.
            print(f"close: {describe(err)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
