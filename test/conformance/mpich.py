#!/usr/bin/env python3
"""Run MPICH's MPI test suite (test/mpi) against this library.

    test/conformance/mpich.py MPICH_DIR [options]

MPICH_DIR is a checkout of MPICH (or only its test/mpi directory, or an
export of it); it is read, never changed.  The runner builds the programs of
the chosen directories with ampicc (a small build of its own: MPICH's
configure needs the whole MPICH tree), runs every entry of their testlists
with ampirun, runs every entry that did not pass again alone (but those
stopped by MPI_ERR_UNSUPPORTED_OPERATION, which fail the same way), and writes a
report (docs/conformance.md by default) plus results.json in the build
directory.

--privatize builds every object and program with `ampicc -privatize`
(each rank its own copy of the program's globals, MTest's included), as
programs that keep state in globals need under the +vp modes.

Modes (--mode): np     ampirun -np N prog            (N: the testlist's count)
                vp1    ampirun -np 1 +vp N prog
                vp2    ampirun -np 2 +vp N prog       (N >= 2; N = 1 runs -np 1)
                vp2x2  ampirun -np 2 +vp 2N prog

An entry passes as under MPICH's own runner (runtests): it prints a line
"No Errors" and exits 0, and prints nothing else (entries with resultTest=
have their own rules).  Results per entry: pass, fail, crash (killed by a
signal), timeout (also when run alone), link-fail (the program does not
build: compile or link errors), skipped (strict=false entries, which test
MPICH extensions; mem= above --mem-gb; programs strict mode does not build).

--against RESULTS names the results-MODE.json of another run (the -np mode's,
say): the report then lists every entry whose result differs between the two,
those that pass there and not here first.

A report written over a file (docs/conformance.md) keeps that file's section
"%s"
(the +vp modes' results, written by hand).
"""
import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

KEPT_SECTION = "## The same entries as user-level threads (`+vp`)"
__doc__ = __doc__ % KEPT_SECTION
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DIRS = ["pt2pt", "coll", "comm", "group", "datatype", "attr", "topo", "init", "errhan", "info"]
MTEST_SOURCES = ["mtest.c", "mtest_common.c", "mtest_single.c", "dtypes.c"]
# Testlists in MPICH name these programs; configure-time substitutions are
# not used by the directories above, so the plain and .in lists read alike.
TESTLIST_NAMES = ["testlist", "testlist.in"]

print_lock = threading.Lock()


def say(msg):
    with print_lock:
        print(msg, flush=True)


# ---------------------------------------------------------------- testlists
class Entry:
    """One testlist line: a program run with np ranks, args and env."""

    def __init__(self, directory, line, lineno):
        words = line.split()
        self.dir = directory
        self.prog = words[0]
        self.np = int(words[1]) if len(words) > 1 and words[1].isdigit() else 2
        self.args, self.env, self.opts = [], [], {}
        for w in words[2:]:
            key, _, value = w.partition("=")
            if key == "arg":
                self.args.append(value)
            elif key == "env":
                self.env.append(value)
            else:
                self.opts[key] = value
        self.lineno = lineno
        self.line = line.strip()
        self.result = None      # pass/fail/crash/timeout/link-fail/skipped
        self.detail = ""        # first error line, or why skipped
        self.first = None       # result of the parallel pass, when re-run
        self.seconds = 0.0
        self.output = ""

    @property
    def key(self):
        return "%s/%s:%d" % (self.dir, self.prog, self.lineno)

    def title(self):
        extra = " ".join(self.line.split()[2:])
        return "%s/%s %d%s" % (self.dir, self.prog, self.np, (" " + extra) if extra else "")


def read_testlist(testdir, directory):
    for name in TESTLIST_NAMES:
        path = os.path.join(testdir, directory, name)
        if os.path.exists(path):
            break
    else:
        return []
    entries = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#") or text.startswith("!"):
                continue
            if "@" in text:  # a configure substitution: not used by these directories
                continue
            entries.append(Entry(directory, text, lineno))
    return entries


