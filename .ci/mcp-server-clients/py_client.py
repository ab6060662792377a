#!/usr/bin/env python3
"""One era of the Python SDK client (PyPI `mcp` 2.3.0) against an MCP server: the checks of a plan
(plan-*.json here) that .ci/mcp-server-clients.sh tabulates.

Usage: py_client.py --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])

A URL means Streamable HTTP, `-- COMMAND` a stdio server the client spawns. `legacy` is
`Client(mode="legacy")` (the `initialize` handshake at 2025-11-25), `modern` is
`Client(mode="2026-07-28")` (no handshake and no probe: every request carries the 2026-07-28
`_meta` envelope). Over one connection it runs each server's checks in the plan, each under its
own time bound (tool names are the server's `prefix` + the plan's):

  tools        tools/list (every page) names each of `names`
  text         tools/call answers exactly `expect`
  progress     tools/call with a progress callback: at least one notifications/progress arrives,
               and the result is not an error
  sampling     tools/call with a sampling callback: the server asks once, its last message's text
               is `question` (legacy: a sampling/createMessage request; modern: an
               input_required result that the client fulfils and retries), and the canned answer
               comes back in the result
  elicitation  tools/call with an elicitation callback that accepts with `content`: the server
               asks once with `message`, and the result's text holds `expect`
  cancel       tools/call of a slow tool with a progress callback; at the first progress the
               client cancels the call (its task's cancel scope: the SDK sends
               notifications/cancelled, or over HTTP at 2026-07-28 aborts the POST); the call must
               end cancelled, not answered; then the server's `text` call must answer again

Each check prints one line, `check SERVER:NAME pass|fail DETAIL`. Exit status 0 when all pass.
"""

import json
import sys

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

MODES = {"legacy": "legacy", "modern": "2026-07-28"}
KINDS = ("tools", "text", "progress", "sampling", "elicitation", "cancel")
ANSWER = "sampled by the python client"
CHECK_SECONDS = 15


def texts(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def describe(err: BaseException) -> str:
    """The error, or the errors inside an exception group (what anyio's task groups raise)."""
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in err.exceptions)
    return f"{type(err).__name__}: {err}"


def parse(argv: list[str]) -> tuple[str, dict, object]:
    usage = "usage: py_client.py --era legacy|modern --plan PLAN (URL | -- COMMAND [ARG...])"
    if len(argv) < 5 or argv[0] != "--era" or argv[1] not in MODES or argv[2] != "--plan":
        sys.exit(usage)
    era, rest = argv[1], argv[4:]
    with open(argv[3]) as file:
        plan = json.load(file)
    if rest[0] == "--" and len(rest) > 1:
        return era, plan, StdioServerParameters(command=rest[1], args=rest[2:])
    if len(rest) == 1 and rest[0].startswith(("http://", "https://")):
        return era, plan, rest[0]
    sys.exit(usage)


async def main() -> int:
    era, plan, server = parse(sys.argv[1:])
    failures = 0
    questions: list[str] = []
    elicitations: list[str] = []
    # What the elicitation callback accepts with: the running check's `content`.
    accept_with: dict = {}

    def report(name: str, ok: bool, detail: str) -> None:
        nonlocal failures
        failures += not ok
        print(f"check {name} {'pass' if ok else 'fail'} {detail}", flush=True)

    async def on_sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        content = params.messages[-1].content
        questions.append(getattr(content, "text", ""))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=ANSWER), model="canned"
        )

    async def on_elicitation(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicitations.append(params.message)
        return types.ElicitResult(action="accept", content=accept_with)

    async def check(name: str, body) -> None:
        try:
            with anyio.fail_after(CHECK_SECONDS):
                ok, detail = await body()
        except Exception as err:  # noqa: BLE001: every failure is reported, none stops the others
            ok, detail = False, describe(err)
        report(name, ok, " ".join(str(detail).split())[:300])

    def checks_of(client: Client, prefix: str, spec: dict) -> dict:
        """The check bodies of one server of the plan, by kind."""

        async def call(kind: str, **kwargs) -> types.CallToolResult:
            return await client.call_tool(prefix + spec[kind]["tool"], spec[kind]["arguments"], **kwargs)

        async def tools():
            names, cursor = [], None
            while True:
                page = await client.list_tools(cursor=cursor)
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            missing = [n for n in spec["tools"]["names"] if prefix + n not in names]
            return not missing, f"{len(names)} tools" + (f", missing {missing}" if missing else "")

        async def text():
            result = await call("text")
            got = texts(result)
            return got == spec["text"]["expect"] and not result.is_error, repr(got)

        async def progress():
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            result = await call("progress", progress_callback=on_progress)
            return bool(seen) and not result.is_error, f"{len(seen)} progress notifications"

        async def sampling():
            questions.clear()
            result = await call("sampling")
            got = texts(result)
            ok = questions == [spec["sampling"]["question"]] and ANSWER in got and not result.is_error
            return ok, f"asked {questions!r}, result {got!r}"

        async def elicitation():
            elicitations.clear()
            accept_with.clear()
            accept_with.update(spec["elicitation"]["content"])
            result = await call("elicitation")
            got = texts(result)
            ok = (
                elicitations == [spec["elicitation"]["message"]]
                and spec["elicitation"]["expect"] in got
                and not result.is_error
            )
            return ok, f"asked {elicitations!r}, result {got!r}"

        async def cancel():
            started = anyio.Event()
            answered: list[types.CallToolResult] = []
            scope = anyio.CancelScope()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                started.set()

            async def run() -> None:
                with scope:
                    answered.append(await call("cancel", progress_callback=on_progress))

            async with anyio.create_task_group() as group:
                group.start_soon(run)
                with anyio.move_on_after(CHECK_SECONDS / 3):
                    await started.wait()
                scope.cancel()
            if not started.is_set():
                return False, "no progress to cancel at"
            if answered or not scope.cancelled_caught:
                return False, f"the call was answered instead: {answered!r}"
            ok, detail = await text()
            return ok, f"cancelled after its first progress; then {spec['text']['tool']}: {detail}"

        return {
            "tools": tools,
            "text": text,
            "progress": progress,
            "sampling": sampling,
            "elicitation": elicitation,
            "cancel": cancel,
        }

    planned = [(s["name"], kind) for s in plan["servers"] for kind in KINDS if kind in s["checks"]]
    connected = False
    try:
        async with Client(
            server,
            mode=MODES[era],
            read_timeout_seconds=CHECK_SECONDS,
            sampling_callback=on_sampling,
            elicitation_callback=on_elicitation,
        ) as client:
            connected = True
            print(f"connected: protocolVersion={client.protocol_version}", flush=True)
            for spec in plan["servers"]:
                bodies = checks_of(client, spec["prefix"], spec["checks"])
                for kind in KINDS:
                    if kind in spec["checks"]:
                        await check(f"{spec['name']}:{kind}", bodies[kind])
    except Exception as err:  # noqa: BLE001
        if not connected:
            for server_name, kind in planned:
                report(f"{server_name}:{kind}", False, f"connect: {describe(err)}")
        else:
            # The checks ran; a failure to close cleanly is reported but is not one of them.
            print(f"close: {describe(err)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
