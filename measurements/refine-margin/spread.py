# For each case: screened/refined times of the refined shortlist (CW_DUMP), the q spread and the
# margin the cut would need to keep the refined top-k.
import subprocess, sys, os, json
adv = sys.argv[1]
cases = [l.split('|') for l in open(sys.argv[2]).read().strip().split('\n')]
env = dict(os.environ, CW_DUMP='1', CACHEWISE_CACHE_DIR=os.path.expanduser('~/.cache/cachewise'))
for name, cwd, args in cases:
    out = subprocess.run([adv, 'suggest', '--profile', '/work/main/profiles/h200.json', '--top', '3'] + args.split(),
                         cwd=cwd, env=env, capture_output=True, text=True)
    rows = [l.split() for l in out.stderr.splitlines() if l.startswith('DUMP')]
    rows = [(float(r[2]), float(r[3])) for r in rows]
    if len(rows) < 4:
        print(f'{name}: {len(rows)} refined ({out.stderr.strip().splitlines()[-1:]})'); continue
    rows.sort()
    qs = [b / a for a, b in rows]
    by_refined = sorted(range(len(rows)), key=lambda i: rows[i][1])
    res = [name, f'n={len(rows)}', f'q {min(qs):.3f}-{max(qs):.3f} ratio {max(qs)/min(qs):.3f}']
    for k in (1, 3, 5):
        if len(rows) <= k: continue
        need = max(rows[i][0] for i in by_refined[:k]) / rows[k - 1][0]
        within = lambda m: sum(1 for a, _ in rows if a < m * rows[k - 1][0])
        res.append(f'top{k}: need {need:.3f}, refined at 1.5x: {within(1.5)}')
    print(' | '.join(res), flush=True)
