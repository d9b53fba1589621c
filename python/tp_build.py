"""PEP 517 build backend of the trainplan package, standard library only.

Debian 12's venv has pip and setuptools but not `wheel`, and there is no
package index offline, so the package builds its wheel itself: a zip of
trainplan/ with the built libtrainplan.so (SONAME file libtrainplan.so.0,
from ../build or $TRAINPLAN_BUILD_DIR) under trainplan/lib/, with the
C module of estimate_struct where the build made it
(_trainplan_speedups.abi3.so: optional, so the tag stays py3), and the
hardware database under trainplan/share/trainplan/hwdb/ (found by the
library beside itself), plus the .dist-info METADATA, WHEEL and RECORD
that the wheel format (PEP 427, PEP 376) asks for. Not done: sdists of
the whole C project; editable installs (use PYTHONPATH=python instead).
"""
import base64
import hashlib
import os
import re
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME = "trainplan"


def _version():
    """The project's version, from the top CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(trainplan VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("tp_build: no 'project(trainplan VERSION x.y.z)' in "
                           + os.path.join(ROOT, "CMakeLists.txt"))
    return m.group(1)


def _library_link():
    """The build directory's libtrainplan.so.0, not resolved."""
    build = os.environ.get("TRAINPLAN_BUILD_DIR") or os.path.join(ROOT, "build")
    return os.path.join(build, "libtrainplan.so.0")


def _library():
    """The built shared library to bundle: $TRAINPLAN_BUILD_DIR or ../build."""
    path = _library_link()
    if not os.path.exists(path):
        raise RuntimeError(
            "tp_build: %s not found: build the library first "
            "(cmake -S . -B build && cmake --build build -j2 in %s), or set "
            "TRAINPLAN_BUILD_DIR to the build directory" % (path, ROOT))
    return os.path.realpath(path)


def _metadata(version):
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: Plans the parallel layout, step time, memory and cost "
            "of LLM training (Python bindings of libtrainplan)\n"
            "Requires-Python: >=3.9\n"
            "Provides-Extra: pandas\n"
            "Requires-Dist: pandas; extra == \"pandas\"\n" % (NAME, version))


def _tag():
    """A platform wheel: it carries a native library."""
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + plat


def _files():
    """(path in the wheel, path on disk) of everything the package holds."""
    out = []
    pkg = os.path.join(HERE, NAME)
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "lib", "share"))
        for f in sorted(filenames):
            if f.endswith(".py"):
                full = os.path.join(dirpath, f)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    lib = _library()
    out.append((NAME + "/lib/libtrainplan.so.0", lib))
    # the C half of estimate_struct (python/speedups.c), where the build
    # made it (CPython's headers found): one .abi3.so for CPython >= 3.10;
    # the package runs without it (ctypes), so the wheel's tag stays py3
    fast = os.path.join(os.path.dirname(_library_link()), "_trainplan_speedups.abi3.so")
    if os.path.exists(fast):
        out.append((NAME + "/lib/_trainplan_speedups.abi3.so", fast))
    hwdb = os.path.join(ROOT, "hwdb", "data")
    for dirpath, dirnames, filenames in os.walk(hwdb):
        dirnames.sort()
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, hwdb).replace(os.sep, "/")
            out.append((NAME + "/share/trainplan/hwdb/" + rel, full))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (arcname, digest.decode("ascii"), len(data))


def _dist_info(version):
    return "%s-%s.dist-info" % (NAME, version)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    d = os.path.join(metadata_directory, _dist_info(version))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(version))
    return os.path.basename(d)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    tag = _tag()
    name = "%s-%s-%s.whl" % (NAME, version, tag)
    info = _dist_info(version)
    record = []
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data, mode=0o644):
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            record.append(_record_line(arcname, data))
        for arcname, full in _files():
            with open(full, "rb") as f:
                add(arcname, f.read(),
                    0o755 if arcname.endswith((".so.0", ".so")) else 0o644)
        add(info + "/METADATA", _metadata(version).encode())
        add(info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: trainplan tp_build\n"
                              "Root-Is-Purelib: false\nTag: %s\n" % tag).encode())
        add(info + "/top_level.txt", (NAME + "\n").encode())
        record.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("tp_build: no sdist; install from the source tree "
                       "(pip install --no-build-isolation ./python)")
