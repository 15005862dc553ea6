"""The errors a request can end in, as the HTTP layer answers them: each carries its HTTP status, a
short machine-readable code and a message for people (and, for "retry later", a Retry-After hint).
The scheduler raises them; `serve/server.py` turns them into JSON error responses."""

from __future__ import annotations


class ServeError(Exception):
    """An error with an HTTP status and a short machine-readable code; the message is for people."""

    status = 500
    code = "internal"

    def __init__(
        self, message: str, *, code: str | None = None, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.retry_after = retry_after


class BadInput(ServeError):
    """This request's input cannot be used (not audio, truncated, too long, bad prompt...)."""

    status, code = 400, "bad_input"


class Rejected(ServeError):
    """Not admitted now (queue or memory full): retry later."""

    status, code = 429, "queue_full"


class NotFound(ServeError):
    """No such request for this token (unknown id, wrong token, cancelled, fetched or expired)."""

    status, code = 404, "not_found"


class Unavailable(ServeError):
    """A feature this server was not started with (e.g. prefill without text tensors or tokenizer)."""

    status, code = 501, "not_available"
