"""Fetching corpora into the data home from a real HTTP server on 127.0.0.1 (no test reaches the
internet): a good download, a sha256 mismatch, a connection cut mid-file, a 404 then a good
source, the mirror, offline errors, and ``hgner corpora list|fetch|verify|info``."""

from __future__ import annotations

import http.server
import logging
import os
import re
import threading
from pathlib import Path

import pytest
from test_catalog import FIXTURES, tiny_manifest, write_catalogue

from hgner.cli import main
from hgner.core.errors import HgnerError
from hgner.data import catalog, datahome
from hgner.data.corpus import load_corpus

CORPUS_FILE = FIXTURES / "iob1_docs.conll"
GOOD = CORPUS_FILE.read_bytes()


class FixtureHandler(http.server.BaseHTTPRequestHandler):
    """``/good/...`` serves the fixture corpus, ``/bad/...`` as many other bytes, ``/cut/...``
    announces the whole file and closes after half, anything else is a 404. Every request path
    is recorded in ``server.requests``."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.requests.append(self.path)
        kind = self.path.split("/")[1]
        if kind not in ("good", "bad", "cut", "mirror") or not self.path.endswith(CORPUS_FILE.name):
            self.send_error(404, "Not Found")
            return
        body = GOOD if kind in ("good", "mirror") else bytes(len(GOOD)) if kind == "bad" else GOOD[: len(GOOD) // 2]
        self.send_response(200)
        self.send_header("Content-Length", str(len(GOOD)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port), shut down after the test."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FixtureHandler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


def url(server, kind: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/{kind}/{{file}}"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty data home, downloads allowed, no mirror."""
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("HGNER_OFFLINE", "0")
    monkeypatch.delenv("HGNER_MIRROR", raising=False)
    return tmp_path / "home"


@pytest.fixture
def use_sources(tmp_path, monkeypatch):
    """Make the catalogue one corpus ``tiny`` (split ``test``, the default) with these URLs."""

    def use(*urls: str) -> catalog.Manifest:
        folder = write_catalogue(tmp_path / "catalogue", [tiny_manifest(
            "tiny", {"test": CORPUS_FILE}, list(urls), default_split="test")])
        monkeypatch.setattr(catalog, "manifests_dir", lambda: folder)
        return catalog.catalogue()["tiny"]

    return use


