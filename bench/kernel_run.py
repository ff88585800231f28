"""python -m bench.kernel_run KERNEL WORKDIR OUTDIR: one workload of ``bench kernel`` on the kernel alone.

KERNEL is ``compiled`` or ``python`` (the uncompiled twin). Reads ``<workdir>/edge.facts`` into an
int64 array (``numpy.loadtxt``), builds the CSR tries the join needs, runs the leapfrog kernel,
and writes the output relation as ``<outdir>/<output>.csv`` (tab-separated, as ``datalog run -D``
does; pyarrow's CSV writer), with the time of each phase in ``<outdir>/phases.json``. Kept apart
from bench.kernel so the process imports only what the kernel needs.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(kernel_name: str, workdir: Path, outdir: Path) -> int:
    t0 = time.perf_counter()
    os.environ["DATALOG_KERNEL"] = kernel_name
    import numpy as np

    from lftj.csr import CsrTrie, distinct_rows
    from lftj.kernels import kernel
    meta = json.loads((workdir / "workload.json").read_text())
    phases = {"import": time.perf_counter() - t0}

    t = time.perf_counter()
    edges = np.loadtxt(workdir / "edge.facts", dtype=np.int64, delimiter="\t", ndmin=2)
    phases["load"] = time.perf_counter() - t

    t = time.perf_counter()
    by_xy, by_yx = CsrTrie.build(edges, (0, 1)), CsrTrie.build(edges, (1, 0))
    phases["tries"] = time.perf_counter() - t

    t, cpu = time.perf_counter(), time.process_time()
    if meta["kind"] == "triangles":
        # tri(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).   order x, y, z
        out = kernel.triejoin(3, [[0, 1], [1, 2], [0, 2]], [by_xy, by_xy, by_yx])
    else:
        # path2(x, z) :- edge(x, y), edge(y, z).   order y, x, z; the head projects y away
        out = distinct_rows(kernel.triejoin(3, [[0, 1], [0, 2]], [by_yx, by_xy])[:, [1, 2]])
    phases["join"], phases["join_cpu"] = time.perf_counter() - t, time.process_time() - cpu

    t = time.perf_counter()
    import pyarrow as pa                  # its CSV writer: about 50 MB of the process's peak RSS
    from pyarrow import csv
    outdir.mkdir(parents=True, exist_ok=True)
    columns = [pa.Array.from_buffers(pa.int64(), len(out), [None, pa.py_buffer(np.ascontiguousarray(out[:, i]))])
               for i in range(out.shape[1])]             # zero-copy (pa.array would import pandas)
    result = pa.Table.from_arrays(columns, names=[f"c{i}" for i in range(out.shape[1])])
    csv.write_csv(result, outdir / f"{meta['output']}.csv",
                  csv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none"))
    phases["write"] = time.perf_counter() - t
    (outdir / "phases.json").write_text(json.dumps(phases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
