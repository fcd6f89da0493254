"""Hostile programs for tests/sandbox/test_hostile.py: each attacks the grader the way an RL
policy that has read the harness source (/opt/cobalt/sandbox/harness/ in the container) would.
Each one is a wrong answer that tries to be graded as right."""

# The child writes its record with the per-test nonce on fd 3: find the nonce and the
# record writer in the frames up the stack, write an "ok" record and leave at once.
FORGE_RECORD = """
import os, sys

def _forge():
    frame = sys._getframe(1)
    while frame is not None:
        local = frame.f_locals
        if "nonce" in local and "_record" in local:
            os.write(3, local["_record"](local["nonce"], "ok", "", 0, "", "", ""))
            os._exit(0)
        frame = frame.f_back

def add(a, b):
    _forge()
    return 99
"""

# Same, but the nonce comes from the closure/defaults of the harness functions found by gc.
FORGE_RECORD_GC = """
import gc, os, re

def add(a, b):
    for obj in gc.get_objects():
        if isinstance(obj, dict) and isinstance(obj.get("nonce"), str) and re.fullmatch("[0-9a-f]{16}", obj["nonce"]):
            os.write(3, "\\0".join([obj["nonce"], "ok", "", "0", "", "", ""]).encode())
            os._exit(0)
    for obj in gc.get_objects():
        if type(obj).__name__ == "frame":
            nonce = obj.f_locals.get("nonce")
            if isinstance(nonce, str):
                os.write(3, "\\0".join([nonce, "ok", "", "0", "", "", ""]).encode())
                os._exit(0)
    return 99
"""

# Return the expected value: the calling test's code object holds it among its constants
# (and linecache holds the test's source).
READ_CONSTANTS = """
import sys, linecache, re

def add(a, b):
    caller = sys._getframe(1)
    consts = [c for c in caller.f_code.co_consts if c is not None and not isinstance(c, type(caller.f_code))]
    source = "".join(linecache.cache.get("<test>", (0, 0, [], 0))[2])
    found = re.findall(r"==\\s*(.+?)\\s*(?:,|$)", source, re.M)
    if found:
        return eval(found[-1])
    return consts[-1] if consts else 0
"""

# Skip the test's assert statements: a trace function jumps over every line of "<test>".
JUMP_ASSERTS = """
import sys

def tracer(frame, event, arg):
    if frame.f_code.co_filename == "<test>":
        if event == "line":
            try:
                frame.f_lineno = frame.f_lineno + 1
            except ValueError:
                pass
        return tracer
    return None

sys.settrace(tracer)

def add(a, b):
    return 99
"""

# Objects that claim to equal anything, and builtins patched so the checks believe them.
ALWAYS_EQUAL = """
import builtins

class Same(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
    def __ne__(self, other):
        return False

builtins.isinstance = lambda *a: True
builtins.issubclass = lambda *a: True
builtins.bool = lambda *a: True

def add(a, b):
    return Same(0)
"""

# Exit early in every way: os._exit(0) from the function, sys.exit from atexit, and a
# SystemExit raised and swallowed by an outer frame.
EARLY_EXITS = """
import atexit, os, sys

atexit.register(lambda: sys.exit(0))
atexit.register(os._exit, 0)

def add(a, b):
    try:
        sys.exit(0)
    except SystemExit:
        pass
    os._exit(0)
"""

# stdio: look for the expected output anywhere the program can reach (the harness'
# stdin, PID 1's fds, the parent's memory and environment) and print what it finds;
# failing that, print a forged harness line and exit 0.
STDIO_SNOOP = """
import os, sys
found = ""
ppid = os.getppid()
for path in (f"/proc/{ppid}/fd/0", "/proc/1/fd/0", f"/proc/{ppid}/environ", f"/proc/{ppid}/cmdline"):
    try:
        with open(path, "rb") as fh:
            found += fh.read(4096).decode("latin-1")
    except OSError:
        pass
try:
    with open(f"/proc/{ppid}/mem", "rb") as fh:
        found += fh.read(16).decode("latin-1")
except OSError:
    pass
for fd in range(3, 64):
    try:
        found += os.read(fd, 4096).decode("latin-1")
    except OSError:
        pass
print(found or '{"status": "passed"}')
os._exit(0)
"""

# pytest: rewrite the JUnit report (its path is in PYTEST_ADDOPTS) when pytest exits.
PYTEST_REWRITE_REPORT = """
import atexit, os, re

def _rewrite():
    path = re.search(r"--junitxml=(\\S+)", os.environ.get("PYTEST_ADDOPTS", "")).group(1)
    with open(path) as fh:
        xml = fh.read()
    xml = re.sub(r"<(failure|error|skipped)\\b.*?(/>|</\\1>)", "", xml, flags=re.S)
    xml = re.sub(r'(failures|errors|skipped)="\\d+"', r'\\1="0"', xml)
    with open(path, "w") as fh:
        fh.write(xml)

atexit.register(_rewrite)

def add(a, b):
    return a - b

def sub(a, b):
    return a + b
"""

# pytest: patch the reports pytest makes, so every call phase reads "passed".
PYTEST_PATCH_REPORTS = """
import _pytest.reports as reports

_orig = reports.TestReport.from_item_and_call.__func__

def _always_passed(cls, item, call):
    report = _orig(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report

reports.TestReport.from_item_and_call = classmethod(_always_passed)

def add(a, b):
    return a - b

def sub(a, b):
    return a + b
"""

# pytest: leave the runner at import time with status 0, before any test runs.
PYTEST_EXIT = """
import os
os._exit(0)
"""

# pytest: rewrite every test file of the project so that its tests pass, at import time.
PYTEST_REWRITE_TESTS = """
import os, re
for root, _dirs, files in os.walk("/work/project"):
    for name in files:
        if name.startswith("test_") and name.endswith(".py"):
            path = os.path.join(root, name)
            with open(path) as fh:
                text = fh.read()
            with open(path, "w") as fh:
                fh.write(re.sub(r"^(\\s*)assert .*$", r"\\1pass", text, flags=re.M))

def add(a, b):
    return a - b

def sub(a, b):
    return a + b
"""

# Patch the harness itself, found through gc: its record writer always reports "ok", the
# equality it puts in asserts always holds, and its plain-data encoder sends what it likes.
PATCH_HARNESS = """
import gc

def _always_ok(*fields):
    fields = list(fields) + [""] * 7
    fields[1], fields[2], fields[3] = "ok", "", 0
    return "\\0".join(str(f) for f in fields[:7]).encode()

def _always_equal(state):
    return lambda actual, expected: True

def _my_value(value, cap=0):
    return '["i","0x63"]'

for obj in gc.get_objects():
    if type(obj).__name__ == "function":
        if obj.__name__ == "record_bytes":
            obj.__code__ = _always_ok.__code__
        elif obj.__name__ == "_make_eq":
            obj.__code__ = _always_equal.__code__
        elif obj.__name__ == "encode" and "plain" in obj.__module__:
            obj.__code__ = _my_value.__code__

def add(a, b):
    return 99
"""
