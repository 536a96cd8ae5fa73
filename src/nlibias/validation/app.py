"""The local annotation web app (FastAPI; ``pip install 'nlibias[validate]'``): one page and a JSON
API for an extension run's hypotheses and an audit run's explained answers (docs/validation.md, "Safety").
"""

import hmac
import socket
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nlibias.errors import import_extra
from nlibias.schema.declared import NonNegativeFloat
from nlibias.schema.settings import Settings
from nlibias.validation.address import (
    MAX_BODY_BYTES,
    SAFE_METHODS,
    BodyLimit,
    Token,
    error_details,
    foreign_origin,
    host_name,
    is_loopback,
)
from nlibias.validation.explanation_queue import AnnotationRound, ExplanationItem
from nlibias.validation.store import (
    ANNOTATOR_PATTERN,
    EXPLANATION_LABELS,
    EXPLANATION_ROUND,
    ROUND_LABELS,
    Annotator,
    CurrentAnswer,
    Suggestion,
)

TOKEN_HEADER = "x-nlibias-token"
TOKEN_COOKIE = "nlibias_token"
_STATIC = {
    "/": ("index.html", "text/html"),
    "/static/app.js": ("app.js", "text/javascript"),
    "/static/app.css": ("app.css", "text/css"),
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class AppSettings(Settings):
    """How the app behaves (``nlibias validate serve`` options)."""

    model_config = ConfigDict(strict=True)
    annotator: Annotator | None = None
    """Fix the annotator (else the page asks for a name)."""
    token: Token | None = None
    """Required on every request when set."""
    blur: bool = True
    """Blur the hypothesis and templates until revealed (offensive content)."""
    break_minutes: NonNegativeFloat = 40.0
    """Remind the annotator to take a break after this many minutes (0: never)."""
    show_hints: bool = True
    """Show model pre-screen suggestions as hints."""
    loopback_only: bool = True
    """Refuse requests whose Host header is not a loopback name (set False when sharing)."""


class AnswerBody(BaseModel):
    """The body of ``POST /api/answer``."""

    model_config = ConfigDict(extra="forbid")
    hypothesis_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    annotator: Annotator
    round: Literal["category", "stereotype", "explanation"]
    label: Literal["valid", "invalid", "incoherent", "pro", "anti", "balanced", "biased"]


def _answer_json(answer: CurrentAnswer | None) -> dict[str, Any]:
    return {"category": answer and answer.category, "stereotype": answer and answer.stereotype}


def _hint_json(hint: Suggestion) -> dict[str, Any]:
    shown = {name: getattr(hint, name) for name in ("judge", "category", "stereotype", "score")}
    return {**shown, "reason": str(hint.details.get("reason", ""))}


def _explanation_json(item: ExplanationItem) -> dict[str, Any]:
    """An explained answer as the page shows it (never the judges' labels)."""
    shown = {name: getattr(item, name) for name in ("subtopic", "domain", "model", "premise", "hypothesis")}
    ids = {"kind": "explanation", "hypothesis_id": item.item_id}
    return {**ids, **shown, "short_answer": item.answer, "explanation": item.explanation}


def _static_text(name: str) -> str:
    return (files("nlibias.validation") / "static" / name).read_text(encoding="utf-8")


def _web_packages() -> tuple[Any, Any]:
    uvicorn = import_extra("uvicorn", "validate", use="the validation app")
    return import_extra("fastapi", "validate", use="the validation app").FastAPI, uvicorn


def create_app(run_dir: str | Path, settings: AppSettings | None = None) -> Any:
    """The FastAPI application that serves the annotation page for ``run_dir``'s queue."""
    FastAPI = _web_packages()[0]
    settings = settings or AppSettings()
    static = {route: (_static_text(name), media) for route, (name, media) in _STATIC.items()}
    app = FastAPI(title="nlibias validation", docs_url=None, redoc_url=None, openapi_url=None)
    _add_guards(app, settings)
    _add_static_routes(app, static)
    _add_api_routes(app, settings, AnnotationRound.open(run_dir))
    return app


def _refusal(request: Any, settings: AppSettings) -> tuple[int, str] | None:
    """The status and detail that refuse ``request`` for its ``Host`` or its ``Origin``."""
    if (
        settings.loopback_only
        and not settings.token
        and not is_loopback(host_name(request.headers.get("host", "")))
    ):
        return 403, "host not allowed"
    foreign = foreign_origin(request.method, request.headers)
    if foreign is not None:
        return 403, f"{foreign}: refused"
    return None


def _token_proof(request: Any, token: str) -> Literal["sent", "query"] | None:
    """How ``request`` carries ``token``: ``"sent"`` (header, bearer or cookie), ``"query"``
    (``?token=``, which only opens pages: the page then sets the cookie) or None."""
    auth = request.headers.get("authorization", "")
    offered = [
        request.headers.get(TOKEN_HEADER, ""),
        auth[7:] if auth.lower().startswith("bearer ") else "",
        request.cookies.get(TOKEN_COOKIE, ""),
    ]
    if any(o and hmac.compare_digest(o, token) for o in offered):
        return "sent"
    from_query = request.query_params.get("token", "") if request.method in SAFE_METHODS else ""
    if from_query and hmac.compare_digest(from_query, token):
        return "query"
    return None


def _add_guards(app: Any, settings: AppSettings) -> None:
    """Host, origin and token checks, security headers, the 422 handler and the body limit."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        refused = _refusal(request, settings)
        if refused is not None:
            status, detail = refused
            return JSONResponse({"detail": detail}, status_code=status)
        set_cookie = False
        if settings.token:
            proof = _token_proof(request, settings.token)
            if proof is None:
                return JSONResponse({"detail": "missing or wrong token"}, status_code=401)
            set_cookie = proof == "query"
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        if set_cookie and settings.token:
            response.set_cookie(TOKEN_COOKIE, settings.token, httponly=True, samesite="strict")
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": error_details(exc.errors())}, status_code=422)

    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)


def _add_static_routes(app: Any, static: dict[str, tuple[str, str]]) -> None:
    """The page's fixed routes (no request path reaches the file system)."""
    from fastapi.responses import Response

    def static_route(route: str) -> None:
        text, media = static[route]

        def serve_static() -> Response:
            return Response(text, media_type=media)

        app.add_api_route(route, serve_static, methods=["GET"], include_in_schema=False)

    for route in static:
        static_route(route)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)


