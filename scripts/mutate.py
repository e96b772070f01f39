#!/usr/bin/env python3
"""Mutation testing of Lockstep's tests (issue 40, "test strength"): small source changes from a list
(scripts/mutants.toml), applied one at a time, each run against the tests that should catch it.

    scripts/mutate.py --list                      # the mutants: id, area, file, what each simulates
    scripts/mutate.py --check                     # every snippet occurs exactly once (fast, no build)
    scripts/mutate.py                             # run them all (C++ builds: hours on a small machine)
    scripts/mutate.py --area tasks --area studies # or by area, --id ID (repeatable), --kind python|cpp

Each mutant replaces one snippet, which must occur exactly once in its file, and names its catchers:
ctest regular expressions (one ctest test per GoogleTest test, `ctest -R`) and/or pytest node ids or
files under python/tests. The run happens in a separate checkout, so that the developer's tree is
never left mutated: a detached git worktree of REV (default HEAD) at <repo>/../<repo-name>-mutants
with its own build directory configured as scripts/build.sh configures one (Ninja, ccache, Release).
For each mutant the runner applies it, builds only the test programs its ctest catchers live in
(found from the cmake files and the tests' sources), runs its tests with a timeout and restores the
file (git checkout) -- also on Ctrl-C or an error. A build that fails is "did not compile" (not
counted), a failing or timed-out test "caught", all passing "survived".

Python mutants (python/lockstep/*.py) run pytest with PYTHONPATH pointing first at a temporary
overlay: a copy of the installed package (the --python interpreter's `lockstep`, by default the
project's .venv) with the checkout's python/lockstep/*.py, mutated, placed over it. A C++ mutant with
pytest catchers also rebuilds the module (target _ext, in a second build directory configured with
-DLOCKSTEP_PYTHON=ON) and puts the built _ext*.so in the overlay.

Before the mutants, the catchers of the chosen mutants run once unmutated (the baseline: a catcher
that fails without a mutant would "catch" everything); --no-baseline skips that. The report
(Markdown: id, area, what it does, result, the catching test or "survived", seconds) goes to
<workdir>/mutation-report.md, each mutant's log to <workdir>/mutation-logs/<id>.log, and the kill
ratio, caught / (caught + survived), is printed at the end. Not part of CI. Python 3.11, stdlib only.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
AREAS = ("physics", "mjcf", "sensors", "tasks", "studies", "derivatives")
CAUGHT, SURVIVED, NO_COMPILE, ERROR, REFUSED = "caught", "survived", "did not compile", "error", "refused"


# ---- the list ------------------------------------------------------------------------------------

@dataclass
class Mutant:
    id: str
    area: str
    file: str
    what: str
    find: str
    replace: str
    ctest: list[str] = field(default_factory=list)
    pytest: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def python(self) -> bool:
        return self.file.endswith(".py")


def load_mutants(path: Path) -> list[Mutant]:
    """The mutants of the TOML file, checked for what can be checked without the sources."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    problems, mutants, seen = [], [], set()
    known = {"id", "area", "file", "what", "find", "replace", "ctest", "pytest", "note"}
    for i, entry in enumerate(data.get("mutant", [])):
        label = entry.get("id", f"mutant #{i + 1}")
        unknown = sorted(set(entry) - known)
        missing = [k for k in ("id", "area", "file", "what", "find", "replace") if not entry.get(k)]
        if unknown or missing:
            problems.append(f"{label}: " + "; ".join(
                ([f"unknown keys {', '.join(unknown)}"] if unknown else []) +
                ([f"missing {', '.join(missing)}"] if missing else [])))
            continue
        m = Mutant(**{k: entry.get(k, v) for k, v in
                      (("id", ""), ("area", ""), ("file", ""), ("what", ""), ("find", ""), ("replace", ""),
                       ("ctest", []), ("pytest", []), ("note", ""))})
        if m.id in seen:
            problems.append(f"{m.id}: the id is used twice")
        seen.add(m.id)
        if m.area not in AREAS:
            problems.append(f"{m.id}: area {m.area!r} is not one of {', '.join(AREAS)}")
        if m.find == m.replace:
            problems.append(f"{m.id}: the replacement equals the snippet")
        if not m.ctest and not m.pytest:
            problems.append(f"{m.id}: no catcher (ctest or pytest)")
        if m.python and (m.ctest or not m.file.startswith("python/lockstep/")):
            problems.append(f"{m.id}: a Python mutant is of python/lockstep/*.py and has pytest catchers only")
        for rx in m.ctest:
            try:
                re.compile(rx)
            except re.error as e:
                problems.append(f"{m.id}: ctest regex {rx!r}: {e}")
            if rx.count("(") - rx.count("\\(") > 9:
                problems.append(f"{m.id}: ctest regex {rx!r} has more than 9 groups (CMake's limit)")
        mutants.append(m)
    if problems:
        raise SystemExit(f"{path}:\n  " + "\n  ".join(problems))
    return mutants


