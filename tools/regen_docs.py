#!/usr/bin/env python3
"""Regenerates what the docs show from the built CLI and Python module (the target `regen-docs`):

1. the fitted compute constants: `commscale fit-compute data/calibration/published_runs.csv --json`
   written into `fitted_compute_constants` (include/commscale/predict/compute.hpp), and its
   accelerator_efficiencies into the catalog entries whose efficiency is fitted
   (include/commscale/hardware/accelerators.hpp);
2. docs/accuracy.md's fit-compute and accuracy listings, its per-family table and the fitted column
   of its constants' table, and the fitted accelerator efficiencies docs/hardware.md and
   docs/model.md quote;
3. the SVGs of docs/img/ that the step model draws (accuracy, fit-step, capacity);
4. every `$ commscale ...` listing of README.md and docs/*.md (a listing marked `# excerpt` keeps
   its lines, re-read from the same place of the new output), and the output block after each
   ```python example of README.md and docs/python.md;
5. the figures README.md and docs/*.md quote in their prose, each marked with its JSON key
   (tools/doc_figures.py).

usage: regen_docs.py REPO BUILD [--constants]   (--constants: step 1 only when the constants moved;
       rebuild, then run again)
The tests catch drift (`calibrate: compute_fit` for the constants, `cli_readme` for the listings);
this writes the new text. Step 1 changes the library: rebuild before steps 2-4 see it.
"""
import glob, json, math, os, re, subprocess, sys, tempfile

root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
exe = os.path.join(build, 'bin', 'commscale')
csvp = 'data/calibration/published_runs.csv'


def set_accelerator_efficiencies(fitted):
    """The catalog's fitted efficiencies (efficiency_basis::fitted) from fit-compute's accelerator_efficiencies."""
    p = os.path.join(root, 'include/commscale/hardware/accelerators.hpp')
    s = t = open(p).read()
    for a in fitted:
        i = s.index('.name = "%s",' % a['name'])
        m = re.compile(r'\.compute_efficiency = ([0-9.]+),\s*\.compute_efficiency_basis = efficiency_basis::fitted').search(s, i)
        if not m or s.find('.name = "', i + 1, m.start()) >= 0:
            sys.exit('accelerators.hpp: %s has no fitted compute_efficiency to set' % a['name'])
        s = s[:m.start(1)] + '%.4f' % a['value'] + s[m.end(1):]
    if s != t:
        open(p, 'w').write(s)
        return True
    return False


def set_constants():
    out = json.loads(subprocess.run([exe, 'fit-compute', csvp, '--json'], cwd=root, capture_output=True, text=True,
                                    check=True).stdout)
    c = out["constants"]
    moved = set_accelerator_efficiencies(out["accelerator_efficiencies"])
    order = ["gemm_shape_efficiency", "attention_efficiency", "te_attention_efficiency", "memory_efficiency",
             "kernel_overhead_s", "moe_launch_overhead_s", "fp8_backward_slowdown"]
    p = os.path.join(root, 'include/commscale/predict/compute.hpp')
    s = open(p).read()
    i = s.index('inline constexpr compute_constants fitted_compute_constants{')
    j = s.index('};', i)
    body = 'inline constexpr compute_constants fitted_compute_constants{\n' + ',\n'.join(
        '    .%s = %s' % (k, ('%.4g' % c[k]) if c[k] < 1e-3 else ('%.4f' % c[k])) for k in order) + '}'
    if s[i:j + 1] != body:
        open(p, 'w').write(s[:i] + body + s[j + 1:])
        moved = True
    if moved:
        print('fitted_compute_constants or an accelerator\'s fitted efficiency changed: rebuild, then run again without --constants')
    return moved


def figures():
    """The SVGs the docs show that the step model draws (docs/img/)."""
    for args in (['accuracy', csvp, '--svg', 'docs/img/accuracy_published_runs.svg'],
                 ['fit-step', 'data/measurements/nemo_llama31_h100_runs.csv', '--cluster', 'dgx-h100', '--svg',
                  'docs/img/nemo_fit_step.svg'],
                 ['capacity', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tokens', '15T', '--days', '30',
                  '--price-per-gpu-hour', '2.5', '--svg', 'docs/img/capacity_llama3_70b_dgx_h100.svg']):
        subprocess.run([exe] + args, cwd=root, capture_output=True, text=True, check=True)


