"""The JSON API's request and response models (pydantic): they are the OpenAPI schema of
``hgner serve``, and the server checks every request body against them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from ..core.errors import HgnerError
from ..decoders.settings import MAX_SWEEPS
from ..graph.kinds import GRAPH_KINDS
from ..tagging.defaults import DEFAULT_SPLIT
from ..tagging.splitting import SPLITS
from ..tagging.tagger import check_text
from .engine import COMPARE_DECODERS

MAX_SEED = 2**63 - 1

SettingValue = Union[StrictBool, StrictInt, StrictFloat, StrictStr, None]  # noqa: UP007  (a runtime alias)
Graph = Literal[GRAPH_KINDS]  # type: ignore[valid-type]
SPLIT_NAMES = tuple(SPLITS)
Split = Literal[SPLIT_NAMES]  # type: ignore[valid-type]


def _unicode_text(text: str) -> str:
    """``text`` when UTF-8 can encode it (JSON escapes can carry lone surrogates), checked as
    ``hgner tag`` checks a text; pydantic then names the field (``documents.2.text``)."""
    try:
        check_text(text, "text")
    except HgnerError as error:
        raise ValueError(str(error).removeprefix("text: ")) from None
    return text


Text = Annotated[StrictStr, AfterValidator(_unicode_text)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Options(_Strict):
    model: Annotated[StrictStr, Field(min_length=1)] | None = Field(
        None, description="a model served (GET /v1/models); default: the one it names as default "
                          "(en-conll03, as hgner tag)")
    graph: Graph = Field("chain", description="chain, or skip: the chain plus skip edges between repeated names")
    sweeps: Annotated[StrictInt, Field(ge=1, le=MAX_SWEEPS)] | None = Field(None, description="sweeps for samplers")
    seed: Annotated[StrictInt, Field(ge=0, le=MAX_SEED)] | None = Field(None, description="seed for stochastic decoders")
    settings: dict[StrictStr, SettingValue] = Field(
        default_factory=dict, description="decoder settings, checked as hgner tag --set NAME=VALUE checks them "
                                          "(values as text or as JSON values)")


class Document(_Strict):
    id: StrictStr | StrictInt
    text: Text


class TagRequest(Options):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"oneOf": [  # exactly one of text and documents
        {"required": ["text"], "properties": {"text": {"type": "string"}}},
        {"required": ["documents"], "properties": {"documents": {"type": "array"}}}]})

    text: Text | None = Field(None, description="one text (or give documents)")
    documents: list[Document] | None = Field(None, min_length=1, description="a batch of documents with ids")
    decoder: Annotated[StrictStr, Field(min_length=1)] | None = Field(
        None, description="default: viterbi on the chain, exact on the skip graph")
    min_confidence: Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)] | None = Field(
        None, description="leave out entities below this confidence (0 to 1)")
    tokens: StrictBool = Field(False, description="also return the tokens with the marginal of each tag")
    split: Split = Field(DEFAULT_SPLIT, description="none: each text is one document; lines: each non-blank line "
                                                     "is a document of its own (hgner tag --split lines)")

    @model_validator(mode="after")
    def _one_input(self) -> TagRequest:
        if (self.text is None) == (self.documents is None):
            raise ValueError("give either text or documents")
        if self.documents is not None:
            ids = [d.id for d in self.documents]
            seen = {repr(i) for i in ids}
            if len(seen) != len(ids):
                raise ValueError("document ids must be unique")
        return self


class CompareRequest(Options):
    text: Text
    decoders: list[StrictStr] = Field(list(COMPARE_DECODERS), min_length=1, max_length=32)


REQUESTS = (TagRequest, CompareRequest)  # the request bodies (hgner.server.app reads them)


class EntityOut(BaseModel):
    start: int
    end: int
    text: str
    label: str
    confidence: float | None


class TokenOut(BaseModel):
    start: int
    end: int
    text: str
    tag: str
    marginals: dict[str, float] | None


class DocumentOut(BaseModel):
    id: StrictStr | StrictInt | None = None
    entities: list[EntityOut]
    tokens: list[TokenOut] | None = None


class TagResponse(BaseModel):
    model: str
    decoder: str
    graph: str
    entities: list[EntityOut] | None = Field(None, description="for a text")
    tokens: list[TokenOut] | None = Field(None, description="for a text, when asked")
    documents: list[DocumentOut] | None = Field(None, description="for documents, in their order")
    warnings: list[str]


class DecoderResult(BaseModel):
    decoder: str
    graph: str = Field(description="the graph decoded: the chain for a chain-only decoder")
    entities: list[EntityOut]
    tags: list[str]
    score: float = Field(description="the labelling's score in the graph asked for")
    optimum_reached: bool | None = Field(description="score equals the certified optimum (None: not certified)")
    agreement_with_viterbi: float = Field(description="share of tokens labelled as Viterbi labels them")
    marginals: list[list[float]] | None = Field(description="(tokens, labels) when the decoder gives marginals")
    seconds: float
    stats: dict[str, float]


class Optimum(BaseModel):
    score: float | None
    certified: bool


class TokenSpan(BaseModel):
    start: int
    end: int
    text: str


class CompareResponse(BaseModel):
    model: str
    graph: str
    labels: list[str]
    tokens: list[TokenSpan]
    optimum: Optimum
    prepare_seconds: float
    results: list[DecoderResult]


class ErrorBody(BaseModel):
    status: int
    code: str
    message: str
    details: list[dict[str, Any]] | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": ErrorResponse, "description": text} for status, text in (
    (401, "missing or wrong API key"), (413, "body, text or batch over the limits"),
    (422, "malformed JSON, unknown field, bad setting, unknown model or decoder"),
    (429, "queue full (see Retry-After)"), (503, "models still loading, or a served model damaged"),
    (504, "over the timeout"))}
