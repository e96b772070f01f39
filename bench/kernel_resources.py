#!/usr/bin/env python3
"""Compiler resources of every CUDA kernel Lockstep builds: registers, stack frame and spills.

    bench/kernel_resources.py [--build BUILD] [--budgets FILE] [--ptxas] [--cuobjdump PATH] [FILE ...]

Reads the sm_XX machine code (cubin) that nvcc embeds in the objects' fatbins: by default the kernel
objects of BUILD (default build/): CMakeFiles/lockstep.dir/kernels/*.cu.o (the engine library) and
CMakeFiles/lockstep_tests.dir/tests/*.cu.o (the tests' own kernels); or the FILEs given (objects,
static libraries, executables: any file holding fatbins). For each kernel it prints

    registers   EIATTR_REGCOUNT of the cubin's .nv.info (cuobjdump's REG)
    stack       EIATTR_FRAME_SIZE: the bytes of local memory per thread the kernel's frame takes
                (cuobjdump's STACK, ptxas's "bytes stack frame"): arrays ptxas could not keep in
                registers and spilled registers, read and written through the L1 to device memory
    spills      "bytes spill stores / loads" of ptxas -v, only with --ptxas: the PTX embedded beside
                the cubin is decompressed (zstd) and compiled again by ptxas with -v for the same
                architecture (ptxas's default -O3, as nvcc ran it; minutes per file: the figures of
                bench/README.md, not CI)

No CUDA tool is needed for registers and stack: the ELF is read here (format below). With
--cuobjdump [PATH] the figures are also checked against `cuobjdump --dump-resource-usage` (PATH, else
$CUOBJDUMP, else cuobjdump on PATH or in /usr/local/cuda/bin; PyPI's nvidia-cuda-cuobjdump has one):
both agreed on all 21 kernels of nvcc 13.0's sm_90 build.

--budgets FILE checks every kernel against the first line of FILE whose pattern matches its name
(`pattern  max_stack_bytes  max_registers`, fnmatch patterns on the short names printed, '#'
comments): exit status 1 when a kernel exceeds its budget or matches no line, 0 otherwise; 77 when no
kernel object was found (ctest's SKIP_RETURN_CODE).

The cubin ELF (NVIDIA's, undocumented but stable since CUDA 6; what cuobjdump reads): a fatbin
starts with the magic 0xBA55ED50, a u16 version, a u16 header size and a u64 payload size; the
payload is entries of (u16 kind, u16, u32 header size, u64 size, ...) where kind 2 is an ELF cubin
(zstd-compressed by nvcc 13 when it is large: decompressed with Debian's zstd) and kind 1 PTX (zstd-compressed by nvcc 13). In the cubin, section .nv.info holds
records (u8 format, u8 attribute, u16 size) + data; format 4 records carry (u32 symbol, u32 value)
for EIATTR_FRAME_SIZE (0x11), EIATTR_MIN_STACK_SIZE (0x12), EIATTR_MAX_STACK_SIZE (0x23) and
EIATTR_REGCOUNT (0x2f); each kernel is a section .text.<mangled name>.
"""
import argparse
import fnmatch
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50
EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE, EIATTR_MAX_STACK_SIZE, EIATTR_REGCOUNT = 0x11, 0x12, 0x23, 0x2F
SKIP = 77


def fatbin_entries(data):
    """(kind, flags-header bytes, payload) of every fatbin entry in a file's bytes."""
    i = 0
    while True:
        i = data.find(struct.pack("<I", FATBIN_MAGIC), i)
        if i < 0:
            return
        _, _, hsize, fsize = struct.unpack_from("<IHHQ", data, i)
        off, end = i + hsize, i + hsize + fsize
        if hsize != 16 or end > len(data):  # not a fatbin header after all
            i += 4
            continue
        while off + 16 <= end:
            kind, _, hdr, size = struct.unpack_from("<HHIQ", data, off)
            if hdr < 16 or off + hdr + size > end:
                break
            yield kind, data[off:off + hdr], data[off + hdr:off + hdr + size]
            off += hdr + size
        i = end


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_decompress(frame, what):
    """The bytes of the zstd frame that `frame` starts with (nvcc 13 compresses PTX, and large cubins).
    Fatbin entries are padded after the frame: zstd decompresses it, then calls the padding an unknown
    header (exit 1), so its output is what counts; the caller checks it."""
    if not shutil.which("zstd"):
        raise SystemExit("kernel_resources: %s is zstd-compressed and the zstd program is missing "
                         "(Debian's zstd; scripts/deps.sh installs it)" % what)
    return subprocess.run(["zstd", "-d", "-c"], input=frame, capture_output=True).stdout


def cubin_bytes(payload):
    """A fatbin entry's cubin, decompressed when nvcc compressed it."""
    if payload[:4] != ZSTD_MAGIC:
        return payload
    elf = zstd_decompress(payload, "a cubin")
    if elf[:4] != b"\x7fELF":
        raise SystemExit("kernel_resources: zstd could not decompress a cubin")
    return elf


