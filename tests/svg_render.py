#!/usr/bin/env python3
"""svg_render.py - `trainplan search --svg` looked at as a person sees it.

Renders the SVG of one small search (two systems, so shapes and the zoom on
the front are drawn) with headless Chromium, decodes the screenshot with
the standard library (zlib) and checks: the picture is not one colour,
every panel has ink, and every label of the Pareto front is visible: a
second screenshot with the labels hidden by an injected style differs
inside each label's box (the boxes come from the SVG's data-box). Also: the
labels of a panel do not overlap and cover no point, the front's points are apart, and the
file is the same bytes at 1 and 2 threads. Exit 77 (ctest SKIP) without
chromium.

    svg_render.py TRAINPLAN SCRATCH_DIR
    svg_render.py --shot SVG PNG      the screenshot only (docs/search_front.png)
"""
import os
import re
import shutil
import signal
import struct
import math
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
TIMEOUT_S = 90


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def svg_size(text):
    m = re.search(r'<svg[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"', text)
    if not m:
        raise SystemExit("svg_render: no width/height on the <svg> root")
    return int(m.group(1)), int(m.group(2))


def screenshot(browser, svg_path, png_path, width, height):
    """Chromium's screenshot of svg_path at width x height CSS pixels, one
    device pixel each. Its stderr (GPU, D-Bus noise) is kept for a failure
    message only; a run past TIMEOUT_S is killed with its children."""
    with tempfile.TemporaryDirectory(prefix="svg_render_profile_") as prof:
        cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox",
               "--hide-scrollbars", "--force-device-scale-factor=1",
               "--no-first-run", "--disable-extensions",
               "--user-data-dir=" + prof, "--screenshot=" + png_path,
               "--window-size=%d,%d" % (width, height),
               "file://" + os.path.abspath(svg_path)]
        if os.path.exists(png_path):
            os.unlink(png_path)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise SystemExit("svg_render: chromium ran past %d s" % TIMEOUT_S)
        finally:
            try:  # the renderer and GPU helpers it may leave behind
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not os.path.exists(png_path):
            raise SystemExit("svg_render: chromium wrote no screenshot (exit %d):\n%s"
                             % (p.returncode, err.decode(errors="replace")[-2000:]))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """(width, height, rows): rows[y] a bytes of width x 3 RGB values. 8-bit
    RGB or RGBA, not interlaced (what Chromium writes)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("svg_render: %s is not a PNG" % path)
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit("svg_render: PNG depth %d colour type %d interlace %d "
                                 "not handled" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 255
        elif ft != 0:
            raise SystemExit("svg_render: PNG filter %d" % ft)
        prev = line
        if bpp == 4:
            rgb = bytearray(w * 3)
            rgb[0::3], rgb[1::3], rgb[2::3] = line[0::4], line[1::4], line[2::4]
            rows.append(bytes(rgb))
        else:
            rows.append(bytes(line))
    return w, h, rows


def ink(rows, box, w, h):
    """Pixels in box (x, y, bw, bh) that are not near white."""
    x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
    x1, y1 = min(w, int(box[0] + box[2] + 0.999)), min(h, int(box[1] + box[3] + 0.999))
    n = 0
    for y in range(y0, y1):
        r = rows[y][3 * x0:3 * x1]
        n += sum(1 for i in range(0, len(r), 3) if r[i] + r[i + 1] + r[i + 2] < 720)
    return n, max(0, x1 - x0) * max(0, y1 - y0)


def differ(ra, rb, box, w, h):
    x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
    x1, y1 = min(w, int(box[0] + box[2] + 0.999)), min(h, int(box[1] + box[3] + 0.999))
    n = 0
    for y in range(y0, y1):
        a, b = ra[y][3 * x0:3 * x1], rb[y][3 * x0:3 * x1]
        if a != b:
            n += sum(1 for i in range(0, len(a), 3) if a[i:i + 3] != b[i:i + 3])
    return n


def boxes(text, cls):
    pat = r'<[a-z]+ class="%s" data-box="([-0-9. ]+)"' % cls
    return [tuple(float(v) for v in m.group(1).split()) for m in re.finditer(pat, text)]


def overlap(a, b):
    return (a[0] < b[0] + b[2] and b[0] < a[0] + a[2]
            and a[1] < b[1] + b[3] and b[1] < a[1] + a[3])


def inside(b, panel):
    return panel[1] <= b[1] and b[1] + b[3] <= panel[1] + panel[3]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--shot":
        browser = chromium()
        if not browser:
            raise SystemExit("svg_render: chromium not found (apt-get install chromium)")
        with open(sys.argv[2]) as f:
            width, height = svg_size(f.read())
        screenshot(browser, sys.argv[2], sys.argv[3], width, height)
        return 0
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    tp, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    svg = os.path.join(scratch, "search.svg")
    # Two systems (marker shapes), a front of 3 layouts whose costs are
    # within a few percent (the zoom panel), the top 10 (the bars).
    search = [tp, "search", "--model", "gpt-neox-20b", "--system", "perlmutter,eos",
              "--max-gpus", "32", "--seq-length", "2048", "--global-batch-size", "256",
              "--no-timing"]
    outs = []
    for threads in ("1", "2"):
        path = svg if threads == "1" else svg + ".t2"
        r = subprocess.run(search + ["--threads", threads, "--svg", path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise SystemExit("svg_render: search exit %d: %s" % (r.returncode, r.stderr.decode()))
        with open(path, "rb") as f:
            outs.append(f.read())
    if outs[0] != outs[1]:
        raise SystemExit("svg_render: the SVG differs between 1 and 2 threads")
    text = outs[0].decode()
    fails = []

    def check(ok, what):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            fails.append(what)

    panels = boxes(text, "panel")
    labels = boxes(text, "front-label")
    n_front = int(re.search(r"(\d+) on the Pareto front", text).group(1))
    check(len(panels) == 4, "4 panels (scatter, front zoomed, time, memory): %d" % len(panels))
    check(n_front >= 2, "a front of %d layouts" % n_front)
    for i, p in enumerate(panels[:2]):
        mine = [b for b in labels if inside(b, p)]
        check(len(mine) == n_front, "panel %d: a label per front point (%d)" % (i + 1, len(mine)))
        bad = [(a, b) for j, a in enumerate(mine) for b in mine[j + 1:] if overlap(a, b)]
        check(not bad, "panel %d: labels apart %s" % (i + 1, bad[:1]))
        # Labels avoid points: no admitted point's marker centre inside a
        # label's box (front points are drawn by translate, the cloud's
        # markers at their x, y).
        cloud = [(float(m.group(1)), float(m.group(2))) for m in re.finditer(
            r'<use xlink:href="#m\d" x="([-0-9.]+)" y="([-0-9.]+)"', text)]
        cloud = [q for q in cloud if inside((q[0], q[1], 0, 0), p)
                 and not (q[0] == 0 and q[1] == 0)]
        under = [(b[:2], q) for b in mine for q in cloud
                 if b[0] <= q[0] <= b[0] + b[2] and b[1] <= q[1] <= b[1] + b[3]]
        check(not under, "panel %d: no point under a label (%d points drawn) %s"
              % (i + 1, len(cloud), under[:1]))
        pts = [tuple(float(v) for v in m.groups()) for m in re.finditer(
            r'<g class="front-point"[^>]*translate\(([-0-9.]+),([-0-9.]+)\)', text)]
        pts = [q for q in pts if p[1] <= q[1] <= p[1] + p[3]]
        close = [(a, b) for j, a in enumerate(pts) for b in pts[j + 1:]
                 if abs(a[0] - b[0]) < 8 and abs(a[1] - b[1]) < 8]
        check(len(pts) == n_front and not close,
              "panel %d: front points 8 px apart or more %s" % (i + 1, close[:1]))
    zoom = [tuple(float(v) for v in m.groups()) for m in re.finditer(
        r'<g class="front-point"[^>]*translate\(([-0-9.]+),([-0-9.]+)\)', text)][n_front:]
    # Spread apart in the picture: on the full panel the front's costs may
    # sit within a few pixels; the zoom draws every two of its points at
    # least 20 px apart (points of nearly one cost are apart in time).
    near = [(a, b) for j, a in enumerate(zoom) for b in zoom[j + 1:]
            if math.hypot(a[0] - b[0], a[1] - b[1]) < 20]
    check(len(zoom) >= 2 and not near,
          "zoom: the front's points 20 px apart or more: %s" % near[:1])

    browser = chromium()
    if not browser:
        print("SKIP: chromium not found (Debian: apt-get install chromium "
              "fonts-dejavu-core); the SVG's structure was checked, not its picture")
        return SKIP if not fails else 1
    width, height = svg_size(text)
    png = os.path.join(scratch, "search.png")
    screenshot(browser, svg, png, width, height)
    # The same picture with the front's labels hidden.
    hidden = os.path.join(scratch, "search_nolabels.svg")
    with open(hidden, "w") as f:
        f.write(re.sub(r"(<svg[^>]*>)", r"\1<style>.front-label{visibility:hidden}</style>",
                       text, count=1))
    png2 = os.path.join(scratch, "search_nolabels.png")
    screenshot(browser, hidden, png2, width, height)
    w, h, rows = read_png(png)
    _, _, rows2 = read_png(png2)
    check((w, h) == (width, height), "screenshot %dx%d (the SVG's size %dx%d)"
          % (w, h, width, height))
    colours = set()
    for y in range(0, h, 7):
        r = rows[y]
        colours.update(r[i:i + 3] for i in range(0, len(r), 3 * 5))
    check(len(colours) > 20, "not one colour: %d colours sampled" % len(colours))
    for i, p in enumerate(panels):
        n, area = ink(rows, p, w, h)
        check(area > 0 and n > 0.02 * area,
              "panel %d: ink on %.1f %% of %d px" % (i + 1, 100.0 * n / max(area, 1), area))
    for b in labels:
        n, area = ink(rows, b, w, h)
        d = differ(rows, rows2, b, w, h)
        check(d >= 0.08 * area and n >= 0.08 * area,
              "label at %s visible: %d of %d px change without it" % (b[:2], d, int(area)))
    print("%d checks failed" % len(fails) if fails else "all checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
