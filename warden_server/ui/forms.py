"""Reading a browser form body (``application/x-www-form-urlencoded``) without trusting it.

A malformed body (not UTF-8, another content type, a field given twice, too
many fields) is a ``FormInvalid`` (400 page), never a server error: nothing is
decided from a body this module refuses.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from agent_core.errors import WardenError

#: more fields than any page of the UI sends.
MAX_FIELDS = 200


class FormInvalid(WardenError):
    code = "INVALID_REQUEST"


async def read_form(request: Request) -> dict[str, str]:
    """The fields of a form POST, each given once."""
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise FormInvalid("this page takes a form (application/x-www-form-urlencoded)")
    try:
        text = (await request.body()).decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise FormInvalid("the form could not be read (not UTF-8, or too many fields)") from None
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise FormInvalid(f"the form gives the field {name[:40]!r} twice")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise FormInvalid(f"the field {name[:40]!r} is not valid text")
        out[name] = value
    return out


__all__ = ["MAX_FIELDS", "FormInvalid", "read_form"]
