#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check LAVA job and device files with LAVA's own schemas (lava-common).

Usage: validate.py [-h] [--device DEVICE_YAML] JOB_YAML...

Runs lava_common.schemas.validate(job, strict=True) on each job (the check
lava-server applies on submission; lava-run itself does not run it) and,
with --device, lava_common.schemas.device.validate on the rendered device
configuration.  Exit status 0 when everything is valid, 1 otherwise.
"""
import argparse
import sys

import voluptuous
import yaml

from lava_common.schemas import validate
from lava_common.schemas.device import validate as validate_device
from lava_common.version import __version__


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", help="rendered device YAML to check too")
    p.add_argument("jobs", nargs="+", metavar="JOB_YAML")
    args = p.parse_args()
    print("lava-common %s" % __version__)
    ok = True
    checks = [(j, "job") for j in args.jobs]
    if args.device:
        checks.append((args.device, "device"))
    for path, kind in checks:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
        try:
            if kind == "job":
                validate(data, strict=True)
            else:
                validate_device(data)
        except voluptuous.Invalid as exc:
            ok = False
            print("%s: INVALID %s: %s (at %s)" % (path, kind, exc.msg, exc.path))
        else:
            print("%s: valid %s" % (path, kind))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
