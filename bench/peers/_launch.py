"""python peers/_launch.py RESULT_JSON ARGV...

Runs ARGV and writes {"seconds", "exitcode", "rss_mb", "cpu_seconds"} to RESULT_JSON.
The harness starts every engine through this tiny fresh interpreter because
Linux carries ru_maxrss across fork+exec: an engine forked straight from the
harness would report at least the harness's own peak RSS (hundreds of MB after
hashing big outputs).  Through the launcher the floor is ~10 MB.
"""
import json
import os
import subprocess
import sys
import time

if __name__ == "__main__":
    result, argv = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    with open(result, "w") as f:
        json.dump({"seconds": seconds, "exitcode": os.waitstatus_to_exitcode(status),
                   "rss_mb": usage.ru_maxrss / 1024, "cpu_seconds": usage.ru_utime + usage.ru_stime}, f)
