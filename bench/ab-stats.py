#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A/B statistics per figure, with SciPy (Debian's python3-scipy).

Usage: ab-stats.py [-h] [--alpha ALPHA]

Reads "FIGURE A VALUE" and "FIGURE B VALUE" lines on standard input (a
run of setting A or B, one figure of it) and prints one line per figure,
in the order the figures first appear:

  FIGURE RATIO LO HI P VERDICT

  RATIO    median(B) / median(A), where every run of A is above 0 and
           every run of B at least 0 (a ratio of counts, times or rates);
           else "-"
  LO HI    the ratio's 95% confidence interval: scipy.stats.bootstrap,
           percentile method, 9999 resamples of each setting's runs
           apart, a fixed random seed (the same runs give the same
           bytes); "-" without a ratio or with fewer than 2 runs of a
           setting
  P        two-sided Mann-Whitney U test as a permutation test of U
           (scipy.stats.permutation_test), so ties count right: exact
           over every split of the runs when there are at most 20000
           splits, else 9999 seeded random ones.  With every run of one
           setting beyond every run of the other, exactly
           2 / C(nA + nB, nA)
  VERDICT  B_higher or B_lower: P <= ALPHA (default 0.01, strict
             because a report tests dozens of figures) and the interval
             lies above or below 1; without a ratio, P <= ALPHA and the
             medians' difference gives the direction
           no_difference_shown: not so; the interval says how large a
             change these runs still allow
           too_few_runs: fewer than 2 runs of a setting, or so few that
             no order of them gives P <= ALPHA (2 / C(nA + nB, nA) >
             ALPHA: at ALPHA 0.01, 5 runs of each suffice, 4 do not)
           not_measured: a setting has no run

A value that is not a finite number is left out of its figure: "nan"
and "none" (a figure a run could not compute) silently, anything else
("inf", "", text) with a warning on standard error.
"""
import argparse
import math
import sys

# NumPy and SciPy are imported once the options are read, so that -h
# works where they are not installed yet.
np = None
stats = None

# Splits of the runs up to which the permutation test is exact.
EXACT_SPLITS = 20000
RESAMPLES = 9999


def ratio_of_medians(a, b, axis=-1):
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def mwu_statistic(x, y, axis=-1):
    return stats.mannwhitneyu(x, y, axis=axis, method="asymptotic").statistic


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def figure(a, b, alpha):
    """The RATIO LO HI P VERDICT fields of one figure's runs."""
    a = np.array(a)
    b = np.array(b)
    if not a.size or not b.size:
        return "- - - - not_measured"
    am, bm = np.median(a), np.median(b)
    has_ratio = a.min() > 0 and b.min() >= 0
    ratio = float(bm / am) if has_ratio else None
    lo = hi = p = None
    if a.size >= 2 and b.size >= 2:
        if has_ratio:
            ci = stats.bootstrap((a, b), ratio_of_medians, n_resamples=RESAMPLES,
                                 confidence_level=0.95, method="percentile",
                                 vectorized=True,
                                 random_state=np.random.default_rng(1)).confidence_interval
            lo, hi = float(ci.low), float(ci.high)
        if np.all(np.concatenate((a, b)) == a[0]):
            p = 1.0
        else:
            splits = math.comb(a.size + b.size, a.size)
            p = float(stats.permutation_test(
                (b, a), mwu_statistic, permutation_type="independent",
                alternative="two-sided", vectorized=True,
                n_resamples=np.inf if splits <= EXACT_SPLITS else RESAMPLES,
                random_state=np.random.default_rng(1)).pvalue)
    # The smallest P these counts allow: every run of one setting beyond
    # every run of the other.
    pmin = 2 / math.comb(a.size + b.size, a.size)
    if a.size < 2 or b.size < 2 or pmin > alpha:
        verdict = "too_few_runs"
    elif p > alpha or bm == am:
        verdict = "no_difference_shown"
    elif lo is None:
        verdict = "B_higher" if bm > am else "B_lower"
    elif lo > 1:
        verdict = "B_higher"
    elif hi < 1:
        verdict = "B_lower"
    else:
        verdict = "no_difference_shown"
    return " ".join((fmt(ratio, ".4f"), fmt(lo, ".4f"), fmt(hi, ".4f"), fmt(p, ".2g"), verdict))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alpha", type=float, default=0.01)
    args = ap.parse_args()
    global np, stats  # pylint: disable=global-statement
    import numpy as np  # pylint: disable=import-outside-toplevel,redefined-outer-name
    from scipy import stats  # pylint: disable=import-outside-toplevel,redefined-outer-name
    runs = {}
    for ln, line in enumerate(sys.stdin, 1):
        f = line.split()
        if not f:
            continue
        if len(f) == 2:
            f.append("")
        if len(f) != 3 or f[1] not in ("A", "B"):
            sys.exit(f"ab-stats.py: line {ln}: want 'FIGURE A|B VALUE': {line.strip()}")
        r = runs.setdefault(f[0], {"A": [], "B": []})
        try:
            v = float(f[2])
        except ValueError:
            v = math.nan
        if math.isfinite(v):
            r[f[1]].append(v)
        elif f[2] not in ("nan", "none"):
            print(f"ab-stats.py: {f[0]}: setting {f[1]}: '{f[2]}' is not a number, left out",
                  file=sys.stderr)
    with np.errstate(all="ignore"):
        for fig, r in runs.items():
            print(fig, figure(r["A"], r["B"], args.alpha))


if __name__ == "__main__":
    main()
