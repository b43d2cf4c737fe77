"""Potts models and DCA from Python: alignments, weights, the fit, scores, precision."""

import gzip
import itertools
import pathlib
import re

import numpy as np
import pytest

import boltzkit


def _fasta(tmp_path, text, name="a.fasta"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read_alignment_codes_names_columns(tmp_path):
    p = _fasta(tmp_path, ">s1\nAC-D\n>P1/10-15\nA.cD\n", "x.a2m")
    ali = boltzkit.read_alignment(p)
    assert ali.codes.dtype == np.uint8
    assert ali.codes.shape == (2, 2)  # columns 1 and 2 hold inserts ('.', 'c')
    assert ali.names == ["s1", "P1/10-15"]
    assert ali.columns == [0, 3]
    focused = boltzkit.read_alignment(p, focus="P1")
    assert focused.columns == [0, 3]
    assert focused.positions == [10, 13]
    assert focused.focus == 1


@pytest.mark.parametrize(
    "text, message",
    [
        (">a\nACDE\n>b\nACD\n", "expected 4 letters in every sequence"),
        (">a\nACDE\n>b\nACZE\n", 'found "Z" in sequence b'),
        ("", "expected at least one sequence"),
        (">a\nACDE\n>a\nACDE\n", "a second sequence named a"),
    ],
)
def test_bad_alignments_raise_one_line(tmp_path, text, message):
    p = _fasta(tmp_path, text)
    with pytest.raises(ValueError, match=message) as e:
        boltzkit.read_alignment(p)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="a sequence named zz"):
        boltzkit.read_alignment(_fasta(tmp_path, ">a\nAC\n", "f.fa"), focus="zz")


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("n.csv", b"0,1,0\n1,1,0\n", "expected a FASTA header line"),
        ("b.fa", b">a\nAC\x00\x07\n", "found binary data"),
        ("c.fa.gz", b"\x1f\x8b\x08\x00garbage", "expected a complete gzip stream"),
        ("one.fa", b">a\nACDE\n", "expected at least 2 sequences to fit a model, found 1"),
        ("g.fa", b">a\nA-DE\n>b\nC-DE\n", "column 2 \\(position 2\\) holding only gaps"),
    ],
)
def test_other_bad_alignments_raise_one_line(tmp_path, name, data, message):
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(ValueError, match=message) as e:
        boltzkit.read_alignment(p)
    assert "\n" not in str(e.value) and name in str(e.value)


def test_for_fit_false_reads_one_sequence_and_fit_refuses_it(tmp_path):
    ali = boltzkit.read_alignment(_fasta(tmp_path, ">a\nA-DE\n"), for_fit=False)
    assert ali.codes.shape == (1, 4)
    with pytest.raises(ValueError, match="at least 2 sequences"):
        boltzkit.Potts().fit(ali.codes)


def _synthetic_family(folder):
    """The README's two files for a small family: 300 sequences of 12 columns whose pairs
    (1, 7), (2, 9), (4, 11) covary, gzipped; distances 5 Å for those pairs, 15 Å else."""
    rng = np.random.default_rng(7)
    X = rng.integers(0, 20, size=(300, 12))
    for i, j in [(0, 6), (1, 8), (3, 10)]:
        follow = rng.random(300) < 0.9
        X[follow, j] = (X[follow, i] + 3) % 20
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    text = "".join(f">seq{s}\n{''.join(letters[r])}\n" for s, r in enumerate(X))
    with gzip.open(folder / "PF00014_mgap6.fasta.gz", "wt") as f:
        f.write(text)
    near = {(1, 7), (2, 9), (4, 11)}
    rows = [
        f"{i} {j} 0 {5.0 if (i, j) in near else 15.0}"
        for i, j in itertools.combinations(range(1, 13), 2)
    ]
    (folder / "PF00014_struct.dat").write_text("\n".join(rows) + "\n")


