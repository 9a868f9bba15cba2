#!/usr/bin/env python3
"""nexus_check.py FILE.h5 [MORE.h5 ...] -- open statescope experiment files with NeXus readers
(nexusformat and silx) and find, for the file and for each run, the default plot: an NXdata group
with its signal and one axis per signal dimension, as those readers resolve them themselves.

Oracle: a file whose `default` chain, signal or axes are broken (or whose numbers are text) must
fail; `--self-test` builds such files with h5py and checks that each one is caught.
Exit 0 when every check holds; 1 with one line per failure otherwise.
"""
import sys

import h5py
import numpy as np
import nexusformat.nexus as nx
import silx.io
from silx.io import nxdata as silx_nxdata

NUMERIC_ATTRS = {"T", "sequences", "samples", "seed", "length", "L", "alphabet", "candidates", "forward_tokens"}


def check(path):
    failures = []
    fail = failures.append
    # nexusformat: the root's default chain to the file's plot, then each entry's own.
    root = nx.nxload(path, "r")
    if root.attrs.get("default") is None:
        fail(f"{path}: the root has no 'default' attribute")
    entries = [e for e in root.NXentry]
    if not entries:
        fail(f"{path}: no NXentry groups (runs)")
    try:
        data = root.plottable_data
        if data is None:
            fail(f"{path}: nexusformat finds no default plot for the file")
    except Exception as e:  # noqa: BLE001 - any failure to resolve is a failure of the file
        fail(f"{path}: nexusformat cannot resolve the file's default plot: {e}")
    for entry in entries:
        name = entry.nxname
        try:
            data = entry.plottable_data
        except Exception as e:  # noqa: BLE001
            fail(f"{path}: run '{name}': nexusformat cannot resolve its default plot: {e}")
            continue
        if data is None or data.nxclass != "NXdata":
            fail(f"{path}: run '{name}': nexusformat finds no default NXdata")
            continue
        signal = data.nxsignal
        if signal is None:
            fail(f"{path}: {name}/{data.nxname}: no signal")
            continue
        axes = data.nxaxes or []
        if len(axes) != signal.ndim:
            fail(f"{path}: {name}/{data.nxname}: {len(axes)} axes for a {signal.ndim}-D signal '{signal.nxname}'")
        for ax, n in zip(axes, signal.shape):
            if ax.shape[0] != n:
                fail(f"{path}: {name}/{data.nxname}: axis '{ax.nxname}' has {ax.shape[0]} values, signal {n}")
        print(f"  nexusformat: {name}: default {data.nxname}: {signal.nxname}{list(signal.shape)} "
              f"vs {[a.nxname for a in axes]}")
        for group in entry.walk():  # every other result too: a plottable signal with an axis per dimension
            if getattr(group, "nxclass", None) != "NXdata" or group is data:
                continue
            try:
                sig = group.nxsignal
                if sig is None:
                    fail(f"{path}: {group.nxpath}: no signal")
                elif len(group.nxaxes or []) != sig.ndim:
                    fail(f"{path}: {group.nxpath}: {len(group.nxaxes or [])} axes for a {sig.ndim}-D signal '{sig.nxname}'")
            except Exception as e:  # noqa: BLE001 - nexusformat cannot read it: that is the failure
                fail(f"{path}: {group.nxpath}: nexusformat cannot resolve its signal and axes: {e}")
    # silx: its own resolution of the same chain, and every NXdata group valid to its reader.
    with silx.io.open(path) as f:
        if silx_nxdata.get_default(f) is None:
            fail(f"{path}: silx finds no default plot for the file")
        for name, g in f.items():
            if not isinstance(g, h5py.Group) or g.attrs.get("NX_class") not in ("NXentry", b"NXentry"):
                continue
            d = silx_nxdata.get_default(g)
            if d is None or not d.is_valid:
                fail(f"{path}: run '{name}': silx finds no valid default NXdata")
                continue
            print(f"  silx: {name}: signal {d.signal_name} {list(d.signal.shape)}, axes {d.axes_names}")

            def visit(sub, obj):
                if isinstance(obj, h5py.Group) and obj.attrs.get("NX_class") in ("NXdata", b"NXdata"):
                    if not silx_nxdata.is_valid_nxdata(obj):
                        fail(f"{path}: {name}/{sub}: silx says this NXdata group is not valid")
            g.visititems(visit)
    # Numbers as numbers, axes as strings.
    with h5py.File(path, "r") as f:
        if not np.issubdtype(type(f.attrs["format_version"]), np.integer):
            fail(f"{path}: format_version is {type(f.attrs['format_version']).__name__}, not an integer")

        def numbers(sub, obj):
            for k, v in obj.attrs.items():
                if k in NUMERIC_ATTRS and not isinstance(v, (np.integer, np.floating)):
                    fail(f"{path}: {sub}@{k} = {v!r} is text, not a number")
                if k == "axes" and not (isinstance(v, str) or (isinstance(v, np.ndarray) and v.dtype.kind in "OUS")):
                    fail(f"{path}: {sub}@axes is {type(v).__name__}, not a string or an array of strings")
        f.visititems(numbers)
    return failures


def self_test():
    """Files that must fail: each breaks one thing the check looks at."""
    import os
    import shutil
    import tempfile
    good = sys.argv[2]
    tmp = tempfile.mkdtemp()
    breakers = {
        "root default removed": lambda f: f.attrs.__delitem__("default"),
        "run default points nowhere": lambda f: [f[n].attrs.__setitem__("default", "nothing")
                                                 for n in f if isinstance(f[n], h5py.Group)],
        "axes as JSON text": lambda f: [f[n]["state_norm"].attrs.__setitem__("axes", '["layer", "position"]')
                                        for n in f if isinstance(f[n], h5py.Group) and "state_norm" in f[n]],
        "T as text": lambda f: [f[n]["ppl"].attrs.__setitem__("T", "32")
                                for n in f if isinstance(f[n], h5py.Group) and "ppl" in f[n]],
    }
    bad = 0
    for what, breaker in breakers.items():
        p = os.path.join(tmp, "broken.h5")
        shutil.copy(good, p)
        with h5py.File(p, "r+") as f:
            breaker(f)
        caught = check(p)
        print(f"self-test: {what}: {'caught' if caught else 'NOT caught'} ({len(caught)} failures)")
        bad += not caught
    shutil.rmtree(tmp)
    if check(good):
        print("self-test: the unbroken file fails")
        bad += 1
    return bad


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--self-test":
        sys.exit(1 if self_test() else 0)
    failures = []
    for path in sys.argv[1:]:
        print(path)
        failures += check(path)
    for line in failures:
        print("FAIL:", line)
    sys.exit(1 if failures or len(sys.argv) < 2 else 0)


if __name__ == "__main__":
    main()