def occurrences(text: str, snippet: str) -> int:
    return text.count(snippet)


def snippet_problem(m: Mutant, text: str | None) -> str:
    """Why mutant m cannot be applied to this text of its file ("" when it can)."""
    if text is None:
        return f"{m.id}: {m.file} does not exist"
    n = occurrences(text, m.find)
    if n == 0:
        return f"{m.id}: its snippet is not in {m.file}"
    if n > 1:
        return f"{m.id}: its snippet is ambiguous: it occurs {n} times in {m.file}"
    return ""


# ---- where the tests live (static: the cmake files and the tests' sources) -----------------------

def test_programs(root: Path) -> dict[str, str]:
    """Every GoogleTest test name the sources define ("Suite.Name", "Prefix/Suite.Name/" for the
    value-parameterized ones) -> the test program (cmake target) that holds it."""
    cmake_files = [root / "CMakeLists.txt", *sorted((root / "cmake").glob("*.cmake"))]
    sources: dict[str, set[str]] = {}
    block = re.compile(r"\b(add_executable|target_sources)\(\s*([A-Za-z0-9_]+)([^)]*)\)", re.S)
    for cf in cmake_files:
        if not cf.is_file():
            continue
        for _, target, body in block.findall(cf.read_text()):
            for token in body.split():
                token = token.replace("${PROJECT_SOURCE_DIR}/", "").replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
                if token.endswith((".cpp", ".cu")) and (root / token).is_file():
                    sources.setdefault(target, set()).add(token)
    test_rx = re.compile(r"^\s*(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)
    inst_rx = re.compile(r"INSTANTIATE_TEST_SUITE_P\(\s*(\w+)\s*,\s*(\w+)")
    names: dict[str, str] = {}
    for target, files in sources.items():
        for f in sorted(files):
            text = (root / f).read_text(errors="replace")
            prefixes: dict[str, list[str]] = {}
            for prefix, suite in inst_rx.findall(text):
                prefixes.setdefault(suite, []).append(prefix)
            for kind, suite, name in test_rx.findall(text):
                if kind == "TEST_P":
                    for prefix in prefixes.get(suite, []):
                        names[f"{prefix}/{suite}.{name}/"] = target
                else:
                    names[f"{suite}.{name}"] = target
    return names


def programs_of(m: Mutant, index: dict[str, str]) -> tuple[set[str], list[str]]:
    """The test programs mutant m's ctest regexes select, and the regexes that select no test."""
    targets, unmatched = set(), []
    for rx in m.ctest:
        hit = {t for name, t in index.items() if re.search(rx, name)}
        if not hit:
            unmatched.append(rx)
        targets |= hit
    return targets, unmatched


def ctest_chunks(regexes: list[str]) -> list[list[str]]:
    """The regexes in groups that ctest's -R takes as one alternation: CMake's regular expressions
    hold at most 9 parenthesized groups, and are kept short here."""
    chunks, groups, size = [[]], 0, 0
    for rx in regexes:
        g = rx.count("(") - rx.count("\\(")
        if chunks[-1] and (groups + g > 9 or size + len(rx) > 2000):
            chunks.append([])
            groups, size = 0, 0
        chunks[-1].append(rx)
        groups, size = groups + g, size + len(rx) + 1
    return [c for c in chunks if c]


def pytest_file(node: str) -> str:
    return node.split("::", 1)[0]


# ---- processes -----------------------------------------------------------------------------------

class Interrupted(Exception):
    """Ctrl-C or SIGTERM: raised at once, or, while a mutated file is being restored, right after."""


_signals = {"deferred": False, "pending": False}


def _on_signal(*_):
    if _signals["deferred"]:
        _signals["pending"] = True
        return
    raise Interrupted()


class restoring:
    """A block that Ctrl-C and SIGTERM do not cut short (the interrupt is raised after it)."""

    def __enter__(self):
        _signals["deferred"] = True

    def __exit__(self, *exc):
        _signals["deferred"] = False
        if _signals["pending"] and exc[0] is None:
            _signals["pending"] = False
            raise Interrupted()
        return False


def run(cmd: list[str], log, *, cwd: Path, env: dict | None = None, timeout: float | None = None) -> tuple[int, str, bool]:
    """Runs cmd in its own process group, appending its output to the log file; returns (exit
    status, output, timed out). On a timeout or Ctrl-C the group it started is ended, by its id."""
    log.write(f"\n$ {shlex.join(cmd)}\n")
    log.flush()
    with tempfile.TemporaryFile(mode="w+", errors="replace") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop_group(proc)
        except BaseException:
            stop_group(proc)
            raise
        out.seek(0)
        text = out.read()
    log.write(text)
    log.write(f"[exit {proc.returncode}{', timed out' if timed_out else ''}]\n")
    log.flush()
    return proc.returncode, text, timed_out


def stop_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def git(repo: Path, *args: str, check: bool = True) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


def file_at(repo: Path, rev: str, path: str) -> str | None:
    r = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True)
    return r.stdout.decode() if r.returncode == 0 else None


