#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Read the results out of a lava-run log.

Usage: lava-results.py [-h] [--job-result RESULT_YAML | --api-results API_YAML]
                       LOG [OUT_YAML]

LOG is lava-run's standard output: one YAML mapping per line
({"dt": ..., "lvl": ..., "msg": ...}).  Every test case LAVA recorded is a
line with lvl "results"; its msg holds definition (the monitor's name, or
"lava" for LAVA's own actions), case, result (pass/fail/skip/unknown) and
extra.test_case_id.  The console is in the lvl "target" lines.

Prints one line per test case ("pass kselftest-sched sched_features"),
then "N passed, N failed, N skipped", and writes the cases to OUT_YAML
when given.  --job-result is lava-run's OUTPUT_DIR/result.yaml (the job's
own pass/fail).  --api-results is what a LAVA server returns for the job
(`lavacli results ID --yaml`): the job's pass/fail is its "lava" suite's
"job" case, and its test cases must be the ones LOG holds.  Exit status: 0 when the job passed, at least one test
case was found and none failed; 1 otherwise.
"""
import argparse
import sys

import yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def api_results(path, cases):
    """The job's result and the differences from the log's cases."""
    try:
        with open(path, encoding="utf-8") as f:
            api = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        msg = "no results from the server: %s" % exc
        return {"result": "fail", "error_msg": msg}, [msg]
    if not isinstance(api, list):
        msg = "the server's results are not a list"
        return {"result": "fail", "error_msg": msg}, [msg]
    job = {"result": "fail", "error_msg": "no lava/job result from the server"}
    got = []
    for r in api:
        if not isinstance(r, dict):
            continue
        if r.get("suite") == "lava":
            if r.get("name") == "job":
                meta = r.get("metadata") or {}
                job = {"result": r.get("result")}
                if r.get("result") != "pass" and isinstance(meta, dict):
                    job["error_type"] = meta.get("error_type")
                    job["error_msg"] = meta.get("error_msg")
            continue
        got.append((str(r.get("suite")), str(r.get("name")), str(r.get("result"))))
    want = [(str(c["definition"]), str(c["case"]), str(c["result"])) for c in cases]
    mismatch = ["%s %s %s only in the log" % (w[2], w[0], w[1])
                for w in sorted(set(want) - set(got))]
    mismatch += ["%s %s %s only on the server" % (g[2], g[0], g[1])
                 for g in sorted(set(got) - set(want))]
    return job, mismatch


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--job-result")
    g.add_argument("--api-results")
    p.add_argument("log")
    p.add_argument("out", nargs="?")
    args = p.parse_args()

    cases, lava, errors, panics = [], [], [], []
    with open(args.log, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                rec = yaml.load(line, Loader=Loader)
            except yaml.YAMLError:
                continue
            if not isinstance(rec, dict):
                continue
            if rec.get("lvl") == "target" and "Kernel panic - not syncing" in str(rec.get("msg")):
                panics.append(str(rec.get("msg")).strip())
            if rec.get("lvl") in ("error", "exception"):
                errors.append(str(rec.get("msg")))
            if rec.get("lvl") != "results" or not isinstance(rec.get("msg"), dict):
                continue
            msg = rec["msg"]
            entry = {
                "definition": msg.get("definition"),
                "case": msg.get("case"),
                "result": msg.get("result"),
            }
            extra = msg.get("extra")
            if isinstance(extra, dict) and "test_case_id" in extra:
                entry["test_case_id"] = extra["test_case_id"]
            (lava if msg.get("definition") == "lava" else cases).append(entry)

    job = None
    if args.job_result:
        try:
            with open(args.job_result, encoding="utf-8") as f:
                job = yaml.safe_load(f)
        except OSError as exc:
            job = {"result": "fail", "error_msg": "no result.yaml: %s" % exc}

    mismatch = []
    if args.api_results:
        job, mismatch = api_results(args.api_results, cases)

    counts = {"pass": 0, "fail": 0, "skip": 0, "unknown": 0}
    for c in cases:
        counts[c["result"] if c["result"] in counts else "unknown"] += 1
        print("%s %s %s" % (c["result"], c["definition"], c["case"]))
    print(
        "%d passed, %d failed, %d skipped%s"
        % (
            counts["pass"],
            counts["fail"],
            counts["skip"],
            ", %d unknown" % counts["unknown"] if counts["unknown"] else "",
        )
    )
    if job is not None:
        line = "job: %s" % job.get("result")
        if job.get("result") != "pass":
            line += " (%s: %s)" % (job.get("error_type"), job.get("error_msg"))
        print(line)
    for e in errors:
        print("lava error: %s" % e)
    for m in panics:
        print("console: %s" % m)
    for m in mismatch:
        print("api: %s" % m)
    if args.api_results and not mismatch:
        print("api: the server has the same %d cases" % len(cases))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            yaml.safe_dump(
                {"job": job, "lava": lava, "cases": cases, "counts": counts},
                f,
                default_flow_style=False,
                sort_keys=False,
            )
    ok = (
        cases
        and counts["fail"] == 0
        and counts["unknown"] == 0
        and (job is None or job.get("result") == "pass")
        and not mismatch
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
