#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The results table of the README and the cover letter, from a report.

Usage: results-table.py [-h] [--summary FILE] [--partial]
                        (--md | --txt | --check FILE...)

Reads a bench/bench-report.sh report (default bench/reference/summary.md,
the benchmark reference) and prints its headline figures as one table:
per row the flag, the figure, the guest, both medians, on/off with its
95% interval, p and the verdict, as the report's comparison lines give
them (bench/ab-stats.py: SciPy's Mann-Whitney U and a bootstrap interval
of the ratio of the medians), and the seed thread's figure beside them.

  --summary F   the report to read
  --partial     leave out the rows the report has no comparison for
                (a make bench of some boots only); without it a missing
                comparison is an error
  --md          the table in Markdown (the README, the report's reading)
  --txt         the table in plain text (the cover letter)
  --check FILE  for each FILE: a .md file must hold the Markdown table
                between the lines "<!-- results-table begin -->" and
                "<!-- results-table end -->", any other file the plain
                text table as a block; prints a diff and exits 1 when one
                does not
"""
import argparse
import difflib
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- results-table begin -->"
END = "<!-- results-table end -->"

# (flag, figure, guest and mode, the report's comparison name, the seed's
# figure: on vs off as the seed thread published it).
ROWS = [
    ("MISFIT", "longest unpinned task (s)", "arm64-dynamiq, TCG",
     "dynamiq longest task, MISFIT on vs off",
     "1.8506 vs 2.5997 s, Hikey960"),
    ("MISFIT", "longest unpinned task (s)", "arm64-juno, TCG",
     "juno longest task, MISFIT on vs off", "1.6016 vs 1.7465 s, Juno"),
    ("MISFIT", "unpinned tasks' share on big CPUs", "arm64-dynamiq, TCG",
     "dynamiq big share, on vs off", "-"),
    ("MISFIT", "unpinned tasks' share on big CPUs", "arm64-juno, TCG",
     "juno big share, on vs off", "-"),
    ("LB_CLASSIFY", "GROUP: worker node changes", "x86_64-numa, TCG",
     "GROUP node changes, on vs off", "-"),
    ("LB_CLASSIFY", "GROUP: time (s)", "x86_64-numa, TCG",
     "GROUP time, on vs off", "59.89 vs 750.66 s, 4 x 20 CPUs"),
    ("SIS_ASYM_PREV", "pipe: migrations", "arm64-dynamiq, TCG",
     "dynamiq migrations, on vs off", "0 vs 999364, Hikey960"),
    ("SIS_ASYM_PREV", "pipe: migrations", "arm64-juno, TCG",
     "juno migrations, on vs off", "-"),
    ("SIS_ASYM_PREV", "pipe: round trips/s", "arm64-dynamiq, TCG",
     "dynamiq ops/s, on vs off", "182587 vs 149313, Hikey960"),
    ("SIS_ASYM_PREV", "pipe: round trips/s", "arm64-juno, TCG",
     "juno ops/s, on vs off", "-"),
    ("RESCHED_INELIGIBLE", "nice 0 avg latency (us), hackbench",
     "x86_64-icount, 1 CPU",
     "icount hackbench nice 0 avg, RUN_TO_PARITY, on vs off",
     "277 vs 466 us"),
    ("cost", "pipe round trip (ns), patched vs base",
     "x86_64-icount, 1 CPU",
     "cost pipe round trip (ns), patched vs base", "-"),
]

SEP = re.compile(r"^- (?P<name>.+?): (?P<verdict>[^,]+), first/second "
                 r"(?P<ratio>\S+)(?: \[(?P<lo>[^-\]]+)-(?P<hi>[^\]]+)\])?, "
                 r"p=(?P<p>\S+) \(medians (?P<a>\S+) vs (?P<b>\S+), ")
NOT_MEASURED = re.compile(r"^- (?P<name>.+?): not measured$")


def parse(path):
    """The report's comparison lines by name, and its run header."""
    found = {}
    head = {}
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("```"):
                if head:
                    in_code = False
                    continue
                in_code = True
                continue
            if in_code:
                k, _, v = line.partition(": ")
                head[k] = v
                continue
            m = SEP.match(line)
            if m:
                found[m["name"]] = m.groupdict()
                continue
            m = NOT_MEASURED.match(line)
            if m:
                found[m["name"]] = None
    return found, head


def cells(found, partial=False):
    out = []
    for flag, fig, guest, name, seed in ROWS:
        if name not in found:
            if partial:
                continue
            raise SystemExit(f"results-table: no comparison '{name}' in the report")
        m = found[name]
        if m is None:
            out.append((flag, fig, guest, "-", "-", "not measured", "-", "not measured", seed))
            continue
        ratio = m["ratio"]
        if m["lo"]:
            ratio += f" [{m['lo']}-{m['hi']}]"
        verdict = m["verdict"].replace("first ", "on ")
        out.append((flag, fig, guest, m["a"], m["b"], ratio, m["p"], verdict, seed))
    return out


HEADS = ("flag", "figure", "guest, mode", "on", "off", "on/off [95% CI]", "p",
         "verdict", "seed: on vs off")


def caption(head):
    series = head.get("series", "?").split(" ")[0]
    return (f"make bench of {head.get('date', '?')}, series {series}, "
            f"base {head.get('base', '?')}.")


def md(rows, head):
    lines = [caption(head), "",
             "| " + " | ".join(HEADS) + " |",
             "|" + "---|" * len(HEADS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def txt(rows, head):
    # The cover letter's lines stay within 80 columns: figure and guest
    # on one line, the numbers on the next.
    lines = []
    for c in caption(head).split(", base"):
        lines.append(c if not lines else "base" + c)
    lines.append("")
    flag = None
    for r in rows:
        if r[0] != flag:
            flag = r[0]
            lines.append(f"  {flag}:")
        lines.append(f"    {r[1]}, {r[2]}")
        lines.append(f"      on {r[3]}, off {r[4]}: on/off {r[5]}, p={r[6]}")
        lines.append(f"      {r[7]}" + (f"; seed {r[8]}" if r[8] != "-" else ""))
    return "\n".join(lines) + "\n"


def check(files, mdtab, txttab):
    bad = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if path.endswith(".md"):
            if BEGIN not in text or END not in text:
                print(f"results-table: {path}: no '{BEGIN}' ... '{END}' block")
                bad = 1
                continue
            have = text.split(BEGIN, 1)[1].split(END, 1)[0].lstrip("\n")
            want = mdtab
        else:
            want = txttab
            if want in text:
                continue
            # Show the difference against the block that starts alike.
            start = text.find(want.split("\n", 1)[0])
            have = text[start:start + len(want)] if start >= 0 else ""
        if have != want:
            print(f"results-table: {path} differs from bench/results-table.py's output:")
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), want.splitlines(True), path, "results-table.py"))
            bad = 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--summary", default=os.path.join(REPO, "bench/reference/summary.md"))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--md", action="store_true")
    g.add_argument("--txt", action="store_true")
    g.add_argument("--check", nargs="+", metavar="FILE")
    ap.add_argument("--partial", action="store_true")
    args = ap.parse_args()
    found, head = parse(args.summary)
    rows = cells(found, args.partial)
    if not rows:
        raise SystemExit("results-table: none of the table's comparisons is in the report")
    if args.md:
        sys.stdout.write(md(rows, head))
    elif args.txt:
        sys.stdout.write(txt(rows, head))
    else:
        sys.exit(check(args.check, md(rows, head), txt(rows, head)))


if __name__ == "__main__":
    main()
