"""Tagged corpora: documents of tagged sentences and their readers (:mod:`~hgner.data.corpus`,
NLTK's IEER in :mod:`~hgner.data.ieer`), the corpus catalogue (:mod:`~hgner.data.catalog`), the data
home and how a missing corpus gets there (:mod:`~hgner.data.home`, :mod:`~hgner.data.datahome`), how
training and evaluation read a corpus (:mod:`~hgner.data.reading`), and case and prose copies of a
training corpus (:mod:`~hgner.data.augment`)."""
