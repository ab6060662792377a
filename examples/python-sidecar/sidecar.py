#!/usr/bin/env python3
"""A sidewire sidecar in Python, standard library only: Extension Protocol v1 on stdin/stdout.

It intercepts input.receive: text that starts with "py: " loses the prefix and gains
" [rewritten by python]"; anything else continues unchanged. It exits 0 when stdin ends.
"""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(method, params):
    if method == "extension/initialize":
        if params.get("protocolId") != "reasonix.extension.v1" or params.get("protocolVersion") != "1":
            return None, {"code": -32000, "message": "unsupported protocol version",
                          "data": {"reason": "unsupported_version", "retryable": False}}
        return {"protocolVersion": "1", "name": "python-sidecar", "version": "0.1.0",
                "stateSchemaVersion": 0, "subscriptions": ["input.receive"]}, None
    if method == "extension/shutdown":
        return {"accepted": True}, None
    if method == "extension/intercept":
        text = (params.get("payload") or {}).get("text", "")
        if params.get("event") == "input.receive" and isinstance(text, str) and text.startswith("py: "):
            return {"decision": "replace", "replacement": {"text": text[4:] + " [rewritten by python]"}}, None
        return {"decision": "continue"}, None
    return None, {"code": -32601, "message": "unknown method " + str(method),
                  "data": {"reason": "unknown_method", "retryable": False}}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and "method" in message:  # a request: answer it; notifications need nothing
        result, error = answer(message["method"], message.get("params") or {})
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        reply.update({"error": error} if error else {"result": result})
        send(reply)
