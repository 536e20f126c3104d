"""The tagging defaults, apart so that ``hgner tag``'s parser reads them without loading a decoder."""

DEFAULT_MODEL = "en-conll03"  # the best measured configuration with confidences (README): update both together
DEFAULT_DECODER = "viterbi"
SKIP_DEFAULT_DECODER = "exact"  # what the skip graph uses without a decoder (certified MAP; README)
CHAIN_GROUP_TOKENS = 20_000  # tokens decoded at once on the chain graph
SKIP_MAX_TOKENS = 200_000  # longest document the skip graph decodes whole
DEFAULT_SPLIT = "none"  # a text is one document (hgner.tagging.splitting.SPLITS)
