"""Tabulates run_cpu_figures.sh's JSON files: for each benchmark, the median (or the only) time per
item of the new build and, if measured, of the base build, and their ratio (new / base).
    python3 bench/compare_figures.py <results-dir>"""
import glob
import json
import os
import sys


def per_item_us(b):
    """Microseconds per item: s_per_world(_step) if reported, else time per item from items_per_second."""
    for key in ("s_per_world", "s_per_world_step"):
        if key in b:
            return b[key] * 1e6
    if b.get("items_per_second"):
        return 1e6 / b["items_per_second"]
    return None


def load(path):
    rows = {}
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):  # no such benchmark in that build: Google Benchmark wrote nothing
        return rows
    for b in data.get("benchmarks", []):
        if True:
            if b.get("error_occurred"):
                continue
            agg = b.get("aggregate_name")
            if agg not in (None, "median"):
                continue
            name = b.get("run_name", b["name"])
            value = per_item_us(b)
            if value is not None:
                rows[name] = value
    return rows


def main(directory):
    groups = sorted({os.path.basename(p)[4:-5] for p in glob.glob(os.path.join(directory, "new_*.json"))})
    have_base = bool(glob.glob(os.path.join(directory, "base_*.json")))
    for g in groups:
        new = load(os.path.join(directory, "new_" + g + ".json"))
        base_path = os.path.join(directory, "base_" + g + ".json")
        base = load(base_path) if os.path.exists(base_path) else {}
        print(f"\n### {g} (us per world or world-step; median)\n")
        print("| benchmark | new |" + (" base | new / base |" if have_base else ""))
        print("|---|---|" + ("---|---|" if have_base else ""))
        for name, v in new.items():
            line = f"| {name} | {v:.4g} |"
            if have_base:
                b = base.get(name)
                line += f" {b:.4g} | {v / b:.2f} |" if b else " - | - |"
            print(line)


if __name__ == "__main__":
    main(sys.argv[1])
