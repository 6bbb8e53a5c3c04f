#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Render a LAVA device dictionary into the device YAML lava-run reads.

Usage: render-device.py [-h] DEVICE_TYPES_DIR DEVICE_DICT OUTFILE

  DEVICE_TYPES_DIR  lava-server's device-types templates, e.g. from
                    "apt-get download lava-server; dpkg -x ..." :
                    .../usr/share/lava-server/device-types
  DEVICE_DICT       a device dictionary ({% extends 'qemu.jinja2' %} ...)
  OUTFILE           the rendered device YAML

Renders the way lava-server does (jinja2, trim_blocks, the dictionary's
directory first on the search path), without any job context: lava-run
has no server, so job "context:" variables (memory, extra_options, ...)
never reach the template and must be set in the dictionary.  The output
is checked with lava_common.schemas.device.validate.
"""
import argparse
import os
import sys

import jinja2
import yaml

from lava_common.schemas.device import validate


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("device_types")
    p.add_argument("device_dict")
    p.add_argument("outfile")
    args = p.parse_args()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(
            [os.path.dirname(os.path.abspath(args.device_dict)), args.device_types]
        ),
        trim_blocks=True,
        autoescape=False,
    )
    text = env.get_template(os.path.basename(args.device_dict)).render()
    data = yaml.safe_load(text)
    validate(data)
    with open(args.outfile, "w", encoding="utf-8") as out:
        out.write(
            "# Rendered by render-device.py from %s with lava-server 2023.01's\n"
            "# device-types/qemu.jinja2; lava-run --device reads this file.\n"
            % os.path.basename(args.device_dict)
        )
        out.write(text)
    print("%s: valid device configuration" % args.outfile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
