"""Every statistic of a study with flagged worlds present (docs/study-format.md: "Worlds that failed
are left out of the statistics and counted"): the moments, interval, quantiles and histogram, the
Spearman correlations, a derivative study's measures and bounds, a Sobol study's indices and
intervals, a sequential study's stopping rule, and the ranks' reduction, each against the same
statistic computed here from the healthy worlds' outcomes alone (lockstep.run_study returns every
world's outcome and status).

The worlds: chain-7 whose link7 mass varies smoothly, and whose first joint starts at -1 rad/s in
about half of the worlds and at more than 1e150 rad/s, which no step survives, in the others (a
normal draw of sd 1e300 clipped below at -1). A flagged world keeps its initial state, so its
outcomes are finite (q.joint7 0.3, u.joint1 its huge speed) or infinite (its energy): any statistic
that took them in would change."""
import json
import math
import subprocess

import numpy as np
import pytest

import lockstep
from conftest import cli_path, scene

MASS = {"parameter": "body.link7.mass", "distribution": "uniform", "low": 0.8, "high": 1.2}
FLAG = {"parameter": "u.joint1", "distribution": "normal", "mean": 0, "sd": 1e300, "min": -1, "max": 1e300}
OUTPUTS = ["q.joint7", "u.joint1", "energy.total"]
# A sequential study of rounds of 16 worlds until q.joint7's mean is known to +-1.8e-4, at most 10 rounds.
SEQUENTIAL = {"output": "q.joint7", "ci_half_width": 1.8e-4, "max_worlds": 160, "every": 16}


def flagging_study(**changes):
    study = {"scene": scene("chain-7.json"), "worlds": 48, "steps": 40, "dt": 0.001, "seed": 5,
             "vary": [MASS, FLAG], "outputs": OUTPUTS}
    study.update(changes)
    return study


def healthy_worlds(r):
    """The worlds of status 0, after checking that the study has both kinds."""
    healthy = r["status"] == 0
    assert 10 <= healthy.sum() < healthy.size and r["flagged_worlds"] == (~healthy).sum()
    return healthy


def student_t975(df):
    """The 0.975 quantile of Student's t with df degrees of freedom, its density integrated here."""
    x = np.linspace(0.0, 15.0, 150001)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_c - (df + 1) / 2 * np.log1p(x * x / df))
    cdf = 0.5 + np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(x))])
    return float(np.interp(0.975, cdf, x))


def average_ranks(x):
    ranks = np.empty(x.size)
    ranks[np.argsort(x, kind="stable")] = np.arange(1, x.size + 1)
    for value in np.unique(x):
        ranks[x == value] = ranks[x == value].mean()
    return ranks


def spearman(x, y):
    return np.corrcoef(average_ranks(x), average_ranks(y))[0, 1]


def assert_moments_of(stats, x, what):
    """count, mean, stddev, min, max, standard error and the 95% interval (Student's t) of the values x."""
    n = x.size
    assert stats["count"] == n, what
    assert stats["mean"] == pytest.approx(x.mean(), rel=1e-13), what
    assert stats["stddev"] == pytest.approx(x.std(ddof=1), rel=1e-10), what
    assert (stats["min"], stats["max"]) == (x.min(), x.max()), what
    assert stats["standard_error"] == pytest.approx(x.std(ddof=1) / math.sqrt(n), rel=1e-10), what
    assert stats["ci95_half_width"] == pytest.approx(student_t975(n - 1) * stats["standard_error"], rel=1e-4), what


def output_stats(r, i):
    return {k: r[k][i] for k in ("count", "mean", "stddev", "min", "max", "standard_error", "ci95_half_width")}


def test_moments_quantiles_and_histograms_are_those_of_the_healthy_worlds_alone():
    """Count, mean, standard deviation, extremes, standard error, 95% interval, quantiles and
    histogram of every output: those of its healthy worlds' values (which the flagged ones'
    would change)."""
    r = lockstep.run_study(flagging_study())
    healthy = healthy_worlds(r)
    levels = r["quantile_levels"]
    for i, name in enumerate(r["names"]):
        x = r["outcomes"][i, healthy]
        assert r["outcomes"][i, ~healthy].mean() != x.mean(), f"{name}: the flagged worlds would change it"
        assert_moments_of(output_stats(r, i), x, name)
        report = r["report"]["outputs"][i]
        half_width = report["ci95_half_width"]
        assert report["ci95"] == [report["mean"] - half_width, report["mean"] + half_width]
        np.testing.assert_allclose(r["quantiles"][i], np.quantile(x, levels), rtol=1e-14, err_msg=name)
        # Equal bins over [min, max] of the healthy values, the maximum in the last (study_statistics.h).
        bins = r["histograms"].shape[1]
        index = np.minimum(((x - x.min()) / (x.max() - x.min()) * bins).astype(int), bins - 1)
        np.testing.assert_array_equal(r["histograms"][i], np.bincount(index, minlength=bins), err_msg=name)