def elf_sections(elf):
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    secs = []
    for k in range(shnum):
        name, typ, _, _, off, size, link, info, _, _ = struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize)
        secs.append({"name": name, "type": typ, "off": off, "size": size, "link": link, "info": info})
    names = secs[shstrndx]
    for s in secs:
        o = names["off"] + s["name"]
        s["name"] = elf[o:elf.index(b"\0", o)].decode()
    return secs


def cubin_kernels(elf):
    """{mangled kernel name: {'registers', 'stack', 'min_stack', 'max_stack', 'arch'}} of one cubin."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return {}
    arch = (struct.unpack_from("<I", elf, 0x30)[0] >> 8) & 0xFF  # e_flags: EF_CUDA_SM in bits 8..15
    secs = elf_sections(elf)
    symtab = next((s for s in secs if s["name"] == ".symtab"), None)
    if symtab is None:
        return {}
    strtab = secs[symtab["link"]]
    symbols = []
    for k in range(symtab["size"] // 24):
        name, = struct.unpack_from("<I", elf, symtab["off"] + 24 * k)
        o = strtab["off"] + name
        symbols.append(elf[o:elf.index(b"\0", o)].decode())
    attrs = {}
    for s in secs:
        if s["name"] != ".nv.info":
            continue
        p, end = s["off"], s["off"] + s["size"]
        while p + 4 <= end:
            fmt, attr, size = struct.unpack_from("<BBH", elf, p)
            p += 4
            if fmt != 4:  # EIFMT_SVAL carries data; the others carry their value in `size`
                continue
            if size == 8 and attr in (EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE, EIATTR_MAX_STACK_SIZE, EIATTR_REGCOUNT):
                sym, value = struct.unpack_from("<II", elf, p)
                if sym < len(symbols):
                    attrs.setdefault(symbols[sym], {})[attr] = value
            p += size
    out = {}
    for s in secs:
        if s["name"].startswith(".text."):
            name = s["name"][len(".text."):]
            a = attrs.get(name, {})
            out[name] = {"registers": a.get(EIATTR_REGCOUNT, s["info"] >> 24), "stack": a.get(EIATTR_FRAME_SIZE, 0),
                         "min_stack": a.get(EIATTR_MIN_STACK_SIZE, 0), "max_stack": a.get(EIATTR_MAX_STACK_SIZE, 0),
                         "arch": arch}
    return out


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    lines = r.stdout.splitlines()
    return dict(zip(names, lines)) if len(lines) == len(names) else {n: n for n in names}


def short_name(demangled):
    """'void lockstep::(anonymous namespace)::advanceKernel<double, true>(lockstep::Sizes, ...)' ->
    'advanceKernel<double, true>'."""
    s = demangled.replace("(anonymous namespace)::", "")
    if s.startswith("void "):
        s = s[5:]
    depth = 0
    for k, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            s = s[:k]
            break
    for prefix in ("lockstep::kernels::", "lockstep::test::", "lockstep::"):
        s = s.replace(prefix, "")
    return s


def ptxas_spills(ptx_payload, header, arch, ptxas):
    """{mangled name: (stack frame, spill stores, spill loads)} from ptxas -v on a fatbin's PTX."""
    flags, = struct.unpack_from("<I", header, 8) if len(header) >= 12 else (0,)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "k.ptx")
        raw = ptx_payload
        zstd = raw.find(ZSTD_MAGIC)
        if zstd >= 0:
            raw = zstd_decompress(raw[zstd:], "the PTX")
        text = raw.split(b"\0", 1)[0]
        if b".entry" not in text:
            raise RuntimeError("the PTX could not be read (an unknown compression: header flags %#x)" % flags)
        open(ptx, "wb").write(text)
        r = subprocess.run([ptxas, "-arch=sm_%d" % arch, "-m64", "-v", ptx, "-o", os.path.join(tmp, "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("ptxas failed: " + r.stderr[-2000:])
    out, current = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            out[current] = tuple(int(x) for x in m.groups())
    return out


def cuobjdump_usage(tool, path):
    r = subprocess.run([tool, "--dump-resource-usage", path], capture_output=True, text=True)
    out, current = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"\s*Function (\S+):$", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"REG:(\d+) STACK:(\d+)", line)
        if m and current:
            out[current] = (int(m.group(1)), int(m.group(2)))
            current = None
    return out


def find_tool(name, given):
    if given:
        return given
    if os.environ.get(name.upper()):
        return os.environ[name.upper()]
    for c in (shutil.which(name), "/usr/local/cuda/bin/" + name):
        if c and os.access(c, os.X_OK):
            return c
    return None


def read_budgets(path):
    rules = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 3:
            raise SystemExit("%s:%d: expected 'pattern max_stack_bytes max_registers'" % (path, n))
        rules.append((parts[0], int(parts[1]), int(parts[2])))
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="objects, libraries or executables (default: the kernel objects of --build)")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--budgets", help="check against this budget file (bench/kernel_budgets.txt)")
    ap.add_argument("--ptxas", action="store_true", help="also spill stores and loads, by running ptxas -v again (minutes)")
    ap.add_argument("--cuobjdump", nargs="?", const="", default=None,
                    help="check registers and stack against cuobjdump --dump-resource-usage (PATH, else found)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()

    files = args.files or sorted(glob.glob(os.path.join(args.build, "CMakeFiles/lockstep.dir/kernels/*.cu.o")) +
                                 glob.glob(os.path.join(args.build, "CMakeFiles/lockstep_tests.dir/tests/*.cu.o")))
    if not files:
        print("kernel_resources: no kernel objects under %s (not built?)" % args.build)
        return SKIP
    ptxas = find_tool("ptxas", None) if args.ptxas else None
    if args.ptxas and not ptxas:
        raise SystemExit("kernel_resources: --ptxas needs ptxas (PATH or /usr/local/cuda/bin)")
    cuobjdump = find_tool("cuobjdump", args.cuobjdump) if args.cuobjdump is not None else None
    if args.cuobjdump is not None and not cuobjdump:
        raise SystemExit("kernel_resources: cuobjdump not found (give its path: --cuobjdump PATH)")

    rows, mismatches = [], []
    for path in files:
        data = open(path, "rb").read()
        entries = list(fatbin_entries(data))
        kernels = {}
        for kind, header, payload in entries:
            if kind == 2:
                kernels.update(cubin_kernels(cubin_bytes(payload)))
        spills = {}
        if ptxas:
            for kind, header, payload in entries:
                if kind == 1:
                    arch = max((k["arch"] for k in kernels.values()), default=90)
                    spills.update(ptxas_spills(payload, header, arch, ptxas))
        if cuobjdump:
            theirs = cuobjdump_usage(cuobjdump, path)
            for name, k in kernels.items():
                if theirs.get(name) != (k["registers"], k["stack"]):
                    mismatches.append("%s: here %s, cuobjdump %s" % (name, (k["registers"], k["stack"]), theirs.get(name)))
        names = demangle(sorted(kernels))
        for mangled, k in kernels.items():
            rows.append({"file": os.path.basename(path), "name": short_name(names[mangled]), "mangled": mangled,
                         "spills": spills.get(mangled), **k})
    if not rows:
        print("kernel_resources: no sm_XX kernels in %s" % ", ".join(files))
        return SKIP
    rows.sort(key=lambda r: (r["file"], r["name"]))

    if args.markdown:
        print("| file | kernel | registers | stack frame (bytes) | spill stores / loads (bytes) |")
        print("|---|---|---|---|---|")
        for r in rows:
            sp = "%d / %d" % r["spills"][1:] if r["spills"] else "-"
            print("| %s | `%s` | %d | %d | %s |" % (r["file"], r["name"], r["registers"], r["stack"], sp))
    else:
        print("%-26s %-44s %5s %7s %s" % ("file", "kernel (sm_%d)" % rows[0]["arch"], "regs", "stack", "spill st/ld" if ptxas else ""))
        for r in rows:
            sp = "%d / %d" % r["spills"][1:] if r["spills"] else ""
            print("%-26s %-44s %5d %7d %s" % (r["file"], r["name"], r["registers"], r["stack"], sp))
    status = 0
    if cuobjdump:
        if mismatches:
            print("\ncuobjdump disagrees:\n  " + "\n  ".join(mismatches))
            status = 1
        else:
            print("\ncuobjdump %s agrees on all %d kernels" % (cuobjdump, len(rows)))
    if args.budgets:
        rules = read_budgets(args.budgets)
        over = []
        for r in rows:
            rule = next((x for x in rules if fnmatch.fnmatchcase(r["name"], x[0])), None)
            if rule is None:
                over.append("%s: no budget line matches (add one to %s)" % (r["name"], args.budgets))
            elif r["stack"] > rule[1] or r["registers"] > rule[2]:
                over.append("%s: stack %d bytes, %d registers; budget %d bytes, %d registers ('%s')" %
                            (r["name"], r["stack"], r["registers"], rule[1], rule[2], rule[0]))
        if not args.files:  # every kernel of the build read: each budget line must find its kernels
            for pattern, _, _ in rules:
                if not any(fnmatch.fnmatchcase(r["name"], pattern) for r in rows):
                    over.append("budget line '%s' matches no kernel (a kernel was renamed or removed, or its "
                                "object could not be read)" % pattern)
        if over:
            print("\nover budget (%s):\n  %s" % (args.budgets, "\n  ".join(over)))
            status = 1
        else:
            print("\nall %d kernels within their budgets (%s)" % (len(rows), args.budgets))
    return status


if __name__ == "__main__":
    sys.exit(main())