# ---- the runner ----------------------------------------------------------------------------------

@dataclass
class Outcome:
    mutant: Mutant
    result: str
    by: str = ""
    seconds: float = 0.0
    detail: str = ""


class Runner:
    def __init__(self, args, repo: Path, mutants: list[Mutant]):
        self.args, self.repo, self.mutants = args, repo, mutants
        common = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        self.main_tree = common.parent  # the main worktree: its .venv and build, when this one has none
        self.work = Path(args.workdir).resolve() if args.workdir else repo.parent / f"{repo.name}-mutants"
        self.build = Path(args.build_dir).resolve() if args.build_dir else self.work / "build"
        self.ext_build = Path(args.ext_build_dir).resolve() if args.ext_build_dir else self.work / "build-python" / "mutants"
        self.logs = self.work / "mutation-logs"
        self.report = Path(args.report).resolve() if args.report else self.work / "mutation-report.md"
        self.python = self._find_python()
        self.env = dict(os.environ)
        if not shutil.which("nvcc", path=self.env.get("PATH")) and Path("/usr/local/cuda/bin/nvcc").is_file():
            self.env["PATH"] = "/usr/local/cuda/bin:" + self.env.get("PATH", "")
        self.outcomes: list[Outcome] = []
        self.started = time.time()
        self.commit = ""
        self.package: Path | None = None
        self.configured: set[Path] = set()

    # -- set-up --
    def _find_python(self) -> str:
        if self.args.python:
            return self.args.python
        for base in (self.repo, self.main_tree):
            p = base / ".venv" / "bin" / "python"
            if p.is_file():
                return str(p)
        return sys.executable

    def cli(self) -> str:
        """The command line the pytest catchers of a Python mutant use (conftest.cli_path)."""
        if self.args.cli:
            return self.args.cli
        if os.environ.get("LOCKSTEP_CLI"):
            return os.environ["LOCKSTEP_CLI"]
        for base in (self.repo, self.main_tree):
            p = base / "build" / "lockstep"
            if p.is_file():
                return str(p)
        return ""

    def prepare_worktree(self) -> None:
        rev = git(self.repo, "rev-parse", "--verify", f"{self.args.rev}^{{commit}}")
        if self.work.exists():
            theirs = git(self.work, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
            ours = git(self.repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
            if not theirs or Path(theirs) != Path(ours):
                raise SystemExit(f"{self.work} exists and is not a worktree of {self.repo}: give --workdir")
            # Ours: back to REV, whatever a run that was killed left in it.
            git(self.work, "checkout", "--quiet", "--force", "--detach", rev)
        else:
            git(self.repo, "worktree", "add", "--quiet", "--detach", str(self.work), rev)
        self.commit = rev
        self.logs.mkdir(parents=True, exist_ok=True)
        print(f"mutants checkout: {self.work} at {rev[:12]}")

    def configure(self, build: Path, extra: list[str], log) -> bool:
        if build in self.configured or (build / "CMakeCache.txt").is_file():
            self.configured.add(build)
            return True
        cmd = ["cmake", "-S", str(self.work), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        cmd += extra + list(self.args.cmake_arg)
        print(f"configuring {build}")
        rc, _, _ = run(cmd, log, cwd=self.work, env=self.env, timeout=self.args.build_timeout)
        if rc == 0:
            self.configured.add(build)
        return rc == 0

    def ext_configure_args(self) -> list[str]:
        return ["-DLOCKSTEP_PYTHON=ON", f"-DPython_EXECUTABLE={self.python}", "-DLOCKSTEP_BUILD_TESTS=OFF",
                "-DLOCKSTEP_BUILD_BENCH=OFF", "-DLOCKSTEP_SIMBODY_ORACLE=OFF"]

    def build_targets(self, build: Path, targets: list[str], log) -> bool:
        cmd = ["cmake", "--build", str(build), "--parallel", str(self.args.jobs), "--target", *sorted(targets)]
        rc, _, timed_out = run(cmd, log, cwd=self.work, env=self.env, timeout=self.args.build_timeout)
        return rc == 0 and not timed_out

    def installed_package(self) -> Path:
        if self.package:
            return self.package
        if self.args.package:
            self.package = Path(self.args.package).resolve()
        else:
            code = "import importlib.util as u; s = u.find_spec('lockstep'); print(s.submodule_search_locations[0])"
            r = subprocess.run([self.python, "-I", "-c", code], capture_output=True, text=True, cwd="/")
            if r.returncode != 0:
                raise SystemExit(f"{self.python} has no installed lockstep package (scripts/python.sh installs it; "
                                 f"or give --package DIR): {r.stderr.strip()}")
            self.package = Path(r.stdout.strip())
        if not any(self.package.glob("_ext*.so")):
            raise SystemExit(f"{self.package}: no _ext*.so: not an installed lockstep package")
        return self.package

    def overlay(self, ext_so: Path | None) -> Path:
        """A temporary copy of the installed package with the checkout's python/lockstep/*.py (and a
        rebuilt _ext) over it; returns the directory to put first on PYTHONPATH."""
        top = Path(tempfile.mkdtemp(prefix="lockstep-mutant-"))
        pkg = top / "lockstep"
        shutil.copytree(self.installed_package(), pkg, ignore=shutil.ignore_patterns("__pycache__"))
        for py in (self.work / "python" / "lockstep").glob("*.py"):
            shutil.copy2(py, pkg / py.name)
        if ext_so is not None:
            for old in pkg.glob("_ext*.so"):
                old.unlink()
            shutil.copy2(ext_so, pkg / ext_so.name)
        return top

    # -- running catchers --
    def run_ctest(self, regexes: list[str], log) -> tuple[str, str]:
        """(result, failing test) of the ctest catchers, in as few ctest runs as CMake's regular
        expressions allow (at most 9 groups and a few kilobytes each)."""
        for chunk in ctest_chunks(regexes):
            result, by = self._run_ctest("|".join(chunk), log)
            if result != SURVIVED:
                return result, by
        return SURVIVED, ""

    def _run_ctest(self, rx: str, log) -> tuple[str, str]:
        cmd = ["ctest", "--test-dir", str(self.build), "-R", rx, "--no-tests=error", "--output-on-failure",
               "--timeout", str(self.args.timeout), "--parallel", str(self.args.jobs)]
        if not self.args.all_tests:
            cmd.append("--stop-on-failure")
        rc, out, timed_out = run(cmd, log, cwd=self.work, env=self.env, timeout=self.args.timeout * 2 + 60)
        if timed_out:
            return CAUGHT, "timeout (the whole ctest run)"
        if rc == 0:
            return SURVIVED, ""
        failed = re.findall(r"^\s*\d+\s+-\s+(.+?)\s+\(([^()]*)\)\s*$", out.split("The following tests FAILED:")[-1], re.M) \
            if "The following tests FAILED:" in out else []
        if failed:
            name, why = failed[0]
            more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
            return CAUGHT, f"{name.split('  #')[0].strip()}{' (' + why + ')' if why != 'Failed' else ''}{more}"
        if "No tests were found" in out:
            return ERROR, f"no ctest test matches {rx}"
        return ERROR, f"ctest exited {rc} without naming a failed test"

    def present(self, nodes: list[str]) -> list[str]:
        """The pytest catchers whose files are in the checkout (a test file of a branch not merged
        yet may be named: it is left out until it is there)."""
        return [n for n in nodes if (self.work / pytest_file(n)).is_file()]

    def run_pytest(self, nodes: list[str], ext_so: Path | None, cli: str, log) -> tuple[str, str]:
        present = self.present(nodes)
        if not present:
            return ERROR, "none of its pytest files is in this checkout"
        top = self.overlay(ext_so)
        try:
            env = dict(self.env)
            env["PYTHONPATH"] = str(top) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            if cli:
                env["LOCKSTEP_CLI"] = cli
            cmd = [self.python, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *present]
            if not self.args.all_tests:
                cmd.insert(3, "-x")
            rc, out, timed_out = run(cmd, log, cwd=self.work, env=env, timeout=self.args.timeout)
        finally:
            shutil.rmtree(top, ignore_errors=True)
        if timed_out:
            return CAUGHT, "timeout (pytest)"
        if rc == 0:
            return SURVIVED, ""
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
        if rc in (1, 2) and failed:
            more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
            return CAUGHT, failed[0] + more
        return ERROR, f"pytest exited {rc}" + (" (no tests collected)" if rc == 5 else "")

    def check_overlay_imports(self, log) -> None:
        """The overlay's lockstep is the one pytest imports (nothing shadows it)."""
        top = self.overlay(None)
        try:
            env = dict(self.env)
            env["PYTHONPATH"] = str(top)
            code = "import importlib.util as u; print(u.find_spec('lockstep').submodule_search_locations[0])"
            r = subprocess.run([self.python, "-c", code], capture_output=True, text=True, cwd=self.work, env=env)
            where = r.stdout.strip()
            log.write(f"overlay check: lockstep from {where}\n")
            if r.returncode != 0 or not where.startswith(str(top)):
                raise SystemExit(f"the overlay's lockstep is not the one imported ({where or r.stderr.strip()})")
        finally:
            shutil.rmtree(top, ignore_errors=True)

    # -- the whole run --
    def plan(self):
        index = test_programs(self.work)
        all_programs = sorted(set(index.values()))
        targets: dict[str, set[str]] = {}
        for m in self.mutants:
            if m.python:
                continue
            t, unmatched = programs_of(m, index)
            if unmatched:
                print(f"note: {m.id}: {', '.join(unmatched)} names no test found in the sources; building every "
                      f"test program for it")
                t |= set(all_programs)
            targets[m.id] = t
        return targets

    def ext_so(self) -> Path | None:
        found = sorted(glob.glob(str(self.ext_build / "**" / "_ext*.so"), recursive=True))
        return Path(found[0]) if found else None

    def baseline(self, targets: dict[str, set[str]]) -> None:
        cpp = [m for m in self.mutants if not m.python]
        py = [m for m in self.mutants if m.python]
        with open(self.logs / "baseline.log", "w") as log:
            print(f"baseline: the catchers without a mutant (log: {self.logs / 'baseline.log'})")
            regexes = sorted({rx for m in cpp for rx in m.ctest})
            cpp_nodes = sorted({n for m in cpp for n in self.present(m.pytest)})
            programs = set().union(set(), *targets.values()) | ({"lockstep_cli"} if cpp_nodes else set())
            if programs:
                if not self.configure(self.build, [], log) or not self.build_targets(self.build, sorted(programs), log):
                    raise SystemExit(f"baseline: the unmutated build failed (see {log.name})")
            if regexes:
                result, by = self.run_ctest(regexes, log)
                if result != SURVIVED:
                    raise SystemExit(f"baseline: without a mutant the ctest catchers fail: {by} (see {log.name}); "
                                     f"fix the tree or the list first")
            if cpp_nodes:
                if not self.configure(self.ext_build, self.ext_configure_args(), log) or \
                        not self.build_targets(self.ext_build, ["_ext"], log):
                    raise SystemExit(f"baseline: the unmutated Python module failed to build (see {log.name})")
                result, by = self.run_pytest(cpp_nodes, self.ext_so(), str(self.build / "lockstep"), log)
                if result != SURVIVED:
                    raise SystemExit(f"baseline: without a mutant the pytest catchers fail: {by} (see {log.name})")
            py_nodes = sorted({n for m in py for n in self.present(m.pytest)})
            if py_nodes:
                result, by = self.run_pytest(py_nodes, None, self.cli(), log)
                if result != SURVIVED:
                    raise SystemExit(f"baseline: without a mutant the pytest catchers fail: {by} (see {log.name})")
        print(f"baseline: every catcher passes ({time.time() - self.started:.0f} s)")

    def run_one(self, m: Mutant, targets: set[str]) -> Outcome:
        path = self.work / m.file
        text = path.read_text() if path.is_file() else None
        why = snippet_problem(m, text)
        if why:
            return Outcome(m, REFUSED, why)
        start = time.time()
        with open(self.logs / f"{m.id}.log", "w") as log:
            log.write(f"{m.id} ({m.area}): {m.what}\n{m.file}\n--- find\n{m.find}\n--- replace\n{m.replace}\n")
            try:
                path.write_text(text.replace(m.find, m.replace, 1))
                result, by = self._build_and_test(m, targets, path, log)
            finally:
                with restoring():
                    path.write_text(text)
                    git(self.work, "checkout", "--quiet", "--", m.file)
                    if path.read_text() != text:
                        raise SystemExit(f"{m.file} could not be restored in {self.work}")
        return Outcome(m, result, by, time.time() - start)

    def _build_and_test(self, m: Mutant, targets: set[str], path: Path, log) -> tuple[str, str]:
        if m.python:
            r = subprocess.run([self.python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])",
                                str(path)], capture_output=True, text=True)
            if r.returncode != 0:
                log.write(r.stderr)
                return NO_COMPILE, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "syntax error"
            return self.run_pytest(m.pytest, None, self.cli(), log)
        # The test programs of its ctest catchers, and the command line its pytest catchers run.
        nodes = self.present(m.pytest)
        programs = set(targets) | ({"lockstep_cli"} if nodes else set())
        if not self.configure(self.build, [], log):
            return ERROR, "cmake could not configure the build directory"
        if not self.build_targets(self.build, sorted(programs), log):
            return NO_COMPILE, "did not build: " + ", ".join(sorted(programs))
        if m.ctest:
            result, by = self.run_ctest(m.ctest, log)
            if result != SURVIVED or not nodes:
                return result, by
        if not self.configure(self.ext_build, self.ext_configure_args(), log):
            return ERROR, "cmake could not configure the Python module's build directory"
        if not self.build_targets(self.ext_build, ["_ext"], log):
            return NO_COMPILE, "the Python module (_ext) did not build"
        so = self.ext_so()
        if so is None:
            return ERROR, f"no _ext*.so under {self.ext_build}"
        return self.run_pytest(nodes, so, str(self.build / "lockstep"), log)

    def write_report(self, final: bool) -> None:
        counted = [o for o in self.outcomes if o.result in (CAUGHT, SURVIVED)]
        caught = sum(o.result == CAUGHT for o in self.outcomes)
        ratio = f"{caught}/{len(counted)} = {100.0 * caught / len(counted):.1f}%" if counted else "n/a"
        lines = [f"# Mutation testing: {self.work.name}", "",
                 f"Commit {self.commit}, {datetime.datetime.now().isoformat(timespec='seconds')}; "
                 f"`{shlex.join(['scripts/mutate.py', *sys.argv[1:]])}`"
                 f"{'' if final else ' (interrupted: partial)'}.", "",
                 f"Kill ratio (caught / (caught + survived)): **{ratio}**; "
                 + ", ".join(f"{k}: {sum(o.result == k for o in self.outcomes)}"
                             for k in (CAUGHT, SURVIVED, NO_COMPILE, ERROR, REFUSED)) + ".", "",
                 "| id | area | what it does | result | caught by | seconds |", "|---|---|---|---|---|---|"]
        for o in self.outcomes:
            cell = (o.by if o.result != SURVIVED else "survived").replace("|", "\\|")
            lines.append(f"| {o.mutant.id} | {o.mutant.area} | {o.mutant.what.replace('|', '/')} | {o.result} | "
                         f"{cell} | {o.seconds:.0f} |")
        survivors = [o for o in self.outcomes if o.result == SURVIVED]
        if survivors:
            lines += ["", "## Survivors", ""]
            for o in survivors:
                lines.append(f"- `{o.mutant.id}` ({o.mutant.file}): {o.mutant.what}."
                             + (f" {o.mutant.note}" if o.mutant.note else ""))
        other = [o for o in self.outcomes if o.result in (NO_COMPILE, ERROR, REFUSED)]
        if other:
            lines += ["", "## Not counted", ""] + [f"- `{o.mutant.id}`: {o.result}: {o.by}" for o in other]
        self.report.write_text("\n".join(lines) + "\n")

    def main(self) -> int:
        self.prepare_worktree()
        problems = [p for p in (snippet_problem(m, (self.work / m.file).read_text()
                                                if (self.work / m.file).is_file() else None)
                                for m in self.mutants) if p]
        if problems:
            raise SystemExit("refused:\n  " + "\n  ".join(problems))
        targets = self.plan()
        if any(self.present(m.pytest) for m in self.mutants):
            with open(self.logs / "overlay.log", "w") as log:
                self.check_overlay_imports(log)
        final = False
        try:
            if not self.args.no_baseline:
                self.baseline(targets)
            for i, m in enumerate(self.mutants, 1):
                print(f"[{i}/{len(self.mutants)}] {m.area:<11} {m.id} ... ", end="", flush=True)
                o = self.run_one(m, targets.get(m.id, set()))
                self.outcomes.append(o)
                by = "" if o.result == SURVIVED else f": {o.by}"
                print(f"{o.result}{by} ({o.seconds:.0f} s)", flush=True)
                self.write_report(False)
            final = True
        except (KeyboardInterrupt, Interrupted):  # KeyboardInterrupt: a SIGINT before the handler was set
            print("\ninterrupted: the mutated file is restored; the report is partial")
        finally:
            self.write_report(final)
        counted = [o for o in self.outcomes if o.result in (CAUGHT, SURVIVED)]
        caught = sum(o.result == CAUGHT for o in self.outcomes)
        print(f"\nreport: {self.report}")
        for o in self.outcomes:
            if o.result == SURVIVED:
                print(f"survived: {o.mutant.id}: {o.mutant.what}")
        if counted:
            print(f"kill ratio: {caught}/{len(counted)} = {100.0 * caught / len(counted):.1f}% "
                  f"(caught / (caught + survived); {len(self.outcomes) - len(counted)} not counted)")
        return 0 if final else 130


def check(mutants: list[Mutant], repo: Path, rev: str) -> int:
    """--check: each snippet occurs exactly once in its file at REV, and each catcher exists there."""
    problems, notes = [], []
    index = None
    for m in mutants:
        why = snippet_problem(m, file_at(repo, rev, m.file))
        if why:
            problems.append(why)
        present = [n for n in m.pytest if file_at(repo, rev, pytest_file(n)) is not None]
        for n in m.pytest:
            if n not in present:
                notes.append(f"{m.id}: pytest {pytest_file(n)} is not at {rev} (left out when run)")
        if m.pytest and not present and not m.ctest:
            problems.append(f"{m.id}: none of its pytest files is at {rev}")
    if any(m.ctest for m in mutants):
        with tempfile.TemporaryDirectory(prefix="lockstep-mutate-check-") as tmp:
            # The cmake files and test sources at REV, to find which test program holds each test.
            listing = git(repo, "ls-tree", "-r", "--name-only", rev, "--", "CMakeLists.txt", "cmake", "tests")
            for path in listing.splitlines():
                if path.endswith((".txt", ".cmake", ".cpp", ".cu", ".h")):
                    text = file_at(repo, rev, path)
                    (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
                    (Path(tmp) / path).write_text(text or "")
            index = test_programs(Path(tmp))
        for m in mutants:
            _, unmatched = programs_of(m, index)
            for rx in unmatched:
                problems.append(f"{m.id}: ctest regex {rx!r} names no test in the sources at {rev}")
    for n in notes:
        print(f"note: {n}")
    for p in problems:
        print(f"refused: {p}")
    by_area = {a: sum(m.area == a for m in mutants) for a in AREAS}
    print(f"{len(mutants) - len({p.split(':')[0] for p in problems})} of {len(mutants)} mutants apply at {rev} ("
          + ", ".join(f"{a} {n}" for a, n in by_area.items() if n) + ")")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--mutants", default=str(SCRIPTS / "mutants.toml"), help="the list (default: %(default)s)")
    ap.add_argument("--list", action="store_true", help="list the chosen mutants and exit")
    ap.add_argument("--check", action="store_true", help="check that every chosen snippet applies at REV (no build)")
    ap.add_argument("--id", action="append", default=[], help="a mutant by id (repeatable; or ID,ID,...)")
    ap.add_argument("--area", action="append", default=[], choices=AREAS, help="mutants of an area (repeatable)")
    ap.add_argument("--kind", choices=("python", "cpp"), help="only the Python (python/lockstep) or the C++ mutants")
    ap.add_argument("--rev", default="HEAD", help="the commit the mutants run on (default: %(default)s)")
    ap.add_argument("--workdir", help="the mutants checkout (default: <repo>/../<repo-name>-mutants)")
    ap.add_argument("--build-dir", help="its build directory (default: <workdir>/build)")
    ap.add_argument("--ext-build-dir", help="the Python module's build directory (default: <workdir>/build-python/mutants)")
    ap.add_argument("--cmake-arg", action="append", default=[], help="an extra configure argument (repeatable)")
    ap.add_argument("--python", help="the interpreter with lockstep installed (default: the project's .venv)")
    ap.add_argument("--package", help="the installed lockstep package to overlay (default: the --python one's)")
    ap.add_argument("--cli", help="the lockstep program the Python mutants' tests use (default: $LOCKSTEP_CLI, else build/lockstep)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="build and ctest parallelism (default: %(default)s)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds for one mutant's tests (default: %(default)s)")
    ap.add_argument("--build-timeout", type=int, default=7200, help="seconds for one build (default: %(default)s)")
    ap.add_argument("--all-tests", action="store_true", help="run every catcher, not stopping at the first failure")
    ap.add_argument("--no-baseline", action="store_true", help="skip running the catchers without a mutant first")
    ap.add_argument("--report", help="the Markdown report (default: <workdir>/mutation-report.md)")
    args = ap.parse_args()

    repo = Path(git(SCRIPTS, "rev-parse", "--show-toplevel"))
    mutants = load_mutants(Path(args.mutants))
    ids = [i for x in args.id for i in x.split(",") if i]
    unknown = [i for i in ids if i not in {m.id for m in mutants}]
    if unknown:
        raise SystemExit(f"no mutant named {', '.join(unknown)} (--list lists them)")
    chosen = [m for m in mutants if (not ids or m.id in ids) and (not args.area or m.area in args.area)
              and (args.kind is None or (args.kind == "python") == m.python)]
    if not chosen:
        raise SystemExit("no mutant chosen")
    if args.list:
        for m in chosen:
            catchers = "; ".join(m.ctest + m.pytest)
            print(f"{m.id:<34} {m.area:<11} {m.file}\n    {m.what}\n    catchers: {catchers}")
        by_area = {a: sum(m.area == a for m in chosen) for a in AREAS}
        print(f"{len(chosen)} mutants: " + ", ".join(f"{a} {n}" for a, n in by_area.items() if n)
              + f"; {sum(m.python for m in chosen)} Python, {sum(not m.python for m in chosen)} C++")
        return 0
    if args.check:
        return check(chosen, repo, args.rev)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    return Runner(args, repo, chosen).main()


if __name__ == "__main__":
    sys.exit(main())
