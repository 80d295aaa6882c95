#!/usr/bin/env python3
"""Renders docs/validation-h200.md (+ .json) from `advisor validate --all --json` cases.

Usage: scripts/device/render_validation.py SOURCE OUT_DIR
SOURCE is validate.sh's work directory (case-*.json, failed-*.txt) or a validation JSON
written before (a list of cases), which is re-rendered as it is.
"""
import datetime, glob, json, os, statistics, sys

source, out = sys.argv[1], sys.argv[2]
def numbered(pattern):
    return sorted(glob.glob(os.path.join(source, pattern)), key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))

if os.path.isdir(source):  # validate.sh's work directory: one JSON per case, a text per failure
    cases = [json.load(open(p)) for p in numbered("case-*.json")]
    failures = [open(p).read().strip() for p in numbered("failed-*.txt")]
else:  # a validation-h200.json written before: re-render it
    cases, failures = json.load(open(source)), []

def sectors_per_request(metrics, op):
    requests = metrics.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0.0)
    sectors = metrics.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0.0)
    return sectors / requests if requests else 0.0

# Derived quantities compared per profiled config: (label, unit, function of a metric map).
quantities = [
    ("L1 hit %", "pct", lambda m: m.get("l1tex__t_sector_hit_rate.pct")),
    ("L2 hit %", "pct", lambda m: m.get("lts__t_sector_hit_rate.pct")),
    ("sectors/req ld", "ratio", lambda m: sectors_per_request(m, "ld")),
    ("sectors/req st", "ratio", lambda m: sectors_per_request(m, "st")),
    ("bank conflicts", "count", lambda m: m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0.0)
                                          + m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0.0)),
    ("DRAM MB", "count", lambda m: (m.get("dram__bytes_read.sum", 0.0) + m.get("dram__bytes_write.sum", 0.0)) / 1e6),
    ("L2 sectors (M)", "count", lambda m: (m.get("lts__t_sectors_op_read.sum", 0.0) + m.get("lts__t_sectors_op_write.sum", 0.0)) / 1e6),
    # Validation files from before validate read it lack it: None leaves those configs out of its row.
    ("warp instructions (M)", "count",
     lambda m: m["smsp__inst_executed.sum"] / 1e6 if "smsp__inst_executed.sum" in m else None),
]

