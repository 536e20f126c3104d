"""The corpus catalogue: manifests against their schema, corpora/README.md against the manifests,
corpus names, and the corpus readers the manifests name."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from corpus_support import needs_corpus

from hgner.cli import main
from hgner.core import registry, schemes
from hgner.core.errors import ConllFormatError, HgnerError, ManifestError
from hgner.data import catalog
from hgner.data.corpus import load_corpus, read_conll
from hgner.training import TrainOptions
from hgner.training.crf import train

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"


def test_the_schema_is_a_valid_json_schema_and_every_manifest_follows_it():
    schema = json.loads((catalog.manifests_dir() / catalog.SCHEMA_FILE).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    files = catalog.manifest_files()
    assert {p.name for p in files} == {"conll2003.json", "conll2002.json", "ieer.json", "wikigold.json"}
    for path in files:
        jsonschema.validate(json.loads(path.read_text()), schema, cls=jsonschema.Draft202012Validator)
        assert catalog.load_manifest(path).path == path


def test_every_manifest_names_a_registered_reader():
    readers = registry.names(registry.corpus_readers)
    assert {"conll", "nltk-conll", "nltk-ieer"} <= set(readers)
    for manifest in catalog.catalogue().values():
        assert manifest.reader in readers, manifest.name


def test_the_catalogue_pins_the_public_copies():
    conll2003 = catalog.catalogue()["conll2003"]
    assert {s.file: (s.size, s.sha256[:12]) for s in conll2003.splits.values()} == {
        "eng.train": (3281528, "eac0822f5013"), "eng.testa": (827012, "aedc4ccbd1ae"), "eng.testb": (748096, "0632f32c090e")}
    assert conll2003.urls == ("https://raw.githubusercontent.com/synalp/NER/master/corpus/CoNLL-2003/{file}",)
    wikigold = catalog.catalogue()["wikigold"].splits["all"]
    assert (wikigold.file, wikigold.size, wikigold.sha256) == (
        "wikigold.conll.txt", 318530, "c797a64d0cf73ed058363f77671486bcfd413e70fda1726ad4a6ba624455225f")
    assert catalog.catalogue()["nltk:conll2002"].nltk_package == "conll2002"


def _readme_rows() -> dict[str, list[str]]:
    text = (catalog.manifests_dir() / "README.md").read_text(encoding="utf-8")
    rows = [[cell.strip() for cell in line.strip().strip("|").split(" | ")]
            for line in text.splitlines() if line.startswith("| ")]
    header, body = rows[0], [r for r in rows[1:] if not set("".join(r)) <= set("- ")]
    assert header == ["corpus", "names", "languages", "scheme", "entity types", "license", "source"]
    return {row[0]: row for row in body}


def test_the_readme_table_lists_every_manifest_as_it_is():
    rows = _readme_rows()
    manifests = catalog.catalogue().values()
    assert sorted(rows) == sorted(m.title for m in manifests)
    for manifest in manifests:
        if manifest.nltk_package:
            source = f"NLTK package {manifest.nltk_package}"
        else:
            source = "GitHub " + "/".join(manifest.urls[0].split("/")[3:5])
        assert rows[manifest.title] == [
            manifest.title, ", ".join(f"`{n}`" for n in manifest.split_names()), ", ".join(manifest.languages),
            manifest.scheme, ", ".join(manifest.entity_types), manifest.license, source,
        ]


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "corpus", "split"),
    [
        ("conll2003:train", "conll2003", "train"),
        ("conll2003:testb", "conll2003", "testb"),
        ("wikigold", "wikigold", "all"),
        ("nltk:ieer", "nltk:ieer", "all"),
        ("nltk:conll2002/esp.testa", "nltk:conll2002", "esp.testa"),
        ("nltk:conll2002/ned.testb", "nltk:conll2002", "ned.testb"),
        ("conll2003", "conll2003", None),
    ],
)
def test_names_resolve_through_the_catalogue(name, corpus, split):
    manifest, found = catalog.resolve(name)
    assert manifest.name == corpus
    assert (found.name if found else None) == split
    if found is not None:
        assert manifest.split_name(found.name) == name


@pytest.mark.parametrize("name", [pytest.param(name, marks=needs_corpus(name)) for name in (
    "nltk:conll2002/esp.testa", "nltk:conll2002/ned.testa", "conll2003:testa", "wikigold")])
def test_documents_marked_says_whether_a_split_has_docstart_lines(name, capsys):
    manifest, split = catalog.resolve(name)
    assert split.documents_marked == (len(load_corpus(name).documents) > 1)
    assert main(["corpora", "info", manifest.name]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("documents marked: "))
    assert line == ("documents marked: yes, but not in esp.train, esp.testa, esp.testb (read in groups of "
                    "sentences: --documents)" if manifest.name == "nltk:conll2002" else "documents marked: yes")


def test_every_split_name_resolves_to_itself():
    for name in catalog.all_split_names():
        manifest, split = catalog.resolve(name)
        assert manifest.split_name(split.name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("conll2003:dev", "corpus 'conll2003:dev': conll2003 has no split 'dev'; expected one of conll2003:train, "
                          "conll2003:testa, conll2003:testb"),
        ("nltk:conll2002/esp.dev", "expected one of nltk:conll2002/esp.train"),
        ("wikigold:test", "wikigold has no split 'test'; expected one of wikigold"),
    ],
)
def test_unknown_splits_list_the_known_ones(name, message):
    with pytest.raises(HgnerError, match=re.escape(message)):
        catalog.resolve(name)


def test_names_outside_the_catalogue_are_files():
    assert catalog.resolve("tests/fixtures/iob1_docs.conll") is None
    assert catalog.resolve("nltk:brown") is None
    path = str(FIXTURES / "iob1_docs.conll")
    assert load_corpus(path) == read_conll(path)
    with pytest.raises(HgnerError) as error:
        load_corpus("nltk:brown")
    assert str(error.value).startswith("corpus 'nltk:brown': no such file, and not a catalogue name (expected a "
                                       "CoNLL file or one of: ")
    assert "conll2003:testb" in str(error.value) and "wikigold" in str(error.value)
    with pytest.raises(HgnerError, match="which split"):
        load_corpus("conll2003")


# --- a catalogue made here: one manifest is a new corpus -----------------------------------------


def write_catalogue(folder: Path, manifests: list[dict]) -> Path:
    """A catalogue folder with the real schema and ``manifests``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(catalog.manifests_dir() / catalog.SCHEMA_FILE, folder / catalog.SCHEMA_FILE)
    for manifest in manifests:
        (folder / f"{manifest['name'].replace(':', '-')}.json").write_text(json.dumps(manifest))
    return folder