# ---------------------------------------------------------- Makefile.am read
def read_makefile_am(path):
    """Programs of one directory's Makefile.am: name -> (sources, cppflags).

    Only what these Makefile.am files use is understood: noinst_PROGRAMS,
    <prog>_SOURCES, <prog>_CPPFLAGS, and `if NOT_STRICTMPI` blocks, whose
    programs a strict build leaves out."""
    text = open(path).read().replace("\\\n", " ")
    programs, strict_only_out = [], set()
    sources, cppflags = {}, {}
    cond = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            continue
        m = re.match(r"if\s+(\S+)", s)
        if m:
            cond.append(m.group(1))
            continue
        if s.startswith("else"):
            cond[-1] = "!" + cond[-1] if cond else None
            continue
        if s.startswith("endif"):
            cond.pop() if cond else None
            continue
        m = re.match(r"noinst_PROGRAMS\s*\+?=\s*(.*)", s)
        if m:
            names = m.group(1).split()
            programs += names
            if "NOT_STRICTMPI" in cond:
                strict_only_out.update(names)
            continue
        m = re.match(r"(\w+)_SOURCES\s*=\s*(.*)", s)
        if m:
            sources[m.group(1)] = m.group(2).split()
            continue
        m = re.match(r"(\w+)_CPPFLAGS\s*=\s*(.*)", s)
        if m:
            cppflags[m.group(1)] = [w for w in m.group(2).split() if not w.startswith("$(")]
    result = {}
    for p in programs:
        key = re.sub(r"[^A-Za-z0-9_]", "_", p)
        result[p] = (sources.get(key, [p + ".c"]), cppflags.get(key, []), p in strict_only_out)
    return result


# ------------------------------------------------------------------ building
def run_cmd(cmd, cwd=None, timeout=600):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else "timed out"


PROBES = {
    # name: (define, program)
    "HAVE_MPI_WIN_CREATE": "int main(void){MPI_Win w=MPI_WIN_NULL; int a=MPI_LOCK_SHARED+MPI_MODE_NOCHECK"
                           "+MPI_WIN_BASE; return MPI_Win_create(0,0,1,MPI_INFO_NULL,MPI_COMM_WORLD,&w)+a;}",
    "HAVE_MPI_IO": "int main(void){MPI_File f; return MPI_File_open(MPI_COMM_WORLD,\"x\",MPI_MODE_RDONLY,"
                   "MPI_INFO_NULL,&f);}",
    "HAVE_MPI_INTEGER16": "int main(void){return MPI_INTEGER16 == MPI_DATATYPE_NULL;}",
    "HAVE_MPI_REAL16": "int main(void){return MPI_REAL16 == MPI_DATATYPE_NULL;}",
    "HAVE_MPI_COMPLEX32": "int main(void){return MPI_COMPLEX32 == MPI_DATATYPE_NULL;}",
}


