"""Text into sentences of tokens: the CoNLL-style tokenizer over spaCy's rules
(:mod:`~hgner.text.tokenizer`), where sentences end (:mod:`~hgner.text.sentences`) and the starts a
corpus teaches (:mod:`~hgner.text.sentence_starts`), spaCy's languages, and a tagged corpus rebuilt
as the raw text a person would write, scored by character span (:mod:`~hgner.text.rawtext`)."""
