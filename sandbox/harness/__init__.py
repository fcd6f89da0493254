"""The sandbox harness: the code that runs *inside* a sandbox container (stdlib only).

Shipped into the image as a whole package (sandbox/image.py copies every file of it, and
the image's harness-layer hash covers them all). `main` is the entry point (`run` one
job, or be PID 1: `serve` / `watchdog`), `child` the forked test process, `proc` the
process control, `project` the pytest kind, `compare` the stdio output comparison (also
used on the host). Nothing here may import the host side of `sandbox` or anything else of
Cobalt's: in the image, `sandbox/__init__.py` is an empty stub.
"""
