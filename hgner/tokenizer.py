"""Raw text to sentences of tokens with character offsets: spaCy's rule-based English
tokenizer and sentencizer (``spacy.blank("en")``), which need no model download."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

NAME = "spacy.blank('en')+sentencizer"


@dataclass(frozen=True)
class TokenizedSentence:
    """Token strings and their ``(start, end)`` character offsets into the text."""

    tokens: list[str]
    offsets: list[tuple[int, int]]


class TextTokenizer:
    """Splits text into sentences of non-whitespace tokens, keeping character offsets."""

    name = NAME

    @cached_property
    def nlp(self):
        import spacy

        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        return nlp

    def __call__(self, text: str) -> list[TokenizedSentence]:
        return self.from_doc(self.nlp(text))

    @staticmethod
    def from_doc(doc) -> list[TokenizedSentence]:
        """Sentences of a spaCy ``Doc`` that has sentence boundaries, whitespace tokens left out."""
        sentences = []
        for span in doc.sents:
            words = [t for t in span if not t.is_space]
            if words:
                sentences.append(
                    TokenizedSentence([t.text for t in words], [(t.idx, t.idx + len(t.text)) for t in words])
                )
        return sentences
