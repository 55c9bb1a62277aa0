#!/usr/bin/env python3
"""edit_records.py SRC DST LINE FROM TO: copies a records file, replacing on record line LINE (1-based;
0: every line) the first match of the regular expression FROM by TO. TO is text with \\xNN escapes
(a byte) and {N*c} (the character c N times), so a campaign can write invalid UTF-8 and long lines."""
import re
import sys

src, dst, line, frm, to = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode(), sys.argv[5]
rep = re.sub(r"\{(\d+)\*(.)\}", lambda m: m.group(2) * int(m.group(1)), to)
rep = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), rep.encode())
lines = open(src, "rb").read().split(b"\n")
for i in range(len(lines) - 1):
    if line == 0 or i == line - 1:
        lines[i] = re.sub(frm, lambda _: rep, lines[i], count=1)
open(dst, "wb").write(b"\n".join(lines))