def test_spearman_correlations_are_over_the_healthy_worlds_alone():
    """The mass's rank correlation with every output is that of the healthy worlds' draws; the first
    joint's initial speed, -1 in every healthy world, has none, with the reason."""
    r = lockstep.run_study(flagging_study())
    healthy = healthy_worlds(r)
    mass, speed = r["parameters"][:, 0], r["parameters"][:, 1]
    assert np.unique(speed).size > 1 and np.all(speed[healthy] == -1)
    for i, name in enumerate(r["names"]):
        assert r["spearman"][0, i] == pytest.approx(spearman(mass[healthy], r["outcomes"][i, healthy]), abs=1e-12)
        assert np.isnan(r["spearman"][1, i])
        assert r["spearman_undefined"][1][i] == "parameter 'u.joint1' does not vary (every draw is -1)"


def finite_differences(study, r, v, shift, h):
    """d output / d (variation v's draw) in every healthy world, by central differences of two studies
    whose draws of v are moved by about +-h (shift(h) gives variation v's new description)."""
    runs = []
    for step in (h, -h):
        vary = list(study["vary"])
        vary[v] = shift(step)
        runs.append(lockstep.run_study(dict(study, vary=vary)))
    for run in runs:
        np.testing.assert_array_equal(run["status"], r["status"])  # the same worlds fail
    healthy = r["status"] == 0
    dp = runs[0]["parameters"][healthy, v] - runs[1]["parameters"][healthy, v]
    return (runs[0]["outcomes"][:, healthy] - runs[1]["outcomes"][:, healthy]) / dp


def test_derivative_measures_average_over_the_healthy_worlds_alone():
    """dgsm: the mean over the healthy worlds of the squared derivative of each output by each varied
    value (by finite differences here: the mass's uniform range moved, the speed's clipping bound
    moved), and the bound C nu / Var(output) with the healthy worlds' variance."""
    study = flagging_study(outputs=OUTPUTS[:2], sensitivity="derivative")
    r = lockstep.run_study(study)
    healthy = healthy_worlds(r)
    h = 1e-6
    by_mass = finite_differences(study, r, 0, lambda d: dict(MASS, low=MASS["low"] + d, high=MASS["high"] + d), h)
    by_speed = finite_differences(study, r, 1, lambda d: dict(FLAG, min=FLAG["min"] + d), h)
    poincare = [(MASS["high"] - MASS["low"]) ** 2 / math.pi ** 2, math.inf]  # sd^2 = 1e600
    for o, name in enumerate(r["names"]):
        variance = r["outcomes"][o, healthy].var(ddof=1)
        for v, derivative in enumerate((by_mass, by_speed)):
            nu = np.mean(derivative[o] ** 2)
            assert r["dgsm"][o, v] == pytest.approx(nu, rel=1e-6), f"d {name} / d {study['vary'][v]['parameter']}"
            bound = poincare[v] * r["dgsm"][o, v] / variance
            assert r["dgsm_bound"][o, v] == pytest.approx(bound, rel=1e-12)
            assert r["dgsm_undefined"][o][v] == ""


def saltelli_values(r, o, k):
    """f_A, f_B and f_AB [k, rows] of output o over the base rows whose worlds are all healthy."""
    y = r["outcomes"][o].reshape(-1, k + 2)
    whole = np.all(r["status"].reshape(-1, k + 2) == 0, axis=1)
    return y[whole, 0], y[whole, 1], y[whole, 2:].T


def sobol_estimates(f_a, f_b, f_ab):
    """First-order (Saltelli 2010, centred) and total (Jansen 1999) indices (docs/study-statistics.md)."""
    both = np.concatenate([f_a, f_b])
    v = both.var(ddof=1)
    return np.mean((f_b - both.mean()) * (f_ab - f_a), axis=1) / v, np.mean((f_a - f_ab) ** 2, axis=1) / (2 * v)


def splitmix64(x):
    mask = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def bootstrap_rows(seed, b, m):
    """The rows resample b draws from m rows: the counter-based hash of host/study/study_statistics.cpp."""
    base = splitmix64(splitmix64(seed) ^ splitmix64(0x5A17E11F + b))
    return [int(float(splitmix64(base ^ t) >> 11) * (1.0 / 9007199254740992.0) * float(m)) for t in range(m)]


