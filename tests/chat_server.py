"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for judge tests.

Replies come from a test-supplied function of the request's messages; faults are injected per request by
a marker string found in the last message (so they hit a chosen item even under concurrency). Every
request is recorded (body, Authorization header) and the highest number of requests in flight at once
is tracked, with each request's arrival and reply times (``served``). It runs in a thread of the test process; CLI
tests point the lmms-eval subprocess at it. ``record_bodies=False`` keeps no bodies (a bench sending 1,000 audio
data URIs of ~0.6 MB each would otherwise hold them all).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

REPLY_SHAPES = ("truncated", "parts", "refusal", "tool_call", "error_in_200", "reasoning_field", "error_in_400")
FAULTS = ("timeout", "500", "503", "429", "401", "malformed", "no_choices", "reply", "drip", "drip_body", *REPLY_SHAPES)
REPORTED_MODEL = "deepseek-chat-test-20261129"


class ChatServer:
    """Chat-completions server; ``reply(messages) -> str`` gives the content of each normal reply.

    ``add_fault(markers, kind, times, text, headers)``: the next ``times`` requests whose last message contains every
    string of ``markers`` (one string or a tuple) get fault ``kind`` (one of :data:`FAULTS`; ``timeout`` =
    no answer for ``timeout_s`` seconds, then the normal reply; ``reply`` = a normal reply whose content is
    ``text`` instead, e.g. an apology or an out-of-range score; ``drip`` = the normal reply, every byte of it
    (status line and headers too) sent ``drip_s`` seconds apart; ``drip_body`` = status line and headers at once,
    then the body a byte every ``drip_s`` seconds). ``headers`` are added to that response (e.g.
    ``{"Retry-After": "3"}`` on a 429). Request paths with their query strings are kept in ``paths``.

    Reply shapes as named endpoints send them (:data:`REPLY_SHAPES`, as a fault kind, or for every reply with
    ``shape``): ``truncated`` = a reasoning judge behind a reasoning parser (vLLM/SGLang, DeepSeek-R1) that ran out of
    tokens: ``content: ""``, ``finish_reason: "length"``, the draft (holding the normal reply) in ``reasoning_content``;
    ``reasoning_field`` = the same judge that finished: the draft in ``reasoning_content``, the normal reply in
    ``content``; ``parts`` = Mistral's reasoning models: ``content`` a list of a ``thinking`` part (holding a decoy
    score) and a ``text`` part with the normal reply; ``refusal`` = OpenAI's ``refusal`` field, ``content: null``;
    ``tool_call`` = ``tool_calls`` and ``finish_reason: "tool_calls"``, no content; ``error_in_200`` = HTTP 200 whose
    body is ``{"error": {"code": 429, "message": "... overloaded ..."}}`` (OpenRouter-style); ``error_in_400`` = an
    overloaded upstream reported with HTTP 400 (``code: "model_overloaded"``), as some gateways do. ``refuse``: request
    fields this endpoint refuses with HTTP 400 in OpenAI's words (``max_tokens`` -> "Unsupported parameter: ... Use
    'max_completion_tokens' instead."; ``temperature`` -> "Unsupported value: ..."), as OpenAI's o-series and gpt-5 do.
    ``model``: the model id the replies report (:attr:`model`, default :data:`REPORTED_MODEL`; may be changed while the
    server runs, as an endpoint that puts another model behind the same name does).
    """

    def __init__(
        self, reply: Callable[[list[dict]], str], timeout_s: float = 3.0, delay_s: float = 0.0, record_bodies: bool = True, drip_s: float = 1.0,
        shape: str | None = None, refuse: tuple[str, ...] = (), model: str = REPORTED_MODEL,
    ) -> None:
        self.reply, self.timeout_s, self.delay_s, self.record_bodies, self.drip_s = reply, timeout_s, delay_s, record_bodies, drip_s
        assert shape is None or shape in REPLY_SHAPES, shape
        self.shape, self.refuse = shape, refuse
        #: The model id every reply reports (``model`` field); set it between runs to put another judge behind the same URL.
        self.model = model
        self.requests: list[dict] = []
        self.paths: list[str] = []
        #: ``(arrival, reply sent)`` per request, ``time.time()`` seconds (comparable across processes).
        self.served: list[tuple[float, float]] = []
        self.authorizations: list[str] = []
        self.faults: list[list] = []  # [markers, kind, remaining, text, headers]
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def add_fault(self, markers: str | tuple[str, ...], kind: str, times: int = 1, text: str | None = None, headers: dict | None = None) -> None:
        assert kind in FAULTS and (text is not None) == (kind == "reply"), (kind, text)
        self.faults.append([(markers,) if isinstance(markers, str) else markers, kind, times, text, headers or {}])

    def __enter__(self) -> "ChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _take_fault(self, content: str) -> tuple[str | None, str | None, dict]:
        with self._lock:
            for fault in self.faults:
                if fault[2] > 0 and all(marker in content for marker in fault[0]):
                    fault[2] -= 1
                    return fault[1], fault[3], fault[4]
        return None, None, {}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: bytes, headers: dict | None = None, drip: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if drip is None:
                    self.end_headers()
                    self.wfile.write(body)
                    return
                head = b"".join(self._headers_buffer) + b"\r\n"  # what end_headers would send
                self._headers_buffer = []
                if drip == "drip_body":
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                for byte in head + body:
                    time.sleep(server.drip_s)
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            def do_POST(self) -> None:
                arrival = time.time()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.paths.append(self.path)
                    if server.record_bodies:
                        server.requests.append(body)
                        server.authorizations.append(self.headers.get("Authorization", ""))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout fault)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server.served.append((arrival, time.time()))

            def _answer(self, body: dict) -> None:
                if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                    return self._send(404, b'{"error": {"message": "not found"}}')
                for name in server.refuse:
                    if name in body:
                        message = (f"Unsupported parameter: '{name}' is not supported with this model. Use 'max_completion_tokens' instead." if name == "max_tokens"
                                   else f"Unsupported value: '{name}' does not support {body[name]!r} with this model. Only the default (1) value is supported.")  # fmt: skip
                        error = {"error": {"message": message, "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}}
                        return self._send(400, json.dumps(error).encode())
                fault, text, headers = server._take_fault(body["messages"][-1]["content"])
                if server.delay_s:
                    time.sleep(server.delay_s)
                if fault == "timeout":
                    time.sleep(server.timeout_s)
                elif fault in ("500", "503", "429"):
                    return self._send(int(fault), json.dumps({"error": {"message": f"injected {fault}"}}).encode(), headers)
                elif fault == "401":
                    key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    return self._send(401, json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode())
                elif fault == "malformed":
                    return self._send(200, b'{"id": "x", "choices": [ this is not json')
                elif fault == "no_choices":
                    return self._send(200, json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": server.model, "choices": []}).encode())
                content = text if fault == "reply" else server.reply(body["messages"])
                reply = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": server.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                shaped = fault if fault in REPLY_SHAPES else server.shape
                if shaped is not None:
                    reply = shape_reply(reply, shaped)
                    if shaped == "error_in_400":
                        return self._send(400, json.dumps(reply).encode(), headers)
                try:
                    encoded = json.dumps(reply, ensure_ascii=False).encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate in the content: sent as a JSON \\ud800 escape
                    encoded = json.dumps(reply).encode("ascii")
                self._send(200, encoded, headers, fault if fault in ("drip", "drip_body") else None)

        return Handler


def shape_reply(reply: dict, shape: str) -> dict:
    """``reply`` (a normal chat-completions reply) in the named endpoint ``shape`` (see :class:`ChatServer`)."""
    choice, usage = reply["choices"][0], {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    content = choice["message"]["content"]
    draft = f"Let me think. A first reading gives 1. Then again: {content}"
    if shape == "error_in_400":  # sent with HTTP 400 (_answer): a gateway that reports an overloaded upstream as a client error
        return {"error": {"code": "model_overloaded", "message": "The upstream model is overloaded. Please try again later.", "type": "invalid_request_error"}}
    if shape == "error_in_200":
        return {"error": {"code": 429, "message": "Provider returned error: the upstream model is overloaded, try again"}, "user_id": "u1"}
    if shape == "truncated":
        message, finish = {"role": "assistant", "content": "", "reasoning_content": draft}, "length"
        usage = {"prompt_tokens": 1, "completion_tokens": 10, "total_tokens": 11, "completion_tokens_details": {"reasoning_tokens": 10}}
    elif shape == "reasoning_field":
        message, finish = {"role": "assistant", "content": content, "reasoning_content": draft}, "stop"
    elif shape == "parts":
        parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "Score: 1 is my first guess; [1/5]"}]}, {"type": "text", "text": content}]
        message, finish = {"role": "assistant", "content": parts}, "stop"
    elif shape == "refusal":
        message, finish = {"role": "assistant", "content": None, "refusal": "I'm sorry, I cannot help with that request."}, "stop"
    else:  # tool_call
        call = {"id": "call_1", "type": "function", "function": {"name": "submit_score", "arguments": '{"score": 3}'}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    return {**reply, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


def scripted_replies(path) -> Callable[[list[dict]], str]:
    """A ``reply`` function from a JSON file ``{"replies": [{"all": [str, ...], "reply": str}, ...]}``: the
    first entry whose strings all occur in the last message; an unscripted request is an error reply."""
    entries = json.loads(Path(path).read_text(encoding="utf-8"))["replies"]

    def reply(messages: list[dict]) -> str:
        text = messages[-1]["content"]
        for entry in entries:
            if all(marker in text for marker in entry["all"]):
                return entry["reply"]
        raise AssertionError(f"unscripted judge request: {text[:200]!r}")

    return reply
