"""The licence, the citation file and the package metadata say the same thing."""

import tomllib
from pathlib import Path

import yaml

import tpm_models

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_licence_file_is_the_bsd_3_clause_text_the_metadata_names():
    text = (ROOT / "LICENSE").read_text()
    project = _pyproject()
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert text.startswith("BSD 3-Clause License")
    # the three clauses of the SPDX BSD-3-Clause text, the third being what tells it from BSD-2-Clause
    assert "Redistributions of source code must retain" in text
    assert "Redistributions in binary form must reproduce" in text
    assert "Neither the name of the copyright holder nor the names of its" in text


def test_citation_file_is_valid_and_agrees_with_the_metadata():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    # the keys CFF 1.2.0 requires of a file and of a reference
    for key in ("cff-version", "message", "title", "authors"):
        assert cff[key], key
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software"
    assert cff["license"] == _pyproject()["license"]
    assert str(cff["version"]) == tpm_models.__version__
    assert all(author.get("name") or author.get("family-names") for author in cff["authors"])
    paper = cff["preferred-citation"]
    for key in ("type", "title", "authors"):
        assert paper[key], key
    assert paper["title"] == "A Robust Twin Parametric Margin Support Vector Machine for Multiclass Classification"
    assert [a["family-names"] for a in paper["authors"]] == ["De Leone", "Maggioni", "Spinelli"]
    assert paper["url"] in _pyproject()["urls"].values()


def test_metadata_names_authors_classifiers_and_a_dynamic_version():
    project = _pyproject()
    assert project["authors"] and all(a["name"] for a in project["authors"])
    assert "version" not in project and project["dynamic"] == ["version"]
    assert "Typing :: Typed" in project["classifiers"]  # tpm_models/py.typed ships (tests/test_wheel.py)
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # PEP 639: the expression only