def test_sobol_indices_and_their_intervals_are_over_the_healthy_base_rows_alone():
    """A base row counts only if all its worlds are healthy: the indices are the estimators' values
    over those rows, their 95% intervals the percentiles of the estimates over resamples of those
    rows; the summary is over the healthy A and B worlds. The speed, -1 in every healthy row, has no
    indices, with the reason."""
    resamples, k = 200, 2
    r = lockstep.run_study(flagging_study(worlds=32, sensitivity="sobol", bootstrap_resamples=resamples))
    status = r["status"].reshape(-1, k + 2)
    whole = np.all(status == 0, axis=1)
    assert 4 <= whole.sum() < whole.size
    for o, name in enumerate(r["names"]):
        a_and_b = r["outcomes"][o].reshape(-1, k + 2)[:, :2][status[:, :2] == 0]
        assert_moments_of(output_stats(r, o), a_and_b, name)
        s = r["sobol"][o]
        f_a, f_b, f_ab = saltelli_values(r, o, k)
        first, total = sobol_estimates(f_a, f_b, f_ab)
        assert s["rows"] == whole.sum()
        assert s["first"][0] == pytest.approx(first[0], rel=1e-9, abs=1e-12), name
        assert s["total"][0] == pytest.approx(total[0], rel=1e-9, abs=1e-12), name
        estimates = np.array([sobol_estimates(f_a[rows], f_b[rows], f_ab[:, rows])
                              for rows in (bootstrap_rows(r["seed"], b, f_a.size) for b in range(resamples))])
        finite = [np.isfinite(estimates[:, i, 0]) for i in range(2)]
        for i, key in enumerate(("first", "total")):
            want = np.quantile(estimates[finite[i], i, 0], [0.025, 0.975])
            got = [s[f"{key}_low"][0], s[f"{key}_high"][0]]
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"{name}: {key} interval")
        assert np.isnan(s["first"][1]) and np.isnan(s["total_high"][1])
        assert s["undefined"][1] == "parameter 'u.joint1' does not vary (every draw is -1)"


def test_sequential_study_stops_on_the_interval_of_the_healthy_worlds():
    """until: the study stops after the first round whose 95% interval of q.joint7's mean, over the
    healthy worlds run so far (at least 30), is at most the target: here after 8 rounds of 16 worlds,
    where the same rule over every world would have stopped after 4."""
    target, every = SEQUENTIAL["ci_half_width"], SEQUENTIAL["every"]

    def half_width(x):
        return student_t975(x.size - 1) * x.std(ddof=1) / math.sqrt(x.size) if x.size >= 30 else math.inf

    def stop(x, keep):
        rounds = [n for n in range(every, x.size + 1, every) if half_width(x[:n][keep[:n]]) <= target]
        return rounds[0] if rounds else None

    r = lockstep.run_study(flagging_study(worlds=every, until=SEQUENTIAL))
    healthy = r["status"] == 0
    x = r["outcomes"][0]
    assert r["report"]["until"]["reached"] and r["report"]["until"]["worlds_run"] == x.size
    assert stop(x, healthy) == x.size == 8 * every
    assert stop(x, np.ones_like(healthy)) == 4 * every
    margins = [half_width(x[:n][healthy[:n]]) / target - 1 for n in range(every, x.size + 1, every)]
    assert min(abs(m) for m in margins) > 1e-3  # Student's t here is within 1e-4 of the study's
    assert_moments_of(output_stats(r, 0), x[healthy], "q.joint7")