def files_in(folder: Path) -> list[str]:
    """Every file under ``folder`` (temporary ones included), relative."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_download_that_succeeds(server, home, use_sources, caplog):
    caplog.set_level(logging.INFO, logger="hgner")
    use_sources(url(server, "good"))
    corpus = load_corpus("tiny")
    assert corpus.n_tokens == 21 and corpus.name == "tiny" and corpus.file == str(home / "tiny" / CORPUS_FILE.name)
    assert files_in(home) == [f"tiny/{CORPUS_FILE.name}"]
    assert (home / "tiny" / CORPUS_FILE.name).read_bytes() == GOOD
    err = caplog.text
    assert f"hgner: corpus tiny is not in the data home {home}; fetching {CORPUS_FILE.name} ({len(GOOD):,} bytes)" in err
    assert "size and sha256 verified" in err
    load_corpus("tiny")  # present now: read, not fetched again
    assert server.requests == [f"/good/{CORPUS_FILE.name}"]


def test_a_sha256_mismatch_is_an_error_and_leaves_nothing(server, home, use_sources):
    use_sources(url(server, "bad"))
    with pytest.raises(HgnerError) as error:
        load_corpus("tiny")
    message = str(error.value)
    assert message.startswith(f"corpus 'tiny': could not fetch {CORPUS_FILE.name}; tried http://127.0.0.1:")
    assert "(sha256 " in message and "expected" in message and "\n" not in message
    assert f"at {home / 'tiny' / CORPUS_FILE.name} by hand" in message
    assert files_in(home) == [] and not (home / "tiny").exists()


def test_a_connection_cut_mid_file_leaves_no_partial_file_and_the_next_source_is_used(server, home, use_sources, caplog):
    caplog.set_level(logging.INFO, logger="hgner")
    use_sources(url(server, "cut"), url(server, "good"))
    assert load_corpus("tiny").n_tokens == 21
    assert server.requests == [f"/cut/{CORPUS_FILE.name}", f"/good/{CORPUS_FILE.name}"]
    assert f"cut after {len(GOOD) // 2:,} of {len(GOOD):,} bytes" in caplog.text
    assert files_in(home) == [f"tiny/{CORPUS_FILE.name}"]


def test_a_cut_with_no_other_source_leaves_nothing(server, home, use_sources):
    use_sources(url(server, "cut"))
    with pytest.raises(HgnerError, match="cut after"):
        load_corpus("tiny")
    assert files_in(home) == []


def test_a_404_then_success_from_the_second_source(server, home, use_sources, caplog):
    caplog.set_level(logging.INFO, logger="hgner")
    use_sources(url(server, "gone"), url(server, "good"))
    assert load_corpus("tiny").n_tokens == 21
    assert server.requests == [f"/gone/{CORPUS_FILE.name}", f"/good/{CORPUS_FILE.name}"]
    assert "HTTP 404 Not Found" in caplog.text


def test_the_mirror_is_tried_first_and_still_verified(server, home, use_sources, monkeypatch):
    use_sources(url(server, "good"))
    monkeypatch.setenv("HGNER_MIRROR", f"http://127.0.0.1:{server.server_address[1]}/mirror/")
    assert load_corpus("tiny").n_tokens == 21
    assert server.requests == [f"/mirror/tiny/{CORPUS_FILE.name}"]
    # a mirror with the wrong bytes is refused, and the public source used
    (home / "tiny" / CORPUS_FILE.name).unlink()
    monkeypatch.setenv("HGNER_MIRROR", f"http://127.0.0.1:{server.server_address[1]}/bad")
    assert load_corpus("tiny").n_tokens == 21
    assert server.requests[1:] == [f"/bad/tiny/{CORPUS_FILE.name}", f"/good/{CORPUS_FILE.name}"]


def test_a_mirror_folder_works_offline(tmp_path, home, use_sources, monkeypatch):
    use_sources("https://example.invalid/{file}")
    (tmp_path / "mirror" / "tiny").mkdir(parents=True)
    (tmp_path / "mirror" / "tiny" / CORPUS_FILE.name).write_bytes(GOOD)
    monkeypatch.setenv("HGNER_MIRROR", str(tmp_path / "mirror"))
    assert load_corpus("tiny", offline=True).n_tokens == 21


def test_offline_is_a_one_line_error_with_exit_2(server, home, use_sources, monkeypatch, capsys):
    use_sources(url(server, "good"))
    assert main(["evaluate", "--offline", "--corpus", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"hgner evaluate: error: corpus 'tiny': {CORPUS_FILE.name} is not in the data home and "
                          "downloads are off (--offline or HGNER_OFFLINE); its sources are "
                          f"http://127.0.0.1:{server.server_address[1]}/good/{CORPUS_FILE.name}; place ")
    assert f"at {home / 'tiny' / CORPUS_FILE.name} by hand, or set HGNER_MIRROR" in err
    monkeypatch.setenv("HGNER_OFFLINE", "1")
    assert main(["evaluate", "--corpus", "tiny"]) == 2
    assert "downloads are off" in capsys.readouterr().err
    assert server.requests == [] and files_in(home) == []


def test_a_changed_file_in_the_data_home_is_refused(server, home, use_sources):
    use_sources(url(server, "good"))
    (home / "tiny").mkdir(parents=True)
    (home / "tiny" / CORPUS_FILE.name).write_bytes(GOOD.replace(b"EU", b"UE"))
    with pytest.raises(HgnerError, match=r"is not the catalogue's file \(sha256 [0-9a-f]{64}, expected"):
        load_corpus("tiny")
    assert server.requests == []


def test_the_data_home_is_hgner_data_else_the_user_data_folder(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.setenv("HGNER_DATA", str(tmp_path))
    assert datahome.data_home() == tmp_path
    monkeypatch.delenv("HGNER_DATA")
    assert datahome.data_home() == platformdirs.user_data_path("hgner", appauthor=False)


# --- hgner corpora ---------------------------------------------------------------------------------


def test_corpora_fetch_verify_list_info(server, home, use_sources, capsys):
    use_sources(url(server, "good"))
    assert main(["corpora", "list", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["name", "documents", "sentences", "tokens", "present", "license", "path"]
    assert out[1].split() == ["tiny", "-", "-", "-", "no", "test", str(home / "tiny" / CORPUS_FILE.name)]
    assert out[2] == f"data home: {home}"
    assert main(["corpora", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["name", "documents", "sentences", "tokens", "present", "license"]
    assert out[1].split() == ["tiny", "-", "-", "-", "no", "test"]

    assert main(["corpora", "fetch", "tiny"]) == 0
    assert capsys.readouterr().out == f"tiny: verified (size and sha256) {home / 'tiny' / CORPUS_FILE.name}\n"
    assert main(["corpora", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:5] == ["tiny", "3", "5", "21", "yes"]

    assert main(["corpora", "verify"]) == 0
    assert capsys.readouterr().out == f"tiny: ok {home / 'tiny' / CORPUS_FILE.name}\n"
    (home / "tiny" / CORPUS_FILE.name).write_bytes(GOOD[:-1])
    assert main(["corpora", "verify", "tiny"]) == 2  # a failed check, not a bug (exit status 1)
    captured = capsys.readouterr()
    assert captured.out.startswith(f"tiny: FAILED: {len(GOOD) - 1:,} bytes, expected {len(GOOD):,}")
    assert captured.err.startswith("hgner corpora verify: error: 1 file(s) do not match the catalogue")
    assert main(["corpora", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:5] == ["tiny", "-", "-", "-", "changed"]
    (home / "tiny" / CORPUS_FILE.name).unlink()
    (home / "tiny" / CORPUS_FILE.name).mkdir()  # a folder where the file belongs: a failed check, not "missing"
    assert main(["corpora", "verify", "tiny"]) == 2
    assert capsys.readouterr().out == f"tiny: FAILED: not a file {home / 'tiny' / CORPUS_FILE.name}\n"
    (home / "tiny" / CORPUS_FILE.name).rmdir()
    (home / "tiny" / CORPUS_FILE.name).write_bytes(GOOD[:-1])

    assert main(["corpora", "info", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "license: test\ncitation: none\n" in out and "label map: none" in out
    assert f"tiny: {CORPUS_FILE.name} {len(GOOD):,} bytes, sha256 " in out


def test_corpora_errors_exit_2(home, use_sources, capsys):
    use_sources("https://example.invalid/{file}")
    assert main(["corpora", "info", "nope"]) == 2
    assert "corpus 'nope': not in the catalogue (corpora: tiny)" in capsys.readouterr().err
    assert main(["corpora", "fetch", "--offline", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "downloads are off" in err


def test_the_real_catalogue_in_corpora_info(capsys):
    assert main(["corpora", "info", "nltk:conll2002"]) == 0
    out = capsys.readouterr().out
    assert "source: NLTK data package 'conll2002' (nltk.download)" in out
    assert "nltk:conll2002/ned.testb: ned.testb" in out
    assert main(["corpora", "info", "conll2003:testb"]) == 0
    assert "https://raw.githubusercontent.com/synalp/NER/master/corpus/CoNLL-2003/{file}" in capsys.readouterr().out


def test_nltk_packages_offline_say_how_to_get_them(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setenv("HGNER_DATA", str(tmp_path))
    monkeypatch.delenv("HGNER_MIRROR", raising=False)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    with pytest.raises(HgnerError) as error:
        load_corpus("nltk:ieer", offline=True)
    message = str(error.value)
    assert message.startswith("corpus 'nltk:ieer': NLTK's ieer package is not installed and downloads are off")
    assert f"python -m nltk.downloader -d {tmp_path / 'nltk_data'} ieer" in message
    assert "point HGNER_MIRROR at a folder holding nltk_data/corpora/ieer.zip" in message
    assert os.listdir(tmp_path) == []


def test_nltk_packages_missing_from_the_mirror_name_the_path_tried(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("HGNER_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    with pytest.raises(HgnerError) as error:
        load_corpus("nltk:ieer", offline=True)
    tried = tmp_path / "mirror" / "nltk_data" / "corpora" / "ieer.zip"
    assert f"put ieer.zip at {tried}, where HGNER_MIRROR's NLTK packages are looked for" in str(error.value)


def test_nltk_packages_are_downloaded_into_the_data_home(tmp_path, monkeypatch, caplog):
    """nltk.download is called for the manifest's package with the data home's nltk_data folder
    (replaced here by a stand-in that writes the package, so nothing reaches the internet)."""
    caplog.set_level(logging.INFO, logger="hgner")
    import zipfile

    import nltk

    calls = []

    def download(package, download_dir, quiet, raise_on_error):
        calls.append((package, download_dir, quiet, raise_on_error))
        (Path(download_dir) / "corpora").mkdir(parents=True)
        with zipfile.ZipFile(Path(download_dir) / "corpora" / f"{package}.zip", "w") as archive:
            archive.writestr(f"{package}/esp.testa", "Sao B-LOC\nPaulo I-LOC\n")
        return True

    monkeypatch.setenv("HGNER_DATA", str(tmp_path))
    monkeypatch.setenv("HGNER_OFFLINE", "0")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    monkeypatch.setattr(nltk, "download", download)
    corpus = load_corpus("nltk:conll2002/esp.testa")
    assert corpus.name == "nltk:conll2002/esp.testa" and corpus.sentences[0].tokens == ["Sao", "Paulo"]
    assert calls == [("conll2002", str(tmp_path / "nltk_data"), True, True)]
    assert f"fetching NLTK's conll2002 package into {tmp_path / 'nltk_data'}" in caplog.text
    load_corpus("nltk:conll2002/esp.testa", offline=True)  # installed now
    assert len(calls) == 1
    with pytest.raises(HgnerError, match="the conll2002 package NLTK found at .* has no esp.testb"):
        load_corpus("nltk:conll2002/esp.testb")


def test_hgner_mirror_serves_nltk_packages_offline_too(tmp_path, monkeypatch, caplog):
    """A mirror laid out as NLTK's data folder (``nltk_data/corpora/PACKAGE.zip``) gives the package,
    copied into the data home, before NLTK's downloader is asked (offline too: a folder mirror)."""
    import zipfile

    import nltk

    caplog.set_level(logging.INFO, logger="hgner")
    mirror = tmp_path / "mirror" / "nltk_data" / "corpora"
    mirror.mkdir(parents=True)
    with zipfile.ZipFile(mirror / "conll2002.zip", "w") as archive:
        archive.writestr("conll2002/esp.testa", "Sao B-LOC\nPaulo I-LOC\n")
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("HGNER_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: pytest.fail("the mirror has the package"))
    corpus = load_corpus("nltk:conll2002/esp.testa", offline=True)
    assert corpus.sentences[0].tokens == ["Sao", "Paulo"]
    assert (tmp_path / "home" / "nltk_data" / "corpora" / "conll2002.zip").is_file()
    assert "copying NLTK's conll2002 package from HGNER_MIRROR" in caplog.text
    (mirror / "conll2002.zip").write_bytes(b"not a zip")  # a damaged copy on the mirror is an error, not a crash
    (tmp_path / "home" / "nltk_data" / "corpora" / "conll2002.zip").unlink()
    with pytest.raises(HgnerError, match="conll2002.zip"):
        load_corpus("nltk:conll2002/esp.testa", offline=True)


def test_a_failed_nltk_download_is_one_line(tmp_path, monkeypatch):
    import nltk

    def download(package, **settings):
        raise ValueError("Error downloading 'ieer' from\n<https://raw.githubusercontent.com/...>: timed out")

    monkeypatch.setenv("HGNER_DATA", str(tmp_path))
    monkeypatch.setenv("HGNER_OFFLINE", "0")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    monkeypatch.setattr(nltk, "download", download)
    with pytest.raises(HgnerError) as error:
        load_corpus("nltk:ieer")
    assert str(error.value).startswith("corpus 'nltk:ieer': nltk.download('ieer') failed (Error downloading 'ieer' from ")
    assert "\n" not in str(error.value)


def _small_conll2002(folder: Path) -> Path:
    """A conll2002 package zip in ``folder``/corpora with one split (NLTK reads it as the real one)."""
    import zipfile

    archive = folder / "corpora" / "conll2002.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("conll2002/ned.testa", "-DOCSTART- -X- O\nAmsterdam Adj B-LOC\nleeft V O\n")
    return archive


def test_outputs_never_replace_an_nltk_package(tmp_path, monkeypatch, tiny_model, capsys):
    import nltk

    archive = _small_conll2002(tmp_path)
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    before = archive.read_bytes()
    assert load_corpus("nltk:conll2002/ned.testa").file == str(archive)
    for option in ("--json", "--predictions"):
        assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", "nltk:conll2002/ned.testa",
                     option, str(archive)]) == 2
        assert f"{option} {archive}: is also an input" in capsys.readouterr().err
    assert archive.read_bytes() == before