def _annotator_or_fail(name: str | None, settings: AppSettings) -> str:
    """The annotator a request names (else the server's): 400 when not allowed, 403 when not this server's."""
    from fastapi import HTTPException

    name = name or settings.annotator
    if not name or not ANNOTATOR_PATTERN.fullmatch(name):
        raise HTTPException(400, "annotator name missing or not allowed (letters, digits, _.@-)")
    if settings.annotator and name != settings.annotator:
        raise HTTPException(403, f"this server is for annotator {settings.annotator!r}")
    return name


def _items(queue: AnnotationRound) -> list[dict[str, Any]]:
    """The app's one queue as the page shows it: the hypotheses, then the explained answers."""
    shown = [{"kind": "hypothesis", **row.data()} for row in queue.hypotheses or ()]
    shown += [_explanation_json(item) for item in (queue.explained.items if queue.explained else ())]
    return [{**item, "position": at} for at, item in enumerate(shown)]


def _add_api_routes(app: Any, settings: AppSettings, queue: AnnotationRound) -> None:
    """``GET /api/config``, ``GET /api/items`` and ``POST /api/answer``."""
    from fastapi import HTTPException

    store, queue_ids, explained_ids = queue.store, queue.hypothesis_ids, queue.explained_ids

    @app.get("/api/config")
    def config() -> dict[str, Any]:
        return {
            "annotator": settings.annotator,
            "blur": settings.blur,
            "break_minutes": settings.break_minutes,
            "show_hints": settings.show_hints,
            "total": len(queue_ids) + len(explained_ids),
            "labels": {**ROUND_LABELS, EXPLANATION_ROUND: EXPLANATION_LABELS},
        }

    @app.get("/api/items")
    def items(annotator: str | None = None) -> dict[str, Any]:
        who = _annotator_or_fail(annotator, settings)
        answers = queue.answers_of(who)
        labels = queue.explanation_labels(who)
        hints = store.suggestions() if settings.show_hints else {}
        shown = []
        for item in _items(queue):
            hid = item["hypothesis_id"]
            if item["kind"] == "explanation":
                shown.append({**item, "answer": {"label": labels.get(hid)}, "hints": []})
            else:
                hinted = [_hint_json(s) for s in hints.get(hid, [])]
                shown.append({**item, "answer": _answer_json(answers.get(hid)), "hints": hinted})
        return {"annotator": who, "items": shown, "progress": queue.progress(who, answers)}

    @app.post("/api/answer")
    def answer(body: AnswerBody) -> dict[str, Any]:
        who = _annotator_or_fail(body.annotator, settings)
        if body.round == EXPLANATION_ROUND:
            return _answer_explanation(body, who)
        if body.hypothesis_id not in queue_ids:
            raise HTTPException(404, "unknown hypothesis")
        if body.label not in ROUND_LABELS[body.round]:
            raise HTTPException(422, f"{body.label!r} is not a {body.round} label")
        if body.round == "stereotype":
            mine = queue.answers_of(who).get(body.hypothesis_id)
            if mine is None or mine.category != "valid":
                raise HTTPException(409, "mark the hypothesis valid before choosing pro/anti")
        store.record(body.hypothesis_id, who, body.round, body.label)
        answers = queue.answers_of(who)
        answered = _answer_json(answers.get(body.hypothesis_id))
        return {"answer": answered, "progress": queue.progress(who, answers)}

    def _answer_explanation(body: AnswerBody, who: str) -> dict[str, Any]:
        if queue.explained is None or body.hypothesis_id not in explained_ids:
            raise HTTPException(404, "unknown explained answer")
        if body.label not in EXPLANATION_LABELS:
            raise HTTPException(422, f"{body.label!r} is not an explanation label")
        store.record_explanation(body.hypothesis_id, who, body.label, fingerprint=queue.explained.fingerprint)
        answered = {"label": queue.explanation_labels(who).get(body.hypothesis_id)}
        return {"answer": answered, "progress": queue.progress(who, queue.answers_of(who))}


def serve(
    run_dir: str | Path,
    settings: AppSettings,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    sock: socket.socket | None = None,
) -> None:
    """Run the app with uvicorn until interrupted, on ``sock`` when given, else on ``host``:``port``."""
    uvicorn = _web_packages()[1]
    app = create_app(run_dir, settings)
    if sock is None:
        uvicorn.run(app, host=host, port=port, log_level="warning")
        return
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