def test_readme_python_quick_start_runs_as_written(tmp_path, capsys, monkeypatch):
    readme = (pathlib.Path(__file__).parents[3] / "README.md").read_text()
    section = readme[readme.index("## Direct coupling analysis") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(block.strip().splitlines()) <= 10
    assert 'D = "../shared/data/dca"' in block
    (tmp_path / "data").mkdir()
    _synthetic_family(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    exec(block.replace('D = "../shared/data/dca"', 'D = "data"'), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "L/5 2 2 1.0", lines
    assert (tmp_path / "pf14.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_generative_check_and_files_the_cli_reads(tmp_path):
    X = _copy_chain(n=400, length=4)
    m = boltzkit.Potts(alphabet=None, lambda_j=0.01).fit(X)
    c = m.generative_check(X, n_samples=400, random_state=1)
    assert c["pairs"] == 6
    assert c["connected_correlations"] > 0.9, c
    assert c["pair_frequencies"] > 0.5, c
    with pytest.raises(ValueError, match="expected a code below 3"):
        m.generative_check(X + 1)


def test_sequence_weights_equal_their_definition():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 21, size=(4, 30))
    X = np.repeat(base, 5, axis=0)
    flip = rng.random(X.shape) < 0.15
    X[flip] = rng.integers(0, 21, size=flip.sum())
    X = X.astype(np.uint8)
    ident = (X[:, None, :] == X[None, :, :]).mean(axis=2)
    want = 1.0 / (ident >= 0.8 - 1e-9).sum(axis=1)
    np.testing.assert_array_equal(boltzkit.sequence_weights(X, identity=0.8), want)


def _copy_chain(n=600, length=5, seed=1):
    """Sites 0 and 1 equal; the others independent, 3 states."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, length)).astype(np.uint8)
    X[:, 1] = X[:, 0]
    return X


def test_fit_finds_the_coupled_pair_and_scores_exactly():
    X = _copy_chain()
    m = boltzkit.Potts(lambda_j=0.01, alphabet=None).fit(X)
    assert m.intercept_.shape == (5, 3)
    assert m.coef_.shape == (5, 5, 3, 3)
    np.testing.assert_allclose(m.coef_, m.coef_.transpose(1, 0, 3, 2))
    s = m.contact_scores(apc=False)
    i, j = np.unravel_index(np.argmax(s), s.shape)
    assert {int(i), int(j)} == {0, 1}
    # tiny model: exact log-probabilities, normalized over all 3^5 states
    states = np.array(list(itertools.product(range(3), repeat=5)), dtype=np.uint8)
    lp = m.score_samples(states)
    assert abs(np.exp(lp).sum() - 1.0) < 1e-9
    pll = m.score_samples(X[:10], method="pseudo")
    assert pll.shape == (10,) and (pll < 0).all()
    # unit weights are the unweighted fit
    w = np.full(len(X), 1.0)
    m2 = boltzkit.Potts(lambda_j=0.01, alphabet=None).fit(X, sample_weight=w)
    np.testing.assert_allclose(m2.coef_, m.coef_, atol=1e-8)
    x = m.sample(20, random_state=3)
    assert x.shape == (20, 5)


def test_save_load_and_precision(tmp_path):
    X = _copy_chain()
    m = boltzkit.Potts(lambda_j=0.01, alphabet=None, max_iter=50).fit(X)
    p = tmp_path / "m.safetensors"
    m.save(p)
    back = boltzkit.load(p)
    assert isinstance(back, boltzkit.Potts)
    np.testing.assert_array_equal(back.coef_, m.coef_)
    d = np.array([[1, 2, 3.0], [1, 5, 20.0], [2, 5, 20.0], [1, 4, 20.0]])
    r = boltzkit.contact_precision(m.contact_scores(), d, min_separation=1)
    assert r["precision"][0]["depth"] == "L/5"
    assert r["precision"][0]["precision"] == 1.0


def test_bad_settings_name_the_field():
    X = _copy_chain(n=50)
    with pytest.raises(ValueError, match="lambda_j"):
        boltzkit.Potts(lambda_j=-1.0, alphabet=None).fit(X)
    with pytest.raises(ValueError, match="mode"):
        boltzkit.Potts(mode="both", alphabet=None).fit(X)
    with pytest.raises(ValueError, match="expected a code below 3"):
        boltzkit.Potts(alphabet="-AB").fit(X + 1)