def fmt(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"

lines, errors, ratios, bandwidth_rows = [], {q[0]: [] for q in quantities}, [], []
# Bank conflicts split by what the model says of the pattern: where it predicts some, the
# relative error; where it predicts none, what the counter still reports as a share of the
# shared wavefronts (arbitration with other L1 traffic, which no access pattern causes).
conflict_errors, spurious_shares, launch_failures, confirmed_ratios = [], [], [], []
# Per profiled config using shared memory: is the counter's excess over the model's conflicts
# within the arbitration conflicts read in the same pass (runs that read them)?
ARBITRATION = "l1tex__data_bank_conflicts_type_arbitration.sum"
excess_within_arbitration = []  # (excess, arbitration) per config
# The pattern's own conflicts lie between (counter - arbitration) and the counter: how far the
# model's prediction is from that range, relative to the counter, where the model predicts some.
conflict_range_distances = []
large_dram_errors = []  # relative DRAM-byte errors where the kernel moves > 100 MB
device = cases[0]["device"] if cases else "?"
copy_bw = [c["copy_bandwidth_gb_per_s"] for c in cases]
lines.append("# Validation on " + device)
lines.append("")
lines.append(f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `scripts/device/validate.sh` "
             f"(`advisor validate --all --json` per case). Profile: `{cases[0]['profile'] if cases else '?'}`. "
             "Counters are read with CUPTI's Range Profiler in user replay, L2 evicted (by reads) before every pass, "
             "DRAM writes including the kernel's dirty lines written back by the eviction right after it; times are "
             f"CUDA-event medians of {cases[0]['candidates'][0]['measured']['repeats'] if cases else '?'} launches per config, "
             "rotating through input sets larger than 3x L2.")
lines.append("")
lines.append(f"Device-to-device copy bandwidth in the same run: {min(copy_bw):,.0f}-{max(copy_bw):,.0f} GB/s (bytes read + written)."
             if copy_bw else "No case was measured.")
lines.append("")
lines.extend(f"- Not measured: {failure}" for failure in failures)
if failures:
    lines.append("")
for case in cases:
    p, s = case["problem"], case["summary"]
    title = f"{p['family']} n={p['n']}" + (f" m={p['m']}" if p["m"] else "") + (f" k={p['k']}" if p["k"] else "") + f" {p['dtype']}"
    ratios.append((s["top1_over_best"], title))
    if "confirmed_top1_over_best" in s:
        confirmed_ratios.append((s["confirmed_top1_over_best"], title))
    bandwidth_rows.append((p["family"], title, s["best_bandwidth_gb_per_s"], case["copy_bandwidth_gb_per_s"], s["best_config"]))
    lines.append(f"## {title}")
    lines.append("")
    lines.append(f"{s['candidates']} configs timed. Advisor top-1 `{s['top1_config']}`: {s['top1_measured_us']:,.1f} us; "
                 f"best measured `{s['best_config']}` (predicted rank {s['best_predicted_rank']}): {s['best_measured_us']:,.1f} us; "
                 f"**top-1/best = {s['top1_over_best']:.3f}**; best = {100 * s['best_fraction_of_copy']:.1f}% of copy bandwidth. "
                 f"Checked against the CPU reference: {'all correct' if s['checked_all_correct'] else '**MISMATCH**'}."
                 + (f" Timed again {s['confirmation_rounds']} times each, alternating: top-1 {s['confirmed_top1_us']:,.1f} us, "
                    f"best {s['confirmed_best_us']:,.1f} us, **top-1/best = {s['confirmed_top1_over_best']:.3f}**."
                    if "confirmed_top1_over_best" in s else ""))
    lines.append("")
    for failure in case.get("launch_failures", []):
        launch_failures.append(title)
        lines.append(f"- Not launched (predicted rank {failure['predicted_rank']}): `{failure['config']}`: {failure['error']}")
    if case.get("launch_failures"):
        lines.append("")
    header = "| rank | config | time us pred / meas | " + " | ".join(q[0] + " pred / meas" for q in quantities) + " |"
    lines.append(header)
    lines.append("|" + "---|" * (3 + len(quantities)))
    for row in case["candidates"]:
        measured = row["measured"].get("metrics")
        if measured is None:
            continue
        predicted = row["predicted"]["metrics"]
        cells = [str(row["predicted_rank"]), f"`{row['config']}`",
                 f"{row['predicted']['time_us']:,.1f} / {row['measured']['median_us']:,.1f}"]
        for label, unit, get in quantities:
            pv, mv = get(predicted), get(measured)
            cells.append(f"{fmt(pv)} / {fmt(mv)}")
            if pv is not None and mv is not None:
                # A rate's error is in points already; counts also get a relative error.
                relative = None if unit == "pct" or not mv else abs(pv - mv) / abs(mv)
                errors[label].append((abs(pv - mv), relative))
                if label == "bank conflicts":
                    wavefronts = sum(measured.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", 0.0) for op in ("ld", "st"))
                    if pv > 0:
                        conflict_errors.append(abs(pv - mv) / max(pv, mv))
                    elif wavefronts > 0:
                        spurious_shares.append(mv / wavefronts)
                    if wavefronts > 0 and ARBITRATION in measured:
                        excess_within_arbitration.append((mv - pv, measured[ARBITRATION]))
                        if pv > 0:
                            low = max(0.0, mv - measured[ARBITRATION])
                            distance = max(0.0, low - pv, pv - mv)
                            conflict_range_distances.append(distance / max(pv, mv))
                if label == "DRAM MB" and mv > 100 and relative is not None:
                    large_dram_errors.append(relative)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")

summary = ["## Summary", "", "| quantity | MAE | mean relative error | configs |", "|---|---|---|---|"]
for label, unit, _ in quantities:
    pairs = errors[label]
    if not pairs:
        continue
    mae = statistics.mean(e for e, _ in pairs)
    relative = [r for _, r in pairs if r is not None]
    summary.append(f"| {label} | {mae:,.2f} | {100 * statistics.mean(relative):.1f}% | {len(pairs)} |" if relative
                   else f"| {label} | {mae:,.2f} | - | {len(pairs)} |")
if launch_failures:
    summary.append(f"**{len(launch_failures)} configs the model accepted did not launch** (listed under their case).")
summary.append("")
if conflict_errors:
    summary.append(f"Bank conflicts where the model predicts some ({len(conflict_errors)} configs): median relative error "
                   f"{100 * statistics.median(conflict_errors):.1f}%, worst {100 * max(conflict_errors):.1f}%.")
if spurious_shares:
    summary.append(f"Where it predicts none but the kernel uses shared memory ({len(spurious_shares)} configs): the counter's "
                   f"conflicts are a median {100 * statistics.median(spurious_shares):.2f}% (worst "
                   f"{100 * max(spurious_shares):.2f}%) of the shared wavefronts.")
if excess_within_arbitration:
    within = sum(1 for excess, arbitration in excess_within_arbitration if 0 <= excess <= arbitration)
    below = sum(1 for excess, _ in excess_within_arbitration if excess < 0)
    summary.append(f"The counter's conflicts minus the model's, against the L1 data-bank arbitration conflicts read in "
                   f"the same pass (`{ARBITRATION}`, all clients): between 0 and that count in {within} of "
                   f"{len(excess_within_arbitration)} configs using shared memory"
                   + (f", below the model's in {below}" if below else "") + ".")
if conflict_range_distances:
    inside = sum(1 for d in conflict_range_distances if d == 0)
    summary.append(f"The pattern's own conflicts therefore lie between the counter minus those arbitration conflicts "
                   f"and the counter (with one block per SM there is no arbitration and the counter equals the model: "
                   f"docs/cupti.md). Where the model predicts some ({len(conflict_range_distances)} configs), "
                   f"its prediction "
                   f"is inside that range in {inside}; its distance from the range is a median "
                   f"{100 * statistics.median(conflict_range_distances):.1f}%, worst "
                   f"{100 * max(conflict_range_distances):.1f}% of the counter.")
if large_dram_errors:
    summary.append(f"DRAM bytes where the kernel moves > 100 MB ({len(large_dram_errors)} configs): median relative error "
                   f"{100 * statistics.median(large_dram_errors):.1f}%, worst {100 * max(large_dram_errors):.1f}%.")
summary.append("")
if ratios:
    values = [r for r, _ in ratios]
    worst = max(ratios)
    summary.append(f"Advisor top-1 measured time / best measured time in the exhaustive sweep: median "
                   f"**{statistics.median(values):.3f}**, worst **{worst[0]:.3f}** ({worst[1]}).")
    if confirmed_ratios:
        confirmed_values = [r for r, _ in confirmed_ratios]
        confirmed_worst = max(confirmed_ratios)
        summary.append(f"The same two configs per case timed again, alternating, {cases[0]['summary']['confirmation_rounds']} "
                       f"times each (the sweep's best is the fastest of many noisy medians, biased low): median "
                       f"**{statistics.median(confirmed_values):.3f}**, worst **{confirmed_worst[0]:.3f}** "
                       f"({confirmed_worst[1]}); per case: "
                       + ", ".join(f"{title} {r:.3f}" for r, title in confirmed_ratios) + ".")
    summary.append("")
summary.append("| family | case | best measured GB/s | copy GB/s | % of copy | best config |")
summary.append("|---|---|---|---|---|---|")
for family, title, best, copy, config in bandwidth_rows:
    if family in ("transpose", "stencil2d", "stencil3d", "copy"):
        summary.append(f"| {family} | {title} | {best:,.0f} | {copy:,.0f} | {100 * best / copy:.1f}% | `{config}` |")
summary.append("")
summary.append("Target: best transpose/stencil/copy >= 90% of device-to-device copy bandwidth.")
summary.append("")

head = 6 + (len(failures) + 1 if failures else 0)
# The replayed figures of every recorded run lead the report (docs/calibration.md): this run's
# own numbers below are in-sample for the calibration chosen on it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cachewise_eval.render_held_out import DEFAULT as FIGURES, held_out_section  # noqa: E402
held_out = held_out_section(json.load(open(FIGURES))) if os.path.exists(FIGURES) else []
text = "\n".join(lines[:head] + held_out + summary + lines[head:]) + "\n"
open(os.path.join(out, "validation-h200.md"), "w").write(text)
# The committed JSON keeps what the report and its readers (rescore.py, `advisor tune
# --convergence-from`) use: every config's measurement and predicted time, and the predicted
# counters only where counters were measured to compare them with (5.3 MB -> 1.2 MB).
for case in cases:
    for row in case["candidates"]:
        if "metrics" not in row.get("measured", {}):
            row["predicted"].pop("metrics", None)
json.dump(cases, open(os.path.join(out, "validation-h200.json"), "w"), separators=(",", ":"))
print("\n".join(summary))