def tiny_manifest(name: str, files: dict[str, Path], urls: list[str], **extra) -> dict:
    """A manifest for CoNLL fixture files (split name -> file), pinned by their real sha256 and size."""
    import hashlib

    return {
        "name": name, "title": f"{name} fixture", "description": "test fixture", "reader": "conll",
        "languages": ["en"], "scheme": "IOB1", "entity_types": ["PER", "LOC", "ORG", "MISC"], "label_map": {},
        "documents_marked": True, "license": "test", "citation": "none", "separator": ":",
        "splits": {split: {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                           "size": path.stat().st_size} for split, path in files.items()},
        "sources": {"urls": urls}, **extra,
    }


@pytest.fixture
def own_catalogue(tmp_path, monkeypatch):
    """Point the catalogue at a folder made by the test; returns a function writing its manifests."""
    folder = tmp_path / "catalogue"

    def use(*manifests: dict) -> Path:
        write_catalogue(folder, list(manifests))
        monkeypatch.setattr(catalog, "manifests_dir", lambda: folder)
        return folder

    return use


def test_a_new_corpus_is_one_manifest(own_catalogue, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "news").mkdir(parents=True)
    shutil.copy(FIXTURES / "iob1_docs.conll", mirror / "news" / "iob1_docs.conll")
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("HGNER_MIRROR", str(mirror))
    monkeypatch.setenv("HGNER_OFFLINE", "1")  # a mirror folder is copied from even offline
    own_catalogue(tiny_manifest("news", {"test": FIXTURES / "iob1_docs.conll"}, ["https://example.invalid/{file}"]))
    corpus = load_corpus("news:test")
    assert corpus.n_tokens == 21 and corpus.name == "news:test"
    assert corpus.file == str(tmp_path / "home" / "news" / "iob1_docs.conll")
    assert catalog.all_split_names() == ["news:test"]
    training = train(corpus, tmp_path / "model", TrainOptions(max_iterations=5)).metadata["training"]
    assert training["corpus"] == "news:test"  # the catalogue name, not this machine's data home
    assert training["sha256"] == hashlib.sha256((FIXTURES / "iob1_docs.conll").read_bytes()).hexdigest()