def test_with_one_healthy_world_or_none_the_spreads_are_undefined_with_the_reason():
    """One healthy world (seed 0 of 4 worlds): its values are the moments and quantiles, the spread
    is 0 and the interval infinite (study_statistics.h), and rho and the derivative bounds are
    undefined as "fewer than 2 healthy worlds"; none (seed 11): every statistic is undefined, "no
    healthy world". A Sobol study with one healthy base row (seed 9 of 3) has no indices."""
    one = lockstep.run_study(flagging_study(worlds=4, seed=0, outputs=OUTPUTS[:2], sensitivity="derivative"))
    healthy = one["status"] == 0
    assert healthy.sum() == 1
    for i in range(2):
        value = one["outcomes"][i, healthy][0]
        assert one["count"][i] == 1 and one["mean"][i] == one["min"][i] == one["max"][i] == value
        assert np.all(one["quantiles"][i] == value) and one["histograms"][i].sum() == 1
        assert one["stddev"][i] == 0 and one["standard_error"][i] == 0 and one["ci95_half_width"][i] == math.inf
    assert np.all(np.isfinite(one["dgsm"])) and np.all(np.isnan(one["dgsm_bound"]))
    assert {w for row in one["dgsm_undefined"] for w in row} == {"fewer than 2 healthy worlds"}
    assert np.all(np.isnan(one["spearman"]))
    assert {w for row in one["spearman_undefined"] for w in row} == {"fewer than 2 healthy worlds"}

    none = lockstep.run_study(flagging_study(worlds=4, seed=11, outputs=OUTPUTS[:2], sensitivity="derivative"))
    assert none["flagged_worlds"] == 4 and np.all(none["count"] == 0) and np.all(np.isnan(none["mean"]))
    assert none["undefined"] == ["no healthy world: all 4 worlds were flagged"] * 2
    assert np.all(np.isnan(none["dgsm"])) and {w for row in none["dgsm_undefined"] for w in row} == {"no healthy world"}

    sobol = lockstep.run_study(flagging_study(worlds=3, seed=9, sensitivity="sobol", bootstrap_resamples=10))
    assert np.all(sobol["status"].reshape(3, 4) == 0, axis=1).sum() == 1
    for s in sobol["sobol"]:
        assert s["rows"] == 1 and np.all(np.isnan(s["first"])) and np.all(np.isnan(s["total_low"]))
        assert s["undefined"] == ["fewer than 2 healthy base rows"] * 2


def run_cli(tmp_path, study, prefix, *options):
    cli = cli_path()
    if not cli:
        pytest.skip("the lockstep command line is not built (scripts/build.sh)")
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study))
    subprocess.run([cli, "study", str(path), "--device", "cpu", "--out", str(tmp_path / prefix), *options],
                   check=True, capture_output=True)
    with open(tmp_path / f"{prefix}.json") as f:
        return json.load(f)


@pytest.mark.parametrize("study", [flagging_study(), flagging_study(worlds=16, until=SEQUENTIAL)],
                         ids=["fixed", "sequential"])
def test_chunks_and_the_ranks_reduction_leave_the_flagged_worlds_out_as_the_gathered_study(tmp_path, study):
    """`lockstep study` in chunks of 5 writes the gathered study's bytes; with --reduce ranks in chunks
    of 7 (every chunk a part of one block of worlds, reduced world by world), the same moments,
    histograms and sequential outcome, and quantiles from the sketch within its bound (relative 0.005
    of the order statistics around each) of the healthy worlds' exact ones."""
    gathered = run_cli(tmp_path, study, "gathered", "--outcomes")
    assert run_cli(tmp_path, study, "chunked", "--chunk", "5") == gathered
    ranks = run_cli(tmp_path, study, "ranks", "--reduce", "ranks", "--chunk", "7")
    assert ranks.get("until") == gathered.get("until")
    npz = np.load(tmp_path / "gathered.npz")
    healthy = npz["status"] == 0
    assert 0 < healthy.sum() < healthy.size
    np.testing.assert_array_equal(npz["status"], lockstep.run_study(study)["status"])
    assert ranks["quantile_method"].startswith("sketch") and gathered["quantile_method"] == "exact"
    levels = np.array(gathered["quantiles"])
    for o, (want, got) in enumerate(zip(gathered["outputs"], ranks["outputs"])):
        quantiles = got["quantiles"]
        assert dict(got, quantiles=None) == dict(want, quantiles=None)
        x = np.sort(npz["outputs"][healthy, o])
        position = levels * (x.size - 1)
        around = np.maximum(np.abs(x[np.floor(position).astype(int)]), np.abs(x[np.ceil(position).astype(int)]))
        assert np.all(np.abs(np.array(quantiles) - np.quantile(x, levels)) <= 0.005 * around), want["name"]


def test_a_derivative_study_in_chunks_writes_what_run_study_returns(tmp_path):
    """The derivative measures of a study with flagged worlds, run by `lockstep study` in chunks of 5
    (each chunk's derivatives gathered with its worlds' status): run_study's report, byte for byte."""
    study = flagging_study(outputs=OUTPUTS[:2], sensitivity="derivative")
    r = lockstep.run_study(study)
    assert 0 < r["flagged_worlds"] < r["status"].size
    written = run_cli(tmp_path, study, "chunked", "--chunk", "5")
    assert dict(written, study=None) == dict(r["report"], study=None)  # "study": the file's name or "<dict>"