def accuracy_doc():
    fit = subprocess.run([exe, 'fit-compute', csvp], cwd=root, capture_output=True, text=True, check=True).stdout
    acc = subprocess.run([exe, 'accuracy', csvp], cwd=root, capture_output=True, text=True, check=True).stdout
    p = root + '/docs/accuracy.md'
    s = open(p).read()
    for head, out in (('$ commscale fit-compute data/calibration/published_runs.csv\n', fit),
                      ('$ commscale accuracy data/calibration/published_runs.csv\n', acc)):
        i = s.index('```\n' + head) + 4 + len(head); j = s.index('```\n', i)
        s = s[:i] + out.rstrip('\n') + '\n' + s[j:]
    rows = []
    summ = acc[acc.index('\nfamily '):].strip().split('\n')[1:]
    for l in summ:
        m = re.match(r'(.+?)\s{2,}(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$', l)
        fam, n, ne, mae, me, rae, re_ = m.groups()
        rows.append(f'| {fam} | {n} | {mae} | {me} | {rae} |')
    # the fitted column of the constants' table: value +- 1 sigma, to the uncertainty's first digit
    # (its first two when that digit is 1); the overheads in microseconds
    fitj = json.loads(subprocess.run([exe, 'fit-compute', csvp, '--json', '--no-cross-validation'], cwd=root,
                                     capture_output=True, text=True, check=True).stdout)
    for par in fitj['parameters']:
        scale, unit = (1e6, ' us') if par['name'].endswith('_s') else (1.0, '')
        v, u = par['value'] * scale, par['uncertainty'] * scale
        e = math.floor(math.log10(u))
        d = max(0, -e + (1 if int(u / 10 ** e) == 1 else 0))
        cell = '%.*f +- %.*f%s' % (d, v, d, u, unit)
        m = re.compile(r'^(\| `%s` \|.*\| )([^|]+?)( \|)$' % re.escape(par['name']), re.M).search(s)
        if not m:
            sys.exit('docs/accuracy.md: no row for the constant %s' % par['name'])
        s = s[:m.start(2)] + cell + s[m.end(2):]
    # the fitted accelerator efficiencies quoted in docs/hardware.md and docs/model.md
    for par in fitj['accelerator_efficiencies']:
        name = par['name'].upper()
        for doc, pattern in (('docs/hardware.md', r'(\(%s: )[0-9.]+(, fitted)'), ('docs/model.md', r'(%s, whose )[0-9.]+( is fitted)')):
            q = os.path.join(root, doc)
            t = open(q).read()
            u = re.sub(pattern % name, lambda m: m.group(1) + '%.3f' % par['value'] + m.group(2), t)
            if u != t:
                open(q, 'w').write(u)
    i = s.index('| family | runs | model: median abs. error |')
    i = s.index('\n', s.index('\n', i) + 1) + 1
    j = s.index('\n\n', i)
    s = s[:i] + '\n'.join(rows) + s[j:]
    open(p, 'w').write(s)


def listings():
    work = tempfile.mkdtemp(); os.symlink(root + '/data', work + '/data')
    files = [root + '/README.md'] + sorted(glob.glob(root + '/docs/*.md'))
    for path in files:
        lines = open(path).read().split('\n')
        out = []; i = 0; changed = []
        while i < len(lines):
            l = lines[i]; out.append(l)
            if l.rstrip() == '```' and i + 1 < len(lines) and lines[i + 1].startswith('$ commscale '):
                cmd = lines[i + 1]; out.append(cmd)
                j = i + 2
                while lines[j].rstrip() != '```': j += 1
                cwd = root if path.endswith('accuracy.md') else work
                if '   # excerpt' in cmd:
                    out.extend(lines[i + 2:j])
                    args = cmd[len('$ commscale '):cmd.index('   # excerpt')]
                    r = subprocess.run(exe + ' ' + args, shell=True, cwd=cwd, capture_output=True, text=True)
                    got = [x.rstrip() for x in r.stdout.split('\n')]
                    exp = [x.rstrip() for x in lines[i + 2:j]]
                    if not any(got[k:k + len(exp)] == exp for k in range(len(got))):
                        key = exp[0].split()[0]
                        starts = [k for k in range(len(got)) if got[k].split()[:1] == [key]]
                        if not starts: print('EXCERPT UNRESOLVED', path, i + 2, args)
                        else:
                            k = starts[0]; out[-len(exp):] = got[k:k + len(exp)]; changed.append(i + 2)
                else:
                    args = cmd[len('$ commscale '):]
                    r = subprocess.run(exe + ' ' + args, shell=True, cwd=cwd, capture_output=True, text=True)
                    if r.returncode != 0: print('FAIL', path, args, r.stderr); sys.exit(1)
                    new = [x.rstrip() for x in r.stdout.rstrip('\n').split('\n')]
                    if new != [x.rstrip() for x in lines[i + 2:j]]: changed.append(i + 2)
                    out.extend(new)
                out.append(lines[j]); i = j + 1; continue
            i += 1
        text = '\n'.join(out)
        # python examples: ```python block, then the next ``` block is its output
        pos = 0
        while True:
            c0 = text.find('```python\n', pos)
            if c0 < 0: break
            c0 += len('```python\n'); c1 = text.index('```\n', c0)
            code = text[c0:c1]
            o0 = text.index('```\n', c1 + 4) + 4; o1 = text.index('```\n', o0)
            env = dict(os.environ, PYTHONPATH=os.path.join(build, 'python'), MPLBACKEND='Agg')
            r = subprocess.run(['/usr/bin/python3', '-c', code], capture_output=True, text=True, env=env, cwd=work)
            if r.returncode == 0 and r.stdout != text[o0:o1]:
                text = text[:o0] + r.stdout + text[o1:]; changed.append('python')
            elif r.returncode != 0: print('python block failed in', path, r.stderr[-300:])
            pos = o1 + 4
        open(path, 'w').write(text)
        if changed: print(os.path.relpath(path, root), 'changed', changed)


if __name__ == '__main__':
    if '--constants' in sys.argv[3:] and set_constants():
        sys.exit(0)
    figures()
    accuracy_doc()
    listings()
    # the figures the prose quotes, marked with their JSON keys
    subprocess.run([sys.executable, os.path.join(root, 'tools', 'doc_figures.py'), 'write', root, exe], check=True)