@pytest.mark.parametrize("damage", [b"not a zip file", None])  # None: a zip whose member is cut short
def test_a_damaged_nltk_package_is_named(tmp_path, monkeypatch, damage):
    import nltk

    archive = _small_conll2002(tmp_path)
    if damage is None:
        raw = archive.read_bytes()
        archive.write_bytes(raw[:len(raw) // 2])
    else:
        archive.write_bytes(damage)
    monkeypatch.setenv("HGNER_DATA", str(tmp_path / "home"))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    with pytest.raises(HgnerError, match=f"NLTK package 'conll2002': {archive} is damaged .*; delete it"):
        load_corpus("nltk:conll2002/ned.testa")


@pytest.mark.parametrize("kind", ["dangling link", "folder", "fifo"])
def test_a_data_home_path_that_is_not_a_file_is_never_fetched_through(server, home, use_sources, tmp_path, kind):
    use_sources(url(server, "good"))
    target = home / "tiny" / CORPUS_FILE.name
    target.parent.mkdir(parents=True)
    if kind == "dangling link":
        target.symlink_to(tmp_path / "elsewhere")
    elif kind == "folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    expected = {"dangling link": f"a link to {tmp_path / 'elsewhere'}, which does not exist",
                "folder": "a directory", "fifo": "not a regular file"}[kind]
    with pytest.raises(HgnerError, match=f"{target} is {expected}"):
        load_corpus("tiny")
    assert server.requests == [] and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("HGNER_OFFLINE", "banana", "HGNER_OFFLINE: expected 1, true, yes or on (offline) or 0, false, no or off"),
    ("HGNER_MIRROR", "ftp://host/corpora", "HGNER_MIRROR: expected a folder or an http://, https:// or file:// URL"),
])
def test_environment_variables_with_values_that_mean_nothing_are_errors(home, use_sources, monkeypatch, variable,
                                                                        value, expected):
    use_sources("http://127.0.0.1:9/{file}")
    monkeypatch.setenv(variable, value)
    with pytest.raises(HgnerError, match=re.escape(expected)):
        load_corpus("tiny")