@pytest.mark.parametrize("option", ["--json", "--predictions"])
def test_outputs_never_overwrite_a_catalogue_corpus_file(own_catalogue, tmp_path, monkeypatch, tiny_model, option,
                                                          capsys):
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("HGNER_OFFLINE", "1")
    copy = tmp_path / "home" / "news" / "iob1_docs.conll"
    copy.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "iob1_docs.conll", copy)
    own_catalogue(tiny_manifest("news", {"test": FIXTURES / "iob1_docs.conll"}, ["https://example.invalid/{file}"]))
    before = copy.read_bytes()
    code = main(["evaluate", "--model", str(tiny_model.directory), "--corpus", "news:test", option, str(copy)])
    assert code == 2 and "is also an input" in capsys.readouterr().err
    assert copy.read_bytes() == before


def test_a_label_map_renames_and_drops_types(own_catalogue, tmp_path, monkeypatch):
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    (tmp_path / "home" / "mapped").mkdir(parents=True)
    shutil.copy(FIXTURES / "iob1_docs.conll", tmp_path / "home" / "mapped" / "iob1_docs.conll")
    own_catalogue(tiny_manifest("mapped", {"all": FIXTURES / "iob1_docs.conll"}, ["https://example.invalid/{file}"],
                                label_map={"PER": "PERSON", "MISC": "O"}, default_split="all"))
    original, mapped = read_conll(FIXTURES / "iob1_docs.conll"), load_corpus("mapped")

    expected = [[(a, b, {"PER": "PERSON"}.get(t, t)) for a, b, t in schemes.chunks(s.tags) if t != "MISC"]
                for s in original.sentences]
    assert [schemes.chunks(s.tags) for s in mapped.sentences] == expected
    assert mapped.sentences[2].tags[5:7] == ["I-PERSON", "B-PERSON"]  # two adjacent names stay two


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"splits": {"test": {"file": "a.conll", "size": 3}}}, "splits.test: missing required field 'sha256'"),
        ({"splits": {"test": {"file": "a.conll", "size": 3, "sha256": "abc"}}},
         "splits.test.sha256: expected 64 lowercase hex digits, got 'abc'"),
        ({"scheme": "IOB3"}, "scheme: 'IOB3' is not one of"),
        ({"sources": {"urls": ["ftp://x/{file}"]}}, 'sources: expected {"urls": [http(s) URL templates with {file}]} '
                                                    'or {"nltk": PACKAGE}, got an object'),
        ({"default_split": "dev"}, "default_split: expected one of its splits (test), got 'dev'"),
        ({"homepage": "x"}, "top level: Additional properties are not allowed ('homepage' was unexpected)"),
    ],
)
def test_bad_manifests_are_one_line_errors_naming_file_and_field(tmp_path, change, message):
    manifest = {**tiny_manifest("bad", {"test": FIXTURES / "iob1_docs.conll"}, ["https://x/{file}"]), **change}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(manifest))
    with pytest.raises(ManifestError) as error:
        catalog.load_manifest(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("content", "message"), [(None, "missing"), ("{nope", "not valid JSON ("),
                                                  ('{"size": NaN}', "not valid JSON (NaN is not a JSON number")])
def test_unreadable_manifests_are_read_as_model_files_are(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ManifestError) as error:
        catalog.load_manifest(path)
    assert str(error.value).startswith(f"{path}: {message}") and "\n" not in str(error.value)


def test_a_corpus_described_twice_is_an_error(tmp_path):
    manifest = tiny_manifest("twice", {"test": FIXTURES / "iob1_docs.conll"}, ["https://x/{file}"])
    folder = write_catalogue(tmp_path / "c", [manifest])
    (folder / "copy.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match="corpus 'twice' is also described by"):
        catalog._load_catalogue(folder)


def test_the_conll_reader_reports_format_errors():
    with pytest.raises(ConllFormatError):
        registry.lookup(registry.corpus_readers, "conll")(catalog.CorpusSource("x", str(FIXTURES / "bad_tag.conll"), {}), None)
