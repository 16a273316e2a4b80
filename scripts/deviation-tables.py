#!/usr/bin/env python3
"""Regenerates the measured tables of docs/deviations.md (issue 20).

Deviation rows: for each row below, a copy of configs/scenarios/<s>.toml
with the row's one `[cc_<scheme>]` key set to the paper's value is run
with `icnlab run --sim` ("without" the deviation) beside the tuned
baseline ("with"), once per (scenario, scheme). Profiles: the scenario set
under `icnlab compare --profile tuned|paper`. Every run is virtual time,
seed 1, so the numbers are deterministic; the markdown goes to stdout and
to <out>/tables.md.

    scripts/deviation-tables.py [--mode rows|profiles|all] [--out DIR]
                                [--jobs N] [--reuse] [--only C1,Q2]

Needs the release binary: cargo build --release -p icn-lab.
Stdlib only (python3 >= 3.11 for tomllib).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "configs" / "scenarios"
ICNLAB = ROOT / "target" / "release" / "icnlab"

# (row id, scheme, key, paper value as a TOML literal, scenarios, note).
# Keys and values are the paper profile's (crates/forwarder/src/cc/
# config_profiled.rs, `for_profile(Profile::Paper)`). Notes: `rates` prints each
# flow's last-half rate; `removed` marks a key holding the former tuned
# value: there "with" is the key set and "without" is today's tuned (M1);
# `off` marks a key that is in both profiles (the value switches it off);
# any other note names the variant.
ROWS = [
    ("C1", "ccc", "augmentation", '"spare_share"',
     ["dumbbell", "arrival", "ccc_fig1", "mircc_fig8"], ""),
    ("C2", "ccc", "congestion_sojourn_ms", "0",
     ["arrival", "ccc_fig1", "mircc_fig8", "dumbbell"], ""),
    ("C3", "ccc", "utilisation", "1.0",
     ["dumbbell", "ccc_fig1", "diamond", "arrival"], ""),
    ("C4", "ccc", "admit_equal_share", "false",
     ["dumbbell", "mircc_fig8", "arrival"], ""),
    ("C5", "ccc", "reduction_floor_share", "0.0",
     ["dumbbell", "arrival", "ccc_fig1", "mircc_fig8"], ""),
    ("C6a", "ccc", "interest_pace", '"outgoing_pace"',
     ["dumbbell", "arrival", "diamond", "mircc_fig8"], "pace at p_o,k"),
    ("C6b", "ccc", "pacer_burst_ms", "0",
     ["dumbbell", "ccc_fig1", "diamond", "wincm_multipath"], "strict bucket"),
    ("C6c", "ccc", "pace_interests", "false",
     ["dumbbell", "ccc_fig1", "diamond", "mircc_fig8", "greedy",
      "wincm_multipath"], "no pacer; rates"),
    ("C8", "ccc", "next_hop_by_room", "false",
     ["ccc_fig1", "diamond", "mircc_fig8", "wincm_multipath",
      "abilene_multipath", "dumbbell", "arrival", "greedy"], ""),
    # C7: the consumer's knobs, in the scenario's `[consumer]` table.
    ("C7a", "ccc", "consumer.ccc_initial_window", "0",
     ["dumbbell", "arrival", "ccc_fig1", "greedy", "mircc_fig8", "abilene"],
     "paces at the objective until the first constraint"),
    ("C7b", "ccc", "consumer.ccc_min_pace_ips", "0.0",
     ["dumbbell", "arrival", "ccc_fig1", "greedy", "mircc_fig8", "abilene"],
     "no pace floor"),
    ("C9", "ccc", "max_min_demand", "false",
     ["dumbbell", "arrival", "ccc_fig1", "greedy", "mircc_fig8",
      "qsccp_classes", "abilene", "abilene_multipath", "geant"], ""),
    ("Q1", "qsccp", "ds_rate_headroom", "0.0", ["qsccp_classes"], ""),
    ("Q2", "qsccp", "dt_rate_headroom", "0.0",
     ["qsccp_classes", "dumbbell", "arrival", "mircc_fig8"], ""),
    ("Q3", "qsccp", "dt_queue_factor", "false",
     ["arrival", "mircc_fig8", "greedy"], ""),
    ("Q4", "qsccp", "rate_new_flows", "false", ["arrival", "mircc_fig8"], ""),
    ("Q5", "qsccp", "min_data_per_flow", "0", ["qsccp_classes", "arrival"], ""),
    ("Q6", "qsccp", "propagate_penalty", "false", ["greedy"], "off; rates"),
    ("M1-mircc", "mircc", "mean_queue", "true",
     ["dumbbell", "arrival", "mircc_fig8"], "removed"),
    ("M1-rcp", "rcp", "mean_queue", "true",
     ["dumbbell", "arrival", "mircc_fig8"], "removed"),
    ("M2", "mircc", "secondary_starts_at_floor", "false",
     ["dumbbell", "arrival", "mircc_fig8"], ""),
    ("M3", "mircc", "secondary_keeps_headroom", "false",
     ["dumbbell", "arrival", "diamond", "mircc_fig8"], ""),
    ("R1", "rcp", "one_data_allowance", "false",
     ["arrival", "mircc_fig8", "dumbbell"], ""),
    ("W7", "wincm", "uiw_per_fib_prefix", "true",
     ["wincm_multipath", "diamond", "mircc_fig8", "abilene_multipath",
      "abilene", "dumbbell"], ""),
    ("W11", "wincm", "prompt_reentry", "false",
     ["dumbbell", "arrival", "diamond", "ccc_fig1", "wincm_multipath",
      "mircc_fig8", "greedy", "qsccp_classes", "abilene"], ""),
    ("W14", "wincm", "standing_reentry", "false",
     ["dumbbell", "arrival", "diamond", "ccc_fig1", "wincm_multipath",
      "mircc_fig8", "greedy", "qsccp_classes", "abilene"], ""),
]

# The "Every scheme under both profiles" table (multicast scenarios apart).
PROFILE_SCENARIOS = ["dumbbell", "arrival", "diamond", "ccc_fig1",
                     "qsccp_classes", "greedy", "mircc_fig8", "abilene",
                     "abilene_multipath", "geant", "wincm_multipath"]
PROFILE_SCHEMES = ["rcp", "mircc", "ccc", "qsccp"]
# The PCON/WinCM scenario-set table (marks instead of Nacks).
WINDOW_SCENARIOS = ["dumbbell", "arrival", "diamond", "ccc_fig1",
                    "wincm_multipath", "mircc_fig8", "abilene_multipath",
                    "greedy", "qsccp_classes", "abilene", "geant"]
WINDOW_SCHEMES = ["pcon", "wincm"]
# C6 under the paper profile on the dumbbell: (label, key, value); the
# first is the paper profile itself.
PAPER_PACER = [("no pacer", "pace_interests", "false"),
               ("p_o,k (paper)", None, None),
               ("at the constraint", "interest_pace", '"constraint"')]


def table_and_key(scheme: str, key: str) -> tuple[str, str]:
    """`consumer.<k>` is key k of the `[consumer]` table (consumer-law
    knobs); any other key belongs to `[cc_<scheme>]`."""
    if key.startswith("consumer."):
        return "consumer", key.split(".", 1)[1]
    return f"cc_{scheme}", key


def with_key(text: str, scheme: str, key: str, value: str) -> str:
    """The scenario text with `key = value` in its `[cc_<scheme>]` (or
    `[consumer]`) table: set inside the table when the file has one (TOML
    forbids a second header), appended as a new table at the end
    otherwise."""
    table, key = table_and_key(scheme, key)
    header = f"[{table}]"
    lines = text.splitlines()
    at = next((i for i, l in enumerate(lines) if l.strip() == header), None)
    if at is None:
        return text.rstrip("\n") + f"\n\n{header}\n{key} = {value}\n"
    end = next((i for i in range(at + 1, len(lines))
                if lines[i].lstrip().startswith("[")), len(lines))
    pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
    body = [l for l in lines[at + 1:end] if not pat.match(l)]
    out = lines[:at + 1] + [f"{key} = {value}"] + body + lines[end:]
    return "\n".join(out) + "\n"


def scenario_copy(out: Path, s: str, scheme: str, key: str, value: str) -> Path:
    text = with_key((SCENARIOS / f"{s}.toml").read_text(), scheme, key, value)
    parsed = tomllib.loads(text)  # a duplicate table or key raises here
    table, k = table_and_key(scheme, key)
    got = parsed[table][k]
    if got != tomllib.loads(f"v = {value}")["v"]:
        raise SystemExit(f"{s}: {table}.{k} reads {got!r}, not {value}")
    tag = re.sub(r"[^A-Za-z0-9_.]", "", value)
    path = out / "scenarios" / f"{s}--{scheme}--{key}--{tag}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(cmd: list[str], d: Path, reuse: bool) -> tuple[Path, float]:
    """Runs one icnlab command into `d` (skipped with --reuse when `d`
    already has the results.json of this very command); returns the file
    and wall seconds."""
    res = d / "results.json"
    cmd = cmd + ["--out", str(d)]
    if reuse and res.exists() and json.loads(res.read_text())["command"] == " ".join(cmd):
        return res, 0.0
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 or not res.exists():
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return res, time.monotonic() - t


def figures(r: dict) -> dict:
    """A run's cells as the doc prints them (crates/lab/src/results.rs,
    `table_cells`)."""
    b = r["links"][0]
    flows = r["flows"]
    q = [f["rtt_p95_ms"] - f["rtt_min_ms"] for f in flows
         if f["rtt_p95_ms"] is not None and f["rtt_min_ms"] is not None]
    sized = [f for f in flows if f["size_bytes"] is not None]
    if not r["has_arrival"]:
        settle = "- / -"
    else:
        s = "never" if r["settling_s"] is None else f"{r['settling_s']:.1f}"
        o = "-" if r["overshoot"] is None else f"{r['overshoot'] * 100:.0f}"
        settle = f"{s} / {o}"
    done = sum(1 for f in sized if f["delivery_s"] is not None)
    return {
        "util": f"{b['utilisation'] * 100:.1f}",
        "jain": "-" if len(sized) == len(flows) else f"{r['jain']:.3f}",
        "p95q": f"{b['queue_p95_ms']:.1f}",
        "rttq": f"{max(q):.1f}" if q else "-",
        "drops": str(r["drops"]),
        "nacks": str(sum(f["nacks"] for f in flows)),
        "settle": settle,
        "sized": f"{done}/{len(sized)}" if sized else "-",
    }


def load(res: Path) -> list[dict]:
    return json.loads(res.read_text())["runs"]


def rows_jobs(out: Path, only: set[str] | None):
    """(label, command, dir) of every run the deviation rows need."""
    jobs = {}
    for rid, scheme, key, value, scens, _ in ROWS:
        if only and rid not in only and rid.split("-")[0] not in only \
                and rid[:2] not in only:
            continue
        for s in scens:
            base = out / "runs" / f"{s}-{scheme}-tuned"
            jobs[base] = [str(ICNLAB), "run", str(SCENARIOS / f"{s}.toml"),
                          "--scheme", scheme, "--sim"]
            copy = scenario_copy(out, s, scheme, key, value)
            d = out / "runs" / f"{s}-{scheme}-{key}"
            jobs[d] = [str(ICNLAB), "run", str(copy), "--scheme", scheme, "--sim"]
    return jobs


def profile_jobs(out: Path):
    jobs = {}
    for tag, scens, schemes in (("profiles", PROFILE_SCENARIOS, PROFILE_SCHEMES),
                                ("window", WINDOW_SCENARIOS, WINDOW_SCHEMES)):
        for s in scens:
            for prof in ("tuned", "paper"):
                d = out / tag / f"{s}-{prof}"
                jobs[d] = [str(ICNLAB), "compare", str(SCENARIOS / f"{s}.toml"),
                           "--schemes", ",".join(schemes), "--sim",
                           "--profile", prof]
    for _, key, value in PAPER_PACER:
        path = SCENARIOS / "dumbbell.toml" if key is None else \
            scenario_copy(out, "dumbbell", "ccc", key, value)
        d = out / "paper-pacer" / f"dumbbell-ccc-{key or 'paper'}"
        jobs[d] = [str(ICNLAB), "run", str(path), "--scheme", "ccc", "--sim",
                   "--profile", "paper"]
    return jobs


HEAD = ("| scenario | | util % | Jain | p95 queue ms | worst p95 RTT − min RTT, ms "
        "| drops | Nacks | settle s / overshoot % |")
COLS = ["util", "jain", "p95q", "rttq", "drops", "nacks", "settle"]


def row_table(out: Path, row) -> str:
    rid, scheme, key, value, scens, note = row
    opts = [x.strip() for x in note.split(";") if x.strip()]
    removed, rates = ("removed" in opts), ("rates" in opts)
    # The sized-flows column wherever a scenario has sized flows: a short
    # flow that never completes leaves no RTT sample to show in the others.
    sized = any(f["size_bytes"] is not None for s in scens
                for f in load(out / "runs" / f"{s}-{scheme}-tuned" / "results.json")[0]["flows"])
    what = "former tuned value" if removed else \
        "deviation switched off" if "off" in opts else "paper value"
    label = "; ".join(o for o in opts if o not in ("removed", "rates", "off"))
    head, sep = HEAD, "|---" * 9 + "|"
    if sized:
        head += " sized flows done |"
        sep += "---|"
    lines = [f"{rid} ({scheme}: `{key} = {value}` is the "
             f"{what}"
             f"{'; ' + label if label else ''})",
             "", head, sep]
    notes = []
    for s in scens:
        base = load(out / "runs" / f"{s}-{scheme}-tuned" / "results.json")[0]
        dev = load(out / "runs" / f"{s}-{scheme}-{key}" / "results.json")[0]
        pair = [("with", dev), ("without", base)] if removed else \
            [("with", base), ("without", dev)]
        for i, (lab, r) in enumerate(pair):
            f = figures(r)
            cells = [s if i == 0 else "", lab] + [f[c] for c in COLS]
            if sized:
                cells.append(f["sized"])
            lines.append("| " + " | ".join(cells) + " |")
        if sized and any(fl["size_bytes"] is not None for fl in base["flows"]):
            notes.append(f"{s} mean delivery s: " + ", ".join(
                f"{lab} {mean_delivery(r)}" for lab, r in pair))
        if rates and len(base["flows"]) <= 8:
            notes.append(f"{s} last-half Mbit/s: " + "; ".join(
                f"{lab} " + " ".join(f"{fl['name']}={fl['rate_last_half_bps'] / 1e6:.2f}"
                                     for fl in r["flows"]) for lab, r in pair))
    if notes:
        lines += [""] + notes
    return "\n".join(lines)


def mean_delivery(r: dict) -> str:
    """Mean delivery time of the sized flows that completed (crates/lab/src/
    delivery.rs counts the others apart)."""
    d = [f["delivery_s"] for f in r["flows"]
         if f["size_bytes"] is not None and f["delivery_s"] is not None]
    return f"{sum(d) / len(d):.2f}" if d else "-"


def paper_pacer_table(out: Path) -> str:
    lines = ["C6 under the paper profile, dumbbell", "",
             HEAD.replace("| scenario | |", "| pacer |", 1).replace("| settle s / overshoot % |", "|"),
             "|---" * 7 + "|"]
    for lab, key, _ in PAPER_PACER:
        f = figures(load(out / "paper-pacer" / f"dumbbell-ccc-{key or 'paper'}" / "results.json")[0])
        lines.append("| " + " | ".join([lab] + [f[c] for c in COLS[:-1]]) + " |")
    return "\n".join(lines)


def window_table(out: Path) -> str:
    lines = ["| scenario | scheme | util % | Jain | p95 queue ms | RTT − min ms | drops | marks |",
             "|---" * 8 + "|"]
    for s in WINDOW_SCENARIOS:
        t = {r["scheme"]: r for r in load(out / "window" / f"{s}-tuned" / "results.json")}
        p = {r["scheme"]: r for r in load(out / "window" / f"{s}-paper" / "results.json")}
        for sch in WINDOW_SCHEMES:
            ft, fp = figures(t[sch]), figures(p[sch])
            cells = [s, sch] + [f"{ft[c]} / {fp[c]}" for c in
                                ("util", "jain", "p95q", "rttq", "drops")]
            cells.append(f"{t[sch]['links'][0]['marks']} / {p[sch]['links'][0]['marks']}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def profile_table(out: Path) -> str:
    lines = ["| scenario | scheme | util % tuned / paper | Jain tuned / paper "
             "| p95 queue ms tuned / paper "
             "| worst p95 RTT − min RTT, ms, tuned / paper | drops tuned / paper "
             "| Nacks tuned / paper | sized flows done tuned / paper |",
             "|---" * 9 + "|"]
    for s in PROFILE_SCENARIOS:
        t = {r["scheme"]: figures(r) for r in load(out / "profiles" / f"{s}-tuned" / "results.json")}
        p = {r["scheme"]: figures(r) for r in load(out / "profiles" / f"{s}-paper" / "results.json")}
        for sch in PROFILE_SCHEMES:
            cells = [s, sch] + [f"{t[sch][c]} / {p[sch][c]}" for c in
                                ("util", "jain", "p95q", "rttq", "drops", "nacks", "sized")]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["rows", "profiles", "all"], default="all")
    ap.add_argument("--out", type=Path, default=ROOT / "lab-runs" / "deviations")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true",
                    help="keep runs whose results.json came from the same command "
                    "(runs are deterministic; rebuild icnlab means run without it)")
    ap.add_argument("--only", default="", help="row ids, e.g. C1,Q2 (rows mode)")
    a = ap.parse_args()
    if not ICNLAB.exists():
        raise SystemExit(f"{ICNLAB} missing: cargo build --release -p icn-lab")
    only = set(x for x in a.only.split(",") if x) or None
    out = a.out.resolve()
    jobs = {}
    if a.mode in ("rows", "all"):
        jobs |= rows_jobs(out, only)
    if a.mode in ("profiles", "all"):
        jobs |= profile_jobs(out)
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run, c, d, a.reuse): d for d, c in jobs.items()}
        for n, fut in enumerate(cf.as_completed(futs), 1):
            _, secs = fut.result()
            print(f"[{n}/{len(jobs)}] {futs[fut].name} {secs:.1f} s", file=sys.stderr)
    print(f"{len(jobs)} runs in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    parts = []
    if a.mode in ("rows", "all"):
        parts += [row_table(out, r) for r in ROWS
                  if not only or r[0] in only or r[0].split("-")[0] in only
                  or r[0][:2] in only]
    if a.mode in ("profiles", "all"):
        parts += [paper_pacer_table(out), profile_table(out), window_table(out)]
    text = "\n\n".join(parts) + "\n"
    (out / "tables.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
