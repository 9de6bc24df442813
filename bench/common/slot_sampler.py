# SPDX-License-Identifier: MIT
# slot_sampler.py - samples how many slots of the machine-wide worker budget are held, until
# stopped, and prints the peak: how many workers of this user compiled at once.
#
# Usage: slot_sampler.py SLOT_FILE LIMIT OUT_FILE [INTERVAL_S]
# Runs until SIGTERM, then writes "peak <n> samples <k>" to OUT_FILE.
import fcntl
import os
import signal
import struct
import sys
import time

# struct flock on x86-64 Linux: l_type, l_whence, (pad), l_start, l_len, l_pid, (pad).
FLOCK = "hh4xqqi4x"


def held(fd, limit):
    count = 0
    for index in range(limit):
        query = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, index, 1, 0)
        l_type = struct.unpack(FLOCK, fcntl.fcntl(fd, fcntl.F_OFD_GETLK, query))[0]
        count += l_type != fcntl.F_UNLCK
    return count


def main():
    slot_file, limit, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.005
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    peak = samples = 0
    fd = None
    while not stop:
        if fd is None and os.path.exists(slot_file):
            fd = os.open(slot_file, os.O_RDONLY | os.O_NOFOLLOW)
        if fd is not None:
            peak = max(peak, held(fd, limit))
            samples += 1
        time.sleep(interval)
    with open(out, "w") as f:
        f.write(f"peak {peak} samples {samples}\n")


if __name__ == "__main__":
    main()
