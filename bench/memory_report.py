"""The tables of bench/memory.py: peak RSS growth side by side, and minigrad's memory profile.

`print_tables(results)` prints what `memory.run` returns; `profile_rows(profile)` turns one
profile (from `memory.py --worker profile`) into labelled rows, grouped as a step runs: the
state kept between steps, the graph's arrays after the forward, backward, the process.
"""

GOALS = {"toy": 0.5, "real": 1.0}


def print_tables(res):
    for name, e in res["configs"].items():
        c = e["config"]
        print(f"\n== memory: peak RSS growth of training, {name} configuration (d_model "
              f"{c['d_model']}, {c['nhead']} heads, {c['layers']}+{c['layers']} layers, FFN "
              f"{c['ffn']}, vocab {c['src_vocab']}/{c['tgt_vocab']}, batch {c['batch']}) ==")
        print(f"steps (src, tgt_in shapes): {e['shapes']}; each library in its own process, "
              f"alternated, median of {res['rounds']} round(s) (the allocator variant: one)")
        print(f"{'run':<28}{'peak growth MB':>15}{'ratio':>7}{'RSS end MB':>12}"
              f"{'malloc free kept MB':>21}{'mmapped MB':>12}")
        for run, d in e["rows"].items():
            m = d["malloc"] or {}
            ratio = e.get("ratio", {}).get(run)
            print(f"{run:<28}{d['growth_mb']:>15.0f}{'' if ratio is None else f'{ratio:.2f}':>7}"
                  f"{d['rss_end_mb']:>12.0f}{m.get('free_kept_mb', float('nan')):>21.0f}"
                  f"{m.get('mmapped_mb', float('nan')):>12.0f}")
        if name in GOALS and "ratio" in e:
            print(f"goal: minigrad / PyTorch <= {GOALS[name]}; measured "
                  f"{e['ratio']['minigrad']:.2f}")
        print_profile(e["profile"])
    print(f"load average {res['loadavg']:.2f} (other processes share the machine: times and "
          f"RSS of a busy machine; memory is little affected)")


def profile_rows(p, top=6):
    """The profile as (label, MB or text) rows, grouped as the step runs."""
    ev, gf, gb, st = p["events"], p["events"]["graph_forward"], p["events"]["graph_backward"], p["stages"]
    mb = lambda b: b / 2**20  # noqa: E731
    by = lambda d: sorted(d.items(), key=lambda kv: -kv[1])  # noqa: E731
    lg = ev["logits"]
    rows = [("state kept between steps", None),
            ("parameters", p["params_mb"]), ("Adam state (exp_avg, exp_avg_sq)", p["adam_state_mb"]),
            ("gradients", p["grads_mb"]),
            ("kernel scratch (matmul packing buffers, kept)", st["warm"]["kernel_scratch_mb"]),
            ("live NumPy arrays before the step", st["warm"]["numpy_mb"]),
            ("  of which the previous step's graph (the loop's `loss` holds it)",
             st["warm"]["previous_graph_mb"]),
            ("after forward: the graph's arrays", None)]
    rows += [(f"saved for backward by {op}", mb(b)) for op, b in by(gf["saved"])[:top]]
    rest = by(gf["saved"])[top:]
    if rest:
        rows.append((f"saved by {len(rest)} other op types", mb(sum(b for _, b in rest))))
    rows.append(("= all saved for backward", mb(sum(gf["saved"].values()))))
    for op, b in by(gf.get("unneeded", {})):
        rows.append((f"  of which saved by {op} but never read (other factor needs no grad)",
                     mb(b)))
    if "torch" in p:
        rows.append(("  (PyTorch, same step: saved for backward)", p["torch"]["saved_mb"]))
    rows += [(f"held only as an input tensor: outputs of {op}", mb(b))
             for op, b in by(gf["input_refs"])[:top]]
    rest = by(gf["input_refs"])[top:]
    if rest:
        rows.append((f"held only as an input tensor: {len(rest)} other op types",
                     mb(sum(b for _, b in rest))))
    rows.append(("= held only as input tensors (backward never reads them)",
                 mb(sum(gf["input_refs"].values()))))
    rows.append((f"  logits {tuple(lg['shape'])}: {gf['marks']['logits']}", lg["mb"]))
    rows.append(("live NumPy arrays after forward", ev["forward"]["numpy_mb"]))
    rows.append(("  + Python objects traced then (nodes, tensors, shapes)",
                 ev["forward"]["traced_mb"] - ev["forward"]["numpy_mb"]))
    rows.append(("peak traced during forward (the previous graph dies at `loss =`)",
                 ev["forward"]["peak_mb"]))
    bp = p["backward_peak"]
    rows.append(("backward", None))
    for i, (op, cur, pk) in enumerate(p["backward_first_ops"]):
        rows.append((f"op {i + 1} {op}: traced peak inside / after",
                     f"{pk:.1f} / {cur:.1f}"))
    rows.append((f"peak traced during backward: in {bp['op']} (op {bp['index'] + 1} of {bp['of']})",
                 bp["mb"]))
    rows.append(("live NumPy arrays after backward", ev["backward"]["numpy_mb"]))
    rows.append(("  still held by the graph (until the loop's next `loss =`)", mb(gb["total"])))
    rows.append(("peak traced during clip_grad_norm_ + Adam step", ev["step"]["peak_mb"]))
    rows.append(("kernel scratch after the step", p["kernel_scratch_mb"]))
    rows.append(("process", None))
    rows.append(("traced peak of the step (NumPy + Python objects)", p["step_traced_peak_mb"]))
    rows.append(("RSS MB: import / model / warm / forward / backward / peak",
                 f"{st['import_']['rss_mb']:.0f} / {st['model']['rss_mb']:.0f} / "
                 f"{st['warm']['rss_mb']:.0f} / {ev['forward']['rss_mb']:.0f} / "
                 f"{ev['backward']['rss_mb']:.0f} / {p['maxrss_mb']:.0f}"))
    untraced = p["maxrss_mb"] - st["import_"]["rss_mb"] - p["step_traced_peak_mb"]
    rows.append(("RSS growth not traced (Numba code, malloc's kept pages)", untraced))
    m = p["malloc"] or {}
    rows.append(("malloc at end: in use / free but kept / mmapped",
                 f"{m.get('in_use_mb', 0):.0f} / {m.get('free_kept_mb', 0):.0f} / "
                 f"{m.get('mmapped_mb', 0):.0f}"))
    rows.append((f"graph nodes {gf['nodes']}, op types {len(gf['ops'])}", ""))
    return rows


def print_profile(p):
    print(f"\n-- memory profile of one minigrad step, batch src {tuple(p['shape'][0])} tgt "
          f"{tuple(p['shape'][1])} (tracemalloc; MB of NumPy arrays unless stated) --")
    rows = profile_rows(p)
    w = max(len(r[0]) for r in rows) + 2
    for label, v in rows:
        if v is None:
            print(f"[{label}]")
        else:
            print(f"  {label:<{w}}{v:>12.1f}" if isinstance(v, float) else f"  {label:<{w}}{v:>12}")