def test_a_mirror_folder_may_start_with_a_tilde(tmp_path, home, use_sources, monkeypatch):
    (tmp_path / "user" / "mirror" / "tiny").mkdir(parents=True)
    (tmp_path / "user" / "mirror" / "tiny" / CORPUS_FILE.name).write_bytes(GOOD)
    use_sources("http://127.0.0.1:9/{file}")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HGNER_MIRROR", "~/mirror")
    monkeypatch.setenv("HGNER_OFFLINE", "off")
    assert load_corpus("tiny").n_tokens == 21


def test_evaluate_reads_a_corpus_it_fetched_and_writes_its_outputs(tmp_path, home, use_sources, monkeypatch,
                                                                   tiny_model):
    """The corpus fetched into the data home is read at once; only the command's own outputs wait
    to replace their files together (fileio.outputs_together)."""
    use_sources("https://example.invalid/{file}")
    (tmp_path / "mirror" / "tiny").mkdir(parents=True)
    (tmp_path / "mirror" / "tiny" / CORPUS_FILE.name).write_bytes(GOOD)
    monkeypatch.setenv("HGNER_MIRROR", str(tmp_path / "mirror"))
    assert main(["evaluate", "--model", str(tiny_model.directory), "--corpus", "tiny", "--offline",
                 "--predictions", str(tmp_path / "out.conll"), "--json", str(tmp_path / "out.json")]) == 0
    assert (home / "tiny" / CORPUS_FILE.name).read_bytes() == GOOD
    assert (tmp_path / "out.conll").exists() and (tmp_path / "out.json").exists()