def probe_features(args, incdir):
    lines = ["/* written by test/conformance/mpich.py from probes of the installed mpi.h */"]
    tmp = os.path.join(args.build, "probe")
    os.makedirs(tmp, exist_ok=True)
    for define, body in PROBES.items():
        src = os.path.join(tmp, define + ".c")
        with open(src, "w") as f:
            f.write("#include <mpi.h>\n" + body + "\n")
        rc, _ = run_cmd(args.ampicc_cmd + ["-o", os.path.join(tmp, define), src])
        lines.append(("#define %s 1" if rc == 0 else "/* #undef %s */") % define)
    with open(os.path.join(incdir, "mpitestconf_probed.h"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return [l for l in lines if l.startswith("#define")]


def build_support(args, testdir):
    """MTest's library (mtest.c & co. and dtypes.c) and run_mpitests.o."""
    incdir = os.path.join(args.build, "include")
    os.makedirs(incdir, exist_ok=True)
    shutil.copy(os.path.join(HERE, "mpitestconf.h"), incdir)
    open(os.path.join(incdir, "mtest_mpix.h"), "w").close()  # MPICH extensions: none in strict mode
    probed = probe_features(args, incdir)
    utildir = os.path.join(args.build, "util")
    os.makedirs(utildir, exist_ok=True)
    objs = []
    for src in MTEST_SOURCES:
        obj = os.path.join(utildir, src[:-2] + ".o")
        rc, out = run_cmd(args.ampicc_cmd + cflags(args, testdir) + ["-c", "-o", obj,
                                                                   os.path.join(testdir, "util", src)])
        if rc != 0:
            sys.exit("cannot build MTest's %s:\n%s" % (src, out))
        objs.append(obj)
    objs += build_dtpools(args, testdir, utildir)
    lib = os.path.join(utildir, "libmtest.a")
    if os.path.exists(lib):
        os.remove(lib)
    rc, out = run_cmd(["ar", "rcs", lib] + objs)
    if rc != 0:
        sys.exit("ar failed:\n" + out)
    runobj = os.path.join(utildir, "run_mpitests.o")
    rc, out = run_cmd(args.ampicc_cmd + cflags(args, testdir) +
                      ["-c", "-o", runobj, os.path.join(testdir, "util", "run_mpitests.c")])
    if rc != 0:
        sys.exit("cannot build run_mpitests.c:\n" + out)
    return lib, runobj, probed


def build_dtpools(args, testdir, utildir):
    """MPICH's datatype pools (dtpools/, used through mtest_dtp.h by a few
    programs of the regular testlists, e.g. pt2pt/sendself).  Its headers
    include "../dtpoolsconf.h", which MPICH's configure writes: they are
    copied into the build directory beside one written here, so the MPICH
    tree is only read."""
    srcdir = os.path.join(testdir, "dtpools", "src")
    if not os.path.isdir(srcdir):
        return []
    top = os.path.join(args.build, "dtpools")
    inc = os.path.join(top, "include")
    os.makedirs(inc, exist_ok=True)
    for h in os.listdir(os.path.join(testdir, "dtpools", "include")):
        shutil.copy(os.path.join(testdir, "dtpools", "include", h), inc)
    with open(os.path.join(top, "dtpoolsconf.h"), "w") as f:
        for name in ["STDLIB_H", "STRING_H", "LIMITS_H", "STDINT_H", "SYS_TYPES_H", "STRDUP", "MEMSET"]:
            f.write("#define HAVE_%s 1\n" % name)
    objs = []
    for src in sorted(os.listdir(srcdir)):
        if not src.endswith(".c"):
            continue
        obj = os.path.join(utildir, "dtp_" + src[:-2] + ".o")
        rc, out = run_cmd(args.ampicc_cmd + ["-I" + inc] + cflags(args, testdir) +
                          ["-c", "-o", obj, os.path.join(srcdir, src)])
        if rc != 0:
            sys.exit("cannot build dtpools' %s:\n%s" % (src, out))
        objs.append(obj)
    return objs


def cflags(args, testdir):
    return ["-O1", "-g", "-w", "-I" + os.path.join(args.build, "include"),
            "-I" + os.path.join(testdir, "include"), "-I" + os.path.join(testdir, "dtpools", "include")]


UNDEF_RE = re.compile(r"undefined reference to [`'](\w+)'")
UNDECL_RE = re.compile(r"[‘'`](\w+)['’] undeclared")
IMPLICIT_RE = re.compile(r"implicit declaration of function [‘'`](\w+)['’]")
UNKNOWN_TYPE_RE = re.compile(r"unknown type name [‘'`](\w+)['’]")


def first_error(out):
    for line in out.splitlines():
        if "error" in line.lower() or "undefined reference" in line:
            return line.strip()
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[0].strip() if lines else ""


def build_program(args, testdir, directory, prog, info, lib, runobj):
    """Compile and link one program; returns (ok, missing names, first error)."""
    srcs, extra, _ = info
    outdir = os.path.join(args.build, directory)
    exe = os.path.join(outdir, prog)
    paths = [os.path.join(testdir, directory, s) for s in srcs]
    if args.no_rebuild and os.path.exists(exe):
        return True, [], ""
    text = ""
    for p in paths:
        try:
            text += open(p, errors="replace").read()
        except OSError:
            return False, [], "missing source " + p
    needs_runner = not re.search(r"\bmain\s*\(", text)
    cmd = args.ampicc_cmd + cflags(args, testdir) + extra + ["-o", exe] + paths
    if needs_runner:
        cmd.append(runobj)
    cmd += [lib, "-lm"]
    if os.path.exists(exe):
        os.remove(exe)
    rc, out = run_cmd(cmd, cwd=outdir)
    if rc == 0:
        return True, [], ""
    missing = set(UNDEF_RE.findall(out)) | set(UNDECL_RE.findall(out)) | set(UNKNOWN_TYPE_RE.findall(out))
    missing |= {f for f in IMPLICIT_RE.findall(out) if f.startswith(("MPI_", "PMPI_"))}
    missing = sorted(m for m in missing if m.startswith(("MPI_", "PMPI_", "MPIX_")))
    with open(exe + ".build.log", "w") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + out)
    return False, missing, first_error(out)


# ------------------------------------------------------------------- running
def run_entry(args, entry):
    """Run one entry with ampirun; sets entry.result/detail/output."""
    np_, vp = placement(args.mode, entry.np)
    # the testlist's own limit where it gives one (MPICH's runner uses it the
    # same way: some entries test that a hung program is ended)
    timeout = args.timeout
    if entry.opts.get("timeLimit", "").isdigit():
        timeout = int(entry.opts["timeLimit"])
    exe = os.path.join(args.build, entry.dir, entry.prog)
    cmd = [args.ampirun, "-np", str(np_)]
    if vp:
        cmd += ["+vp", str(vp)]
    cmd += ["--timeout", str(timeout), exe] + entry.args
    env = dict(os.environ)
    for e in entry.env:
        k, _, v = e.partition("=")
        env[k] = v
    t0 = time.time()
    try:
        p = subprocess.Popen(cmd, cwd=os.path.dirname(exe), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env, text=True, errors="replace",
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout + 30)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            rc = 124
    except OSError as e:
        out, rc = str(e), 127
    entry.seconds = time.time() - t0
    entry.output = out
    entry.result, entry.detail = judge(entry, rc, out)


def placement(mode, n):
    if mode == "np":
        return n, 0
    if mode == "vp1":
        return 1, n
    if mode == "vp2":
        return (2, n) if n >= 2 else (1, n)
    if mode == "vp2x2":
        return 2, 2 * n
    raise ValueError(mode)


NOISE_RE = re.compile(r"^(FORTRAN STOP|requesting checkpoint|checkpoint completed)")
LAUNCHER_RE = re.compile(r"^ampirun: ")


def judge(entry, rc, out):
    lines = out.splitlines()
    no_errors = any(re.match(r"^\s*No [Ee]rrors\s*$", l) for l in lines)
    skipped = any(re.match(r"^\s*Test Skipped\s*$", l) for l in lines)
    # ampirun's own lines about how the job ended are not the program's output
    stray = [l for l in lines if l.strip() and not re.match(r"^\s*(No [Ee]rrors|Test Skipped)\s*$", l)
             and not NOISE_RE.match(l) and not LAUNCHER_RE.match(l)]
    rule = entry.opts.get("resultTest", "")
    signal_kill = re.search(r"killed by signal (\d+)", out)
    # entries that must end with a non-zero status (an abort, an error
    # handler that ends the job, a hang the launcher ends) pass on any of them
    if rule in ("TestStatus", "TestErrFatal"):
        if rc != 0 and not signal_kill:
            return "pass", ""
        return ("crash" if signal_kill else "fail"), "exit status 0, expected non-zero" if rc == 0 else \
            first_line(stray) or signal_kill.group(0)
    if rc == 124 or re.search(r"job timed out after", out):
        return "timeout", first_line(stray) or "no output"
    # ampirun exits with 128 + the signal that killed a process
    crashed = signal_kill or rc < 0 or 128 < rc < 128 + 65
    if rule == "TestStatusNoErrors":
        if no_errors and rc != 0 and not stray:
            return "pass", ""
        return "fail", first_line(stray) or "status %d" % rc
    if crashed:
        why = signal_kill.group(0) if signal_kill else "exit status %d" % rc
        return "crash", (first_line(error_lines(stray)) or why)
    allowed = stray
    if rule == "TestAllowWarnings":
        allowed = [l for l in stray if not re.match(r"^(WARNING: |MPICH: )", l)]
    if (no_errors or skipped) and rc == 0 and not allowed:
        return ("skipped" if skipped and not no_errors else "pass"), ("test says: Test Skipped" if skipped else "")
    if rc == 0 and no_errors:
        return "fail", "extra output: " + first_line(allowed)
    if rc == 0:
        return "fail", first_line(error_lines(stray)) or "exit 0 without \"No Errors\""
    return "fail", first_line(error_lines(stray)) or ("exit status %d" % rc)


def error_lines(lines):
    """Lines that explain a failure come first: errors named by the library."""
    key = [l for l in lines if re.search(r"MPI_ERR|error|Error|ERROR|fail|Assert|abort", l)]
    return key or lines


def first_line(lines):
    for l in lines:
        if l.strip():
            s = l.strip()
            return s if len(s) <= 240 else s[:237] + "..."
    return ""


# ------------------------------------------------------------------- report
CATEGORIES = ["pass", "fail", "crash", "timeout", "link-fail", "skipped"]
UNSUPPORTED_RE = re.compile(r"(\bMPI_\w+)[^\n]*?(MPI_ERR_UNSUPPORTED_OPERATION|not supported|unsupported)", re.I)
UNSUPPORTED_RE2 = re.compile(r"(MPI_ERR_UNSUPPORTED_OPERATION|not supported|unsupported)[^\n]*?(\bMPI_\w+)", re.I)


def unsupported_function(entry):
    """The MPI function that stopped an entry with MPI_ERR_UNSUPPORTED_OPERATION, if any."""
    for line in entry.output.splitlines():
        if "MPI_ERR_UNSUPPORTED_OPERATION" not in line and "unsupported" not in line.lower():
            continue
        names = [n for n in re.findall(r"\b(MPI_[A-Z][a-z]\w*)", line)]
        if names:
            return names[0]
    return None


def git(cwd, *a):
    rc, out = run_cmd(["git", "-C", cwd] + list(a))
    return out.strip() if rc == 0 else ""


def mpich_commit(args):
    for d in (args.mpich, os.path.dirname(os.path.dirname(args.testdir))):
        c = git(d, "rev-parse", "HEAD")
        if c:
            return c
        f = os.path.join(d, "COMMIT")
        if os.path.exists(f):
            return open(f).read().split()[0]
    return args.mpich_commit or "unknown"


def against_lines(args, entries):
    """The entries whose result differs from the run in args.against."""
    with open(args.against) as f:
        there = {r["entry"]: r["result"] for r in json.load(f)}
    label = os.path.basename(args.against)
    m = re.match(r"results-(\w+)\.json$", label)
    label = "`--mode %s`" % m.group(1) if m else "`%s`" % label
    worse = [e for e in entries if there.get(e.title()) == "pass" and e.result != "pass"]
    other = [e for e in entries if e.title() in there and there[e.title()] != e.result and e not in worse]
    absent = [e for e in entries if e.title() not in there]
    out = ["## Against %s" % label, ""]
    out.append("%d entries pass with %s and not here; %d more have another result there; %d did not run there."
               % (len(worse), label, len(other), len(absent)))
    if worse or other:
        out += ["", "| entry | there | here | first error line here |", "|---|---|---|---|"]
        for e in worse + other:
            detail = e.detail.replace("|", "\\|").replace("`", "'")
            out.append("| `%s` | %s | %s | %s |" % (e.title(), there[e.title()], e.result, detail))
    out.append("")
    return out


def kept_section(path):
    """The hand-kept +vp section of an existing report, from its heading to the next '## '."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().split("\n")
    if KEPT_SECTION not in lines:
        return []
    start = lines.index(KEPT_SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[start:end]
    while section and not section[-1].strip():
        section.pop()
    return section + [""]


def write_report(args, entries, built, missing_by, probed, started, wall):
    counts = collections.OrderedDict((d, collections.Counter()) for d in args.dirs)
    for e in entries:
        counts[e.dir][e.result] += 1
    tot = collections.Counter()
    for c in counts.values():
        tot.update(c)
    n = len(entries)
    ran = n - tot["skipped"]
    ours, dirty = args.ours, args.dirty
    np_desc = {"np": "`ampirun -np N`", "vp1": "`ampirun -np 1 +vp N`", "vp2": "`ampirun -np 2 +vp N`",
               "vp2x2": "`ampirun -np 2 +vp 2N`"}[args.mode]
    out = []
    w = out.append
    w("# MPICH test suite conformance (%s%s)" % (args.mode, ", privatized" if args.privatize else ""))
    w("")
    w("Written by `test/conformance/mpich.py` (read it for how entries are built, run and judged).")
    w("")
    w("- Date: %s UTC; run took %.0f min" % (started.strftime("%Y-%m-%d %H:%M"), wall / 60))
    w("- This library: commit `%s`%s" % (ours, " with uncommitted changes" if dirty else ""))
    w("- MPICH `test/mpi`: commit `%s`" % mpich_commit(args))
    w("- Machine: %s, %d CPUs; %d entries at a time, then every entry that did not pass again alone (but those "
      "stopped by `MPI_ERR_UNSUPPORTED_OPERATION`)" % (platform.machine(), os.cpu_count() or 0, args.jobs))
    w("- Runs: %s (N: the entry's process count), `--timeout %d` (the testlist's `timeLimit=` where it "
      "gives one), entries asking for more than %g GB (`mem=`) skipped" % (np_desc, args.timeout, args.mem_gb))
    if args.privatize:
        w("- Built with `ampicc -privatize` (MTest's library too): every rank has its own globals")
    w("- Probed in mpi.h: %s" % (", ".join(p.split()[1] for p in probed) or "none of " + ", ".join(PROBES)))
    w("")
    w("**%d of %d entries pass (%.1f %%); %d of the %d entries that ran (%.1f %%).**" %
      (tot["pass"], n, 100.0 * tot["pass"] / max(n, 1), tot["pass"], ran, 100.0 * tot["pass"] / max(ran, 1)))
    w("")
    inter = sum(1 for e in entries if e.result in ("fail", "crash", "timeout")
                and unsupported_function(e) in ("MPI_Intercomm_create", "MPI_Intercomm_merge"))
    w("Entries stopped by intercommunicators (`MPI_Intercomm_create`/`merge` unsupported): %d." % inter)
    w("")
    w("| directory | entries | " + " | ".join(CATEGORIES) + " | pass % |")
    w("|---|---:|" + "---:|" * len(CATEGORIES) + "---:|")
    for d, c in counts.items():
        total = sum(c.values())
        w("| %s | %d | %s | %.0f |" % (d, total, " | ".join(str(c[k]) for k in CATEGORIES),
                                     100.0 * c["pass"] / max(total, 1)))
    w("| **all** | %d | %s | %.1f |" % (n, " | ".join(str(tot[k]) for k in CATEGORIES),
                                       100.0 * tot["pass"] / max(n, 1)))
    w("")
    flaky = [e for e in entries if e.first and e.first != e.result]
    if flaky:
        w("%d entries changed result when run alone (counted as run alone): %s." %
          (len(flaky), ", ".join("%s (%s, then %s)" % (e.title(), e.first, e.result) for e in flaky)))
        w("")
    # what stops entries
    w("## Missing from mpi.h or the library, by entries blocked")
    w("")
    # PMPI_x is missing exactly when MPI_x is: one row
    merged = collections.defaultdict(set)
    for name, keys in missing_by.items():
        merged[name[1:] if name.startswith("PMPI_") else name] |= keys
    if merged:
        w("| name | entries blocked |")
        w("|---|---:|")
        for name, keys in sorted(merged.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            w("| `%s` | %d |" % (name, len(keys)))
    else:
        w("Every program builds.")
    w("")
    stops = collections.Counter()
    for e in entries:
        if e.result in ("fail", "crash", "timeout"):
            f = unsupported_function(e)
            if f:
                stops[f] += 1
    w("## Unsupported functions that stop running entries (`MPI_ERR_UNSUPPORTED_OPERATION`)")
    w("")
    if stops:
        w("| function | entries stopped |")
        w("|---|---:|")
        for f, k in stops.most_common():
            w("| `%s` | %d |" % (f, k))
    else:
        w("None.")
    w("")
    w("## Entries that do not pass")
    w("")
    w("| entry | result | first error line |")
    w("|---|---|---|")
    for e in entries:
        if e.result != "pass":
            detail = e.detail.replace("|", "\\|").replace("`", "'")
            w("| `%s` | %s | %s |" % (e.title(), e.result, detail))
    w("")
    if args.against:
        out += against_lines(args, entries)
    out += kept_section(args.report)
    os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
    with open(args.report, "w") as f:
        f.write("\n".join(out))
    say("report: %s" % args.report)
    return tot, n


# --------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mpich", help="MPICH source tree, or its test/mpi directory")
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS), help="comma list of test/mpi directories")
    ap.add_argument("--only", default="", help="comma list of programs (dir/prog or prog) to build and run")
    ap.add_argument("--mode", default="np", choices=["np", "vp1", "vp2", "vp2x2"])
    ap.add_argument("--privatize", action="store_true", help="build everything with `ampicc -privatize` "
                                                             "(every rank gets its own globals)")
    ap.add_argument("--prefix", default=os.path.join(REPO, ".prefix"), help="install holding bin/ampicc")
    ap.add_argument("--build", default=None, help="build directory (default .build/conformance)")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="builds and runs at a time")
    ap.add_argument("--timeout", type=int, default=180, help="seconds an entry may run (ampirun --timeout; "
                                                          "180 as in MPICH's runtests)")
    ap.add_argument("--mem-gb", type=float, default=4.0, help="skip entries whose mem= is larger")
    ap.add_argument("--no-rerun", action="store_true", help="do not run non-passing entries again alone")
    ap.add_argument("--no-rebuild", action="store_true", help="keep programs already built")
    ap.add_argument("--report", default=None, help="markdown report (default docs/conformance.md; "
                                                   "with --mode other than np, docs/conformance-MODE.md)")
    ap.add_argument("--against", default=None, help="results-MODE.json of another run: list the entries "
                                                    "whose result differs")
    ap.add_argument("--mpich-commit", default="", help="commit to name when MPICH_DIR is no git tree")
    ap.add_argument("--list", action="store_true", help="only print the entries")
    args = ap.parse_args()

    args.mpich = os.path.abspath(args.mpich)
    args.testdir = args.mpich
    for cand in (os.path.join(args.mpich, "test", "mpi"), args.mpich):
        if os.path.exists(os.path.join(cand, "util", "mtest.c")):
            args.testdir = cand
            break
    else:
        sys.exit("%s: no test/mpi/util/mtest.c there" % args.mpich)
    args.dirs = [d for d in args.dirs.split(",") if d]
    args.build = os.path.abspath(args.build or os.path.join(REPO, ".build", "conformance"))
    args.ampicc = os.path.join(args.prefix, "bin", "ampicc")
    args.ampicc_cmd = [args.ampicc] + (["-privatize"] if args.privatize else [])
    args.ampirun = os.path.join(args.prefix, "bin", "ampirun")
    if not args.report:
        name = "conformance.md" if args.mode == "np" else "conformance-%s.md" % args.mode
        if args.privatize:
            name = name[:-3] + "-privatized.md"
        args.report = os.path.join(REPO, "docs", name)
    only = set(o for o in args.only.split(",") if o)
    for tool in (args.ampicc, args.ampirun):
        if not os.access(tool, os.X_OK):
            sys.exit("%s missing: build and install first (./setup.sh)" % tool)

    entries = []
    for d in args.dirs:
        for e in read_testlist(args.testdir, d):
            if not only or e.prog in only or "%s/%s" % (d, e.prog) in only:
                entries.append(e)
    if args.list:
        for e in entries:
            print(e.title())
        return 0
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.time()
    # the tree the installed library was built from, as it is when the run starts
    args.ours = git(REPO, "rev-parse", "--short=12", "HEAD")
    args.dirty = git(REPO, "status", "--porcelain", "--untracked-files=no")

    # ---- build
    say("building MTest support in %s" % args.build)
    lib, runobj, probed = build_support(args, args.testdir)
    programs = {}
    for d in args.dirs:
        os.makedirs(os.path.join(args.build, d), exist_ok=True)
        mk = os.path.join(args.testdir, d, "Makefile.am")
        programs[d] = read_makefile_am(mk) if os.path.exists(mk) else {}
    wanted = sorted({(e.dir, e.prog) for e in entries})
    built = {}

    def build_one(dp):
        d, p = dp
        info = programs[d].get(p)
        if info is None:
            return dp, ("absent", [], "no such program in %s/Makefile.am" % d)
        if info[2]:
            return dp, ("strict", [], "built only without strict MPI (MPICH extensions)")
        ok, missing, err = build_program(args, args.testdir, d, p, info, lib, runobj)
        return dp, ("ok" if ok else "fail", missing, err)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for i, (dp, res) in enumerate(pool.map(build_one, wanted), 1):
            built[dp] = res
            if res[0] != "ok":
                say("[build %d/%d] %s/%s: %s %s" % (i, len(wanted), dp[0], dp[1], res[0], res[2][:160]))
    missing_by = collections.defaultdict(set)
    runnable = []
    for e in entries:
        state, missing, err = built[(e.dir, e.prog)]
        mem = e.opts.get("mem")
        if e.opts.get("strict", "").lower() == "false":
            e.result, e.detail = "skipped", "strict=false: tests an MPICH extension"
        elif mem and float(mem) > args.mem_gb:
            e.result, e.detail = "skipped", "needs %s GB (mem=), above --mem-gb %g" % (mem, args.mem_gb)
        elif state in ("strict", "absent"):
            e.result, e.detail = "skipped", err
        elif state == "fail":
            e.result = "link-fail"
            e.detail = ("missing: " + ", ".join(missing)) if missing else err
            for m in missing:
                missing_by[m].add(e.key)
        else:
            runnable.append(e)

    # ---- run
    say("running %d entries, %d at a time (mode %s)" % (len(runnable), args.jobs, args.mode))
    done = [0]

    def run_one(e):
        run_entry(args, e)
        done[0] += 1
        say("[%d/%d] %-8s %5.1fs %s%s" % (done[0], len(runnable), e.result, e.seconds, e.title(),
                                          ("  -- " + e.detail) if e.result != "pass" else ""))

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run_one, runnable))
    if not args.no_rerun:
        # An entry stopped by MPI_ERR_UNSUPPORTED_OPERATION fails the same way alone.
        again = [e for e in runnable if e.result not in ("pass", "skipped") and not unsupported_function(e)]
        say("running %d entries that did not pass again, alone" % len(again))
        done[0] = 0
        runnable_count = len(again)
        for e in again:
            e.first = e.result
            run_entry(args, e)
            done[0] += 1
            say("[alone %d/%d] %-8s %5.1fs %s%s" % (done[0], runnable_count, e.result, e.seconds, e.title(),
                                                    ("  -- " + e.detail) if e.result != "pass" else ""))
    wall = time.time() - t0

    # ---- results
    with open(os.path.join(args.build, "results-%s.json" % args.mode), "w") as f:
        json.dump([{"entry": e.title(), "key": e.key, "result": e.result, "first": e.first,
                    "detail": e.detail, "seconds": round(e.seconds, 1), "output": e.output[-4000:]}
                   for e in entries], f, indent=1)
    tot, n = write_report(args, entries, built, missing_by, probed, started, wall)
    say("%d of %d entries pass (%.1f %%): %s" % (tot["pass"], n, 100.0 * tot["pass"] / max(n, 1),
                                               ", ".join("%d %s" % (tot[k], k) for k in CATEGORIES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
